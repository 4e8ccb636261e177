import { WebHook } from './web-hook.entity';
import { SystemHookRecordResponse, SystemHookResponse } from './system-hooks.responses';

/** The spec's list/create view (`id, url, created_at`), plus the switches and delivery health (additive). */
export function presentSystemHook(h: WebHook): SystemHookResponse {
  return {
    id: h.id,
    url: h.url,
    created_at: h.createdAt,
    push_events: h.pushEvents,
    tag_push_events: h.tagPushEvents,
    enable_ssl_verification: h.enableSslVerification,
    recent_failures: h.recentFailures,
    last_status: h.lastStatus,
    last_error: h.lastError,
    last_failure_at: h.lastFailureAt,
    disabled: h.disabledAt !== null,
  };
}

/** DELETE answers GitLab's raw row (the token is never shown: `null`, or `"[FILTERED]"` when one is set); `null` when absent. */
export function presentDeletedSystemHook(h: WebHook | null): SystemHookRecordResponse | null {
  if (!h) return null;
  return {
    id: h.id,
    url: h.url,
    project_id: null,
    created_at: h.createdAt,
    updated_at: h.updatedAt,
    type: 'SystemHook',
    service_id: null,
    push_events: h.pushEvents,
    issues_events: h.issuesEvents,
    merge_requests_events: h.mergeRequestsEvents,
    tag_push_events: h.tagPushEvents,
    note_events: h.noteEvents,
    enable_ssl_verification: h.enableSslVerification,
    build_events: h.buildEvents,
    wiki_page_events: h.wikiPageEvents,
    token: h.tokenEncrypted ? '[FILTERED]' : null,
  };
}
