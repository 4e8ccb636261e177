import { Injectable } from '@nestjs/common';
import { Tx } from '../database/transactions';
import { QueueService } from '../queue/queue.service';
import { DomainEventCatalogue, GroupSnapshot, KeySnapshot, ProjectSnapshot, UserSnapshot } from './domain-event-catalogue';
export { reviveDates } from './domain-events';

/** The queue of the hook outbox: one job per change that hooks hear of, fanned out by the hooks area. */
export const HOOK_EVENT_QUEUE = 'hooks.event';

/** The events hooks hear of, as the outbox carries them (push: the push data GitLab's hooks send). */
export type HookEventMap = Omit<Pick<DomainEventCatalogue, HookEventName>, 'push.received'> & {
  'push.received': { projectId: number; userId: number; data: Record<string, unknown>[] };
};

export type HookEventName =
  | 'push.received'
  | 'project.created'
  | 'project.destroyed'
  | 'project.renamed'
  | 'project.transferred'
  | 'user.created'
  | 'user.destroyed'
  | 'key.created'
  | 'key.destroyed'
  | 'group.created'
  | 'group.destroyed'
  | 'project_member.added'
  | 'project_member.removed'
  | 'group_member.added'
  | 'group_member.removed'
  | 'issue.changed'
  | 'note.created'
  | 'merge_request.changed'
  | 'build.changed';

/** One outbox job: the event, its payload (snapshots of what was, for destroy events) and when it happened. */
export interface HookEventJob<K extends HookEventName = HookEventName> {
  name: K;
  payload: HookEventMap[K];
  /** ISO time of the change. */
  at: string;
}

/**
 * The outbox of hook events. The service that makes a change calls `add` with the change's own
 * transaction: the job is written by it, so a rolled-back change enqueues nothing and a committed one
 * is delivered even if the process dies right after the commit. Workers fan it out to the hooks.
 */
@Injectable()
export class HookOutbox {
  constructor(private readonly queue: QueueService) {}

  async add<K extends HookEventName>(tx: Tx, name: K, payload: HookEventMap[K]): Promise<void> {
    const job: HookEventJob<K> = { name, payload, at: new Date().toISOString() };
    await this.queue.send(HOOK_EVENT_QUEUE, job, { tx });
  }
}

// Snapshots: only the fields the payloads need go into a job (never tokens or digests).

export function projectSnapshot(p: ProjectSnapshot): ProjectSnapshot {
  return { id: p.id, name: p.name, path: p.path, namespaceId: p.namespaceId, visibilityLevel: p.visibilityLevel, createdAt: p.createdAt, updatedAt: p.updatedAt };
}

export function userSnapshot(u: UserSnapshot): UserSnapshot {
  return { id: u.id, name: u.name, username: u.username, email: u.email, createdAt: u.createdAt, updatedAt: u.updatedAt };
}

export function keySnapshot(k: KeySnapshot): KeySnapshot {
  return { id: k.id, key: k.key, userId: k.userId, createdAt: k.createdAt, updatedAt: k.updatedAt };
}

export function groupSnapshot(g: GroupSnapshot): GroupSnapshot {
  return { id: g.id, name: g.name, path: g.path, ownerId: g.ownerId, createdAt: g.createdAt, updatedAt: g.updatedAt };
}
