import { Injectable, OnModuleInit } from '@nestjs/common';
import { ProjectSnapshot } from '../domain-events/domain-events';
import { HookEventJob, HookEventMap, HookEventName } from './hook-outbox';
import { HookDataRepository } from './hook-data.repository';
import { HookOutboxWorker, PlannedDelivery } from './hook-outbox.worker';
import { systemPushPayload } from './hook-payloads';
import { HooksRepository } from './hooks.repository';
import { HookSwitch } from './web-hook.entity';
import { groupEvent, groupMemberEvent, keyEvent, projectEvent, SystemProject, teamEvent, userEvent } from './system-hook-payloads';

/**
 * System hooks' side of the hook outbox: every system hook gets the model events (projects, users,
 * keys, groups, memberships); push and tag push go to those with `push_events` / `tag_push_events`,
 * without commits. All as `X-Gitlab-Event: System Hook`.
 */
@Injectable()
export class SystemHookEventsService implements OnModuleInit {
  constructor(
    private readonly worker: HookOutboxWorker,
    private readonly hooks: HooksRepository,
    private readonly data: HookDataRepository,
  ) {}

  onModuleInit(): void {
    this.worker.plan((e) => this.plan(e));
  }

  private plan(e: HookEventJob): Promise<PlannedDelivery[]> {
    const p = <K extends HookEventName>(_name: K) => e.payload as HookEventMap[K];
    const at = new Date(e.at);
    switch (e.name) {
      case 'push.received':
        return this.onPush(p('push.received'));
      case 'project.created':
        return this.project('project_create', p('project.created').project);
      case 'project.destroyed':
        return this.project('project_destroy', p('project.destroyed').project);
      case 'project.renamed':
        return this.project('project_rename', p('project.renamed').project, p('project.renamed').oldPathWithNamespace);
      case 'project.transferred':
        return this.project('project_transfer', p('project.transferred').project, p('project.transferred').oldPathWithNamespace);
      case 'user.created':
        return this.send('user_create', userEvent('user_create', p('user.created').user));
      case 'user.destroyed':
        return this.send('user_destroy', userEvent('user_destroy', p('user.destroyed').user));
      case 'key.created':
        return this.key('key_create', p('key.created').key);
      case 'key.destroyed':
        return this.key('key_destroy', p('key.destroyed').key);
      case 'group.created':
        return this.group('group_create', p('group.created').group);
      case 'group.destroyed':
        return this.group('group_destroy', p('group.destroyed').group);
      case 'project_member.added':
        return this.team('user_add_to_team', p('project_member.added'), at);
      case 'project_member.removed':
        return this.team('user_remove_from_team', p('project_member.removed'), at);
      case 'group_member.added':
        return this.groupMember('user_add_to_group', p('group_member.added'), at);
      case 'group_member.removed':
        return this.groupMember('user_remove_from_group', p('group_member.removed'), at);
      default:
        return Promise.resolve([]);
    }
  }

  /** Looks the system hooks up first (one query), and builds the payload only when some exist. */
  private async send(trigger: string, payload: unknown, on?: HookSwitch): Promise<PlannedDelivery[]> {
    const hooks = await this.hooks.subscribers('system', on);
    if (hooks.length === 0) return [];
    const data = typeof payload === 'function' ? await (payload as () => Promise<unknown>)() : payload;
    return data === undefined ? [] : [{ hooks, event: 'System Hook', trigger, payload: data }];
  }

  private async onPush(e: HookEventMap['push.received']): Promise<PlannedDelivery[]> {
    const out: PlannedDelivery[] = [];
    for (const data of e.data) {
      const tag = data.object_kind === 'tag_push';
      out.push(...(await this.send(tag ? 'tag_push' : 'push', systemPushPayload(data), tag ? 'tagPushEvents' : 'pushEvents')));
    }
    return out;
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

  private project(event: 'project_create' | 'project_destroy' | 'project_rename' | 'project_transfer', p: ProjectSnapshot, old?: string) {
    return this.send(event, async () => {
      const { project, owner } = await this.systemProject(p);
      return projectEvent(event, project, owner, old);
    });
  }

  private key(event: 'key_create' | 'key_destroy', k: HookEventMap['key.created']['key']): Promise<PlannedDelivery[]> {
    return this.send(event, async () => {
      const user = k.userId ? (await this.data.users([k.userId])).get(k.userId) : undefined;
      return keyEvent(event, k, user?.username ?? null);
    });
  }

  private group(event: 'group_create' | 'group_destroy', g: HookEventMap['group.created']['group']): Promise<PlannedDelivery[]> {
    return this.send(event, async () => {
      const owner = g.ownerId ? ((await this.data.users([g.ownerId])).get(g.ownerId) ?? null) : null;
      return groupEvent(event, g, owner);
    });
  }

  private team(event: 'user_add_to_team' | 'user_remove_from_team', e: HookEventMap['project_member.added'], at: Date): Promise<PlannedDelivery[]> {
    return this.send(event, async () => {
      const row = await this.data.project(e.projectId);
      const user = (await this.data.users([e.userId])).get(e.userId);
      if (!row || !user) return undefined;
      const project: SystemProject = { ...row, namespacePath: row.namespacePath };
      return teamEvent(event, project, user, e.accessLevel, at);
    });
  }

  private groupMember(event: 'user_add_to_group' | 'user_remove_from_group', e: HookEventMap['group_member.added'], at: Date): Promise<PlannedDelivery[]> {
    return this.send(event, async () => {
      const group = await this.data.namespace(e.groupId);
      const user = (await this.data.users([e.userId])).get(e.userId);
      if (!group || !user) return undefined;
      return groupMemberEvent(event, group, user, e.accessLevel, at);
    });
  }
}
