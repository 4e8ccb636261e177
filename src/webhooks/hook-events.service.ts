import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../config/config';
import { HookEventJob, HookEventMap } from './hook-outbox';
import { HookDataRepository } from './hook-data.repository';
import { HookEventHeader } from './hook-delivery.service';
import { HookOutboxWorker, PlannedDelivery } from './hook-outbox.worker';
import { buildHookPayload, issueHookAttrs, issueHookPayload, mergeRequestHookPayload, noteHookPayload } from './hook-payloads';
import { HooksRepository } from './hooks.repository';
import { HookSwitch } from './web-hook.entity';

/**
 * Project webhooks' side of the hook outbox: push, tag push, issue, note, merge request and build
 * events become `Push Hook`, `Tag Push Hook`, `Issue Hook`, `Note Hook`, `Merge Request Hook` and
 * `Build Hook` deliveries to the project's hooks with the matching switch (one job per hook).
 *
 * A confidential issue is kept out of hooks (spec-decisions.md #37): GitLab 8.17 sends its events only
 * to hooks with `confidential_issues_events` (app/services/issues/base_service.rb's
 * `:confidential_issue_hooks`), a switch its API cannot set (false for every hook made through it), so
 * no `Issue Hook` for it; and no `Note Hook` for a comment on it either (8.17 still sent those, with the
 * issue's title and description; GitLab 11 gave them their own `confidential_note_events` switch).
 * Whether it is confidential is read when the deliveries are planned, after the change committed.
 */
@Injectable()
export class HookEventsService implements OnModuleInit {
  constructor(
    private readonly worker: HookOutboxWorker,
    private readonly hooks: HooksRepository,
    private readonly data: HookDataRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onModuleInit(): void {
    this.worker.plan((e) => this.plan(e));
  }

  private async plan(e: HookEventJob): Promise<PlannedDelivery[]> {
    switch (e.name) {
      case 'push.received':
        return this.onPush(e.payload as HookEventMap['push.received']);
      case 'issue.changed':
        return this.onIssue(e.payload as HookEventMap['issue.changed']);
      case 'note.created':
        return this.onNote(e.payload as HookEventMap['note.created']);
      case 'merge_request.changed':
        return this.onMergeRequest(e.payload as HookEventMap['merge_request.changed']);
      case 'build.changed':
        return this.onBuild(e.payload as HookEventMap['build.changed']);
      default:
        return [];
    }
  }

  private async fanOut(projectId: number, on: HookSwitch, header: HookEventHeader, trigger: string, payload: unknown): Promise<PlannedDelivery[]> {
    const hooks = await this.hooks.subscribers({ projectId }, on);
    return hooks.length ? [{ hooks, event: header, trigger, payload }] : [];
  }

  private async onPush(e: HookEventMap['push.received']): Promise<PlannedDelivery[]> {
    const out: PlannedDelivery[] = [];
    for (const data of e.data) {
      const tag = data.object_kind === 'tag_push';
      out.push(...(await this.fanOut(e.projectId, tag ? 'tagPushEvents' : 'pushEvents', tag ? 'Tag Push Hook' : 'Push Hook', tag ? 'tag_push' : 'push', data)));
    }
    return out;
  }

  private async onIssue(e: HookEventMap['issue.changed']): Promise<PlannedDelivery[]> {
    const issue = await this.data.issue(e.issueId);
    if (!issue || issue.confidential) return [];
    const hooks = await this.hooks.subscribers({ projectId: issue.projectId }, 'issuesEvents');
    if (hooks.length === 0) return [];
    const project = await this.data.project(issue.projectId);
    const users = await this.data.users([e.userId, issue.assigneeId]);
    const user = users.get(e.userId);
    if (!project || !user) return [];
    const payload = issueHookPayload({
      issue,
      project,
      user,
      assignee: issue.assigneeId ? (users.get(issue.assigneeId) ?? null) : null,
      action: e.action,
      externalUrl: this.config.externalUrl,
      sshUrlPrefix: this.config.sshUrlPrefix,
    });
    return [{ hooks, event: 'Issue Hook', trigger: 'issue', payload }];
  }

  private async onNote(e: HookEventMap['note.created']): Promise<PlannedDelivery[]> {
    const note = await this.data.note(e.noteId);
    if (!note) return [];
    const hooks = await this.hooks.subscribers({ projectId: note.projectId }, 'noteEvents');
    if (hooks.length === 0) return [];
    const project = await this.data.project(note.projectId);
    const user = (await this.data.users([e.userId])).get(e.userId);
    if (!project || !user) return [];
    let noteable: Parameters<typeof noteHookPayload>[0]['noteable'] = null;
    if (note.noteableType === 'Issue') {
      const issue = await this.data.issue(note.noteableId);
      if (issue?.confidential) return [];
      if (issue) noteable = { kind: 'issue', attrs: issueHookAttrs(issue, project, this.config.externalUrl), ref: String(issue.iid) };
    } else if (note.noteableType === 'Snippet' || note.noteableType === 'ProjectSnippet') {
      const snippet = await this.data.snippet(note.noteableId);
      if (snippet) noteable = { kind: 'snippet', attrs: snippet, ref: String(snippet.id) };
    }
    const payload = noteHookPayload({ note, project, user, noteable, externalUrl: this.config.externalUrl, sshUrlPrefix: this.config.sshUrlPrefix });
    return [{ hooks, event: 'Note Hook', trigger: 'note', payload }];
  }

  private async onMergeRequest(e: HookEventMap['merge_request.changed']): Promise<PlannedDelivery[]> {
    const hooks = await this.hooks.subscribers({ projectId: e.projectId }, 'mergeRequestsEvents');
    if (hooks.length === 0) return [];
    const project = await this.data.project(e.projectId);
    const assigneeId = typeof e.attributes.assignee_id === 'number' ? e.attributes.assignee_id : null;
    const users = await this.data.users([e.userId, assigneeId]);
    const user = users.get(e.userId);
    if (!project || !user) return [];
    const payload = mergeRequestHookPayload({
      attributes: e.attributes,
      action: e.action,
      project,
      user,
      assignee: assigneeId ? (users.get(assigneeId) ?? null) : null,
      externalUrl: this.config.externalUrl,
      sshUrlPrefix: this.config.sshUrlPrefix,
    });
    return [{ hooks, event: 'Merge Request Hook', trigger: 'merge_request', payload }];
  }

  private async onBuild(e: HookEventMap['build.changed']): Promise<PlannedDelivery[]> {
    const hooks = await this.hooks.subscribers({ projectId: e.projectId }, 'buildEvents');
    if (hooks.length === 0) return [];
    const project = await this.data.project(e.projectId);
    if (!project) return [];
    const user = e.build.userId ? ((await this.data.users([e.build.userId])).get(e.build.userId) ?? null) : null;
    const payload = buildHookPayload({ build: e.build, project, user, externalUrl: this.config.externalUrl, sshUrlPrefix: this.config.sshUrlPrefix });
    return [{ hooks, event: 'Build Hook', trigger: 'build', payload }];
  }
}
