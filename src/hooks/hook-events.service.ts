import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { Logger } from '../common/http/logger';
import { APP_CONFIG, AppConfig } from '../config/config';
import { DomainEventMap, DomainEvents } from '../events/domain-events';
import { HookDataRepository } from './hook-data.repository';
import { HookDeliveryService, HookEventHeader } from './hook-delivery.service';
import { buildHookPayload, issueHookAttrs, issueHookPayload, mergeRequestHookPayload, noteHookPayload } from './hook-payloads';
import { HooksRepository } from './hooks.repository';
import { HookSwitch } from './web-hook.entity';

/**
 * Project webhooks' side of the domain events: push, tag push, issue, note, merge request and build
 * events become `Push Hook`, `Tag Push Hook`, `Issue Hook`, `Note Hook`, `Merge Request Hook` and
 * `Build Hook` deliveries to the project's hooks with the matching switch (one job per hook).
 */
@Injectable()
export class HookEventsService implements OnModuleInit {
  constructor(
    private readonly events: DomainEvents,
    private readonly hooks: HooksRepository,
    private readonly data: HookDataRepository,
    private readonly delivery: HookDeliveryService,
    private readonly logger: Logger,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onModuleInit(): void {
    this.events.on('push.received', (e) => this.guard('push', () => this.onPush(e)));
    this.events.on('issue.changed', (e) => this.guard('issue', () => this.onIssue(e)));
    this.events.on('note.created', (e) => this.guard('note', () => this.onNote(e)));
    this.events.on('merge_request.changed', (e) => this.guard('merge_request', () => this.onMergeRequest(e)));
    this.events.on('build.changed', (e) => this.guard('build', () => this.onBuild(e)));
  }

  private async guard(kind: string, work: () => Promise<void>): Promise<void> {
    try {
      await work();
    } catch (e) {
      this.logger.error('project hook fan-out failed', { kind, error: e instanceof Error ? e.message : String(e) });
    }
  }

  private async fanOut(projectId: number, on: HookSwitch, header: HookEventHeader, trigger: string, payload: unknown): Promise<void> {
    const hooks = await this.hooks.subscribers({ projectId }, on);
    await this.delivery.enqueue(hooks, header, trigger, payload);
  }

  private async onPush(e: DomainEventMap['push.received']): Promise<void> {
    if (!e.data) return;
    for (const data of e.data) {
      const tag = data.object_kind === 'tag_push';
      await this.fanOut(e.projectId, tag ? 'tagPushEvents' : 'pushEvents', tag ? 'Tag Push Hook' : 'Push Hook', tag ? 'tag_push' : 'push', data);
    }
  }

  private async onIssue(e: DomainEventMap['issue.changed']): Promise<void> {
    const issue = await this.data.issue(e.issueId);
    if (!issue) return;
    const hooks = await this.hooks.subscribers({ projectId: issue.projectId }, 'issuesEvents');
    if (hooks.length === 0) return;
    const project = await this.data.project(issue.projectId);
    const users = await this.data.users([e.userId, issue.assigneeId]);
    const user = users.get(e.userId);
    if (!project || !user) return;
    const payload = issueHookPayload({
      issue,
      project,
      user,
      assignee: issue.assigneeId ? users.get(issue.assigneeId) ?? null : null,
      action: e.action,
      externalUrl: this.config.externalUrl,
    });
    await this.delivery.enqueue(hooks, 'Issue Hook', 'issue', payload);
  }

  private async onNote(e: DomainEventMap['note.created']): Promise<void> {
    const note = await this.data.note(e.noteId);
    if (!note) return;
    const hooks = await this.hooks.subscribers({ projectId: note.projectId }, 'noteEvents');
    if (hooks.length === 0) return;
    const project = await this.data.project(note.projectId);
    const user = (await this.data.users([e.userId])).get(e.userId);
    if (!project || !user) return;
    let noteable: Parameters<typeof noteHookPayload>[0]['noteable'] = null;
    if (note.noteableType === 'Issue') {
      const issue = await this.data.issue(note.noteableId);
      if (issue) noteable = { kind: 'issue', attrs: issueHookAttrs(issue, project, this.config.externalUrl), ref: String(issue.iid) };
    } else if (note.noteableType === 'Snippet' || note.noteableType === 'ProjectSnippet') {
      const snippet = await this.data.snippet(note.noteableId);
      if (snippet) noteable = { kind: 'snippet', attrs: snippet, ref: String(snippet.id) };
    }
    const payload = noteHookPayload({ note, project, user, noteable, externalUrl: this.config.externalUrl });
    await this.delivery.enqueue(hooks, 'Note Hook', 'note', payload);
  }

  private async onMergeRequest(e: DomainEventMap['merge_request.changed']): Promise<void> {
    const hooks = await this.hooks.subscribers({ projectId: e.projectId }, 'mergeRequestsEvents');
    if (hooks.length === 0) return;
    const project = await this.data.project(e.projectId);
    const assigneeId = typeof e.attributes.assignee_id === 'number' ? e.attributes.assignee_id : null;
    const users = await this.data.users([e.userId, assigneeId]);
    const user = users.get(e.userId);
    if (!project || !user) return;
    const payload = mergeRequestHookPayload({
      attributes: e.attributes,
      action: e.action,
      project,
      user,
      assignee: assigneeId ? users.get(assigneeId) ?? null : null,
      externalUrl: this.config.externalUrl,
    });
    await this.delivery.enqueue(hooks, 'Merge Request Hook', 'merge_request', payload);
  }

  private async onBuild(e: DomainEventMap['build.changed']): Promise<void> {
    const hooks = await this.hooks.subscribers({ projectId: e.projectId }, 'buildEvents');
    if (hooks.length === 0) return;
    const project = await this.data.project(e.projectId);
    if (!project) return;
    const user = e.build.userId ? (await this.data.users([e.build.userId])).get(e.build.userId) ?? null : null;
    const payload = buildHookPayload({ build: e.build, project, user, externalUrl: this.config.externalUrl });
    await this.delivery.enqueue(hooks, 'Build Hook', 'build', payload);
  }
}
