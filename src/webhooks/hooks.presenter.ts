import { WebHook, WebHookLog } from './web-hook.entity';
import { HookDeliveryResponse, ProjectHookResponse } from './hooks.responses';

/** Delivery health of a hook (additive fields; GitLab 8.8 had none). */
function health(h: WebHook) {
  return {
    recent_failures: h.recentFailures,
    last_status: h.lastStatus,
    last_error: h.lastError,
    last_failure_at: h.lastFailureAt,
    disabled: h.disabledAt !== null,
    disabled_at: h.disabledAt,
  };
}

/** GitLab 8.8's ProjectHook entity (the token is never shown), plus delivery health. */
export function presentProjectHook(h: WebHook): ProjectHookResponse {
  return {
    id: h.id,
    url: h.url,
    created_at: h.createdAt,
    project_id: h.projectId as number, // a project hook always has its project (system hooks share the row type)
    push_events: h.pushEvents,
    issues_events: h.issuesEvents,
    merge_requests_events: h.mergeRequestsEvents,
    tag_push_events: h.tagPushEvents,
    note_events: h.noteEvents,
    build_events: h.buildEvents,
    enable_ssl_verification: h.enableSslVerification,
    ...health(h),
  };
}

/** One delivery of the hook's log. */
export function presentDelivery(l: WebHookLog): HookDeliveryResponse {
  return {
    id: Number(l.id),
    trigger: l.trigger,
    event: l.event,
    attempt: l.attempt,
    response_status: l.responseStatus,
    execution_duration: l.executionDuration,
    response_body: l.responseBody,
    error: l.error,
    created_at: l.createdAt,
  };
}
