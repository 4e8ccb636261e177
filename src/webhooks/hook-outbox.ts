import { DomainEventCatalogue } from '../domain-events/domain-event-catalogue';
export { reviveDates } from '../domain-events/domain-events';

/**
 * The webhooks' outbox: every event hooks hear of is a domain event (emitted by the service that made
 * the change, in its transaction) with one durable handler, HookOutboxWorker.run, whose queue is
 * `hooks.event`: one job per change, fanned out by the hooks area to the project and system hooks.
 */
export const HOOK_EVENT_QUEUE = 'hooks.event';

/** The events hooks hear of, as the outbox carries them (push: the push data GitLab's hooks send). */
export type HookEventMap = Omit<Pick<DomainEventCatalogue, HookEventName>, 'push.received'> & {
  'push.received': { projectId: number; userId: number; data: Record<string, unknown>[] };
};

export const HOOK_EVENT_NAMES = [
  'push.received',
  'project.created',
  'project.destroyed',
  'project.renamed',
  'project.transferred',
  'user.created',
  'user.destroyed',
  'key.created',
  'key.destroyed',
  'group.created',
  'group.destroyed',
  'project_member.added',
  'project_member.removed',
  'group_member.added',
  'group_member.removed',
  'issue.changed',
  'note.created',
  'merge_request.changed',
  'build.changed',
] as const;

export type HookEventName = (typeof HOOK_EVENT_NAMES)[number];

/** One outbox job: the event, its payload (snapshots of what was, for destroy events) and when it happened. */
export interface HookEventJob<K extends HookEventName = HookEventName> {
  name: K;
  payload: HookEventMap[K];
  /** ISO time of the change. */
  at: string;
}
