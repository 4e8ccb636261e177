import { Injectable, OnModuleInit } from '@nestjs/common';
import { Logger } from '../common/http/logger';
import { DomainEventMap, DomainEvents, ProjectSnapshot } from '../events/domain-events';
import { HookDataRepository } from '../hooks/hook-data.repository';
import { HookDeliveryService } from '../hooks/hook-delivery.service';
import { systemPushPayload } from '../hooks/hook-payloads';
import { HooksRepository } from '../hooks/hooks.repository';
import { HookSwitch } from '../hooks/web-hook.entity';
import { groupEvent, groupMemberEvent, keyEvent, projectEvent, SystemProject, teamEvent, userEvent } from './system-hook-payloads';

/**
 * System hooks' side of the domain events: every system hook gets the model events (projects, users,
 * keys, groups, memberships); push and tag push go to those with `push_events` / `tag_push_events`,
 * without commits. All as `X-Gitlab-Event: System Hook`.
 */
@Injectable()
export class SystemHookEventsService implements OnModuleInit {
  constructor(
    private readonly events: DomainEvents,
    private readonly hooks: HooksRepository,
    private readonly data: HookDataRepository,
    private readonly delivery: HookDeliveryService,
    private readonly logger: Logger,
  ) {}

  onModuleInit(): void {
    const on = <K extends keyof DomainEventMap>(name: K, fn: (e: DomainEventMap[K]) => Promise<void>) =>
      this.events.on(name, (e) => this.guard(name, () => fn(e)));
    on('push.received', (e) => this.onPush(e));
    on('project.created', (e) => this.project('project_create', e.project));
    on('project.destroyed', (e) => this.project('project_destroy', e.project));
    on('project.renamed', (e) => this.project('project_rename', e.project, e.oldPathWithNamespace));
    on('project.transferred', (e) => this.project('project_transfer', e.project, e.oldPathWithNamespace));
    on('user.created', (e) => this.send('user_create', userEvent('user_create', e.user)));
    on('user.destroyed', (e) => this.send('user_destroy', userEvent('user_destroy', e.user)));
    on('key.created', (e) => this.key('key_create', e.key));
    on('key.destroyed', (e) => this.key('key_destroy', e.key));
    on('group.created', (e) => this.group('group_create', e.group));
    on('group.destroyed', (e) => this.group('group_destroy', e.group));
    on('project_member.added', (e) => this.team('user_add_to_team', e));
    on('project_member.removed', (e) => this.team('user_remove_from_team', e));
    on('group_member.added', (e) => this.groupMember('user_add_to_group', e));
    on('group_member.removed', (e) => this.groupMember('user_remove_from_group', e));
  }

  private async guard(kind: string, work: () => Promise<void>): Promise<void> {
    try {
      await work();
    } catch (e) {
      this.logger.error('system hook fan-out failed', { kind, error: e instanceof Error ? e.message : String(e) });
    }
  }

  /** Looks the system hooks up first (one query), and builds the payload only when some exist. */
  private async send(trigger: string, payload: unknown | (() => Promise<unknown>), on?: HookSwitch): Promise<void> {
    const hooks = await this.hooks.subscribers('system', on);
    if (hooks.length === 0) return;
    const data = typeof payload === 'function' ? await (payload as () => Promise<unknown>)() : payload;
    if (data !== undefined) await this.delivery.enqueue(hooks, 'System Hook', trigger, data);
  }

  private async onPush(e: DomainEventMap['push.received']): Promise<void> {
    for (const data of e.data ?? []) {
      const tag = data.object_kind === 'tag_push';
      await this.send(tag ? 'tag_push' : 'push', systemPushPayload(data), tag ? 'tagPushEvents' : 'pushEvents');
    }
  }

  private async systemProject(p: ProjectSnapshot): Promise<{ project: SystemProject; owner: { name: string; email: string | null } }> {
    const ns = await this.data.namespace(p.namespaceId);
    let owner = { name: ns?.name ?? '', email: null as string | null };
    if (ns?.kind === 'user' && ns.ownerId) {
      const u = (await this.data.users([ns.ownerId])).get(ns.ownerId);
      if (u) owner = { name: u.name, email: u.email };
    }
    return { project: { ...p, namespacePath: ns?.path ?? '' }, owner };
  }

  private async project(event: 'project_create' | 'project_destroy' | 'project_rename' | 'project_transfer', p: ProjectSnapshot, old?: string) {
    await this.send(event, async () => {
      const { project, owner } = await this.systemProject(p);
      return projectEvent(event, project, owner, old);
    });
  }

  private async key(event: 'key_create' | 'key_destroy', k: DomainEventMap['key.created']['key']): Promise<void> {
    await this.send(event, async () => {
      const user = k.userId ? (await this.data.users([k.userId])).get(k.userId) : undefined;
      return keyEvent(event, k, user?.username ?? null);
    });
  }

  private async group(event: 'group_create' | 'group_destroy', g: DomainEventMap['group.created']['group']): Promise<void> {
    await this.send(event, async () => {
      const owner = g.ownerId ? (await this.data.users([g.ownerId])).get(g.ownerId) ?? null : null;
      return groupEvent(event, g, owner);
    });
  }

  private async team(event: 'user_add_to_team' | 'user_remove_from_team', e: DomainEventMap['project_member.added']): Promise<void> {
    const at = new Date();
    await this.send(event, async () => {
      const row = await this.data.project(e.projectId);
      const user = (await this.data.users([e.userId])).get(e.userId);
      if (!row || !user) return undefined;
      const project: SystemProject = { ...row, namespacePath: row.namespacePath };
      return teamEvent(event, project, user, e.accessLevel, at);
    });
  }

  private async groupMember(event: 'user_add_to_group' | 'user_remove_from_group', e: DomainEventMap['group_member.added']): Promise<void> {
    const at = new Date();
    await this.send(event, async () => {
      const group = await this.data.namespace(e.groupId);
      const user = (await this.data.users([e.userId])).get(e.userId);
      if (!group || !user) return undefined;
      return groupMemberEvent(event, group, user, e.accessLevel, at);
    });
  }
}
