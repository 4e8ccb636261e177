import { CustomEvent, LevelSetting } from './notification-levels';

/** What happened, for the recipients rules. */
export type NotificationEvent =
  | { kind: 'issue' | 'merge_request'; action: 'new' | 'close' | 'reopen' | 'merge' | 'reassign' }
  | { kind: 'note' }
  | { kind: 'build_failed' }
  /** A security notice (new SSH key, new email address) or a project an administrator created for the user. */
  | { kind: 'notice' };

/** Everything the rules look at, loaded by the caller (ids of users). */
export interface RecipientFacts {
  /** Who did it (never mailed). Null when nobody did (a build failing). */
  actorId: number | null;
  /** Author, assignee, earlier commenters and users mentioned in the description and the notes (issues, MRs, notes). */
  participants?: number[];
  /** The assignee now and before (reassign). */
  assigneeId?: number | null;
  previousAssigneeId?: number | null;
  /** Users mentioned in the new note itself (a `mention` level still hears of them). */
  mentionedInNote?: number[];
  /** Explicit subscriptions of the issue or MR: subscribed (true) and unsubscribed (false). */
  subscribed?: number[];
  unsubscribed?: number[];
  /** Subscribers of the or MR's labels (mailed of new issues and MRs). */
  labelSubscribers?: number[];
  /** Members of the project or its group (candidates of `watch` and `custom`). */
  members?: number[];
  /** The pusher of the commit (failed build), the account's owner (notice). */
  userId?: number | null;
  /** The effective setting of each user above (project → group → global); missing: `participating`. */
  settings: Map<number, LevelSetting>;
  /** Active (not blocked) and able to see the thing: asked of every candidate, last. */
  canSee: (userId: number) => boolean;
}

const PARTICIPATING: LevelSetting = { level: 'participating', events: {} };

/**
 * Who is mailed of an event: GitLab 8.12's NotificationService rules in one pure function.
 *
 * - issue / merge request (new, close, reopen, merge, reassign): participants (author, assignee,
 *   commenters, mentioned users), members watching the project, members whose `custom` level has the
 *   event's switch on; minus users on `mention`; plus old and new assignee on reassign; minus users
 *   on `disabled`; plus the explicit subscribers (and, for new ones, the subscribers of their labels);
 *   minus those who unsubscribed.
 * - note: the same with `new_note`; users mentioned in the note are kept even on `mention`.
 * - failed build: the pusher, unless their level is `disabled` (or `custom` without failed_pipeline).
 * - notice: the user concerned, whatever their level (a security notice).
 *
 * Always last: only users who can see the thing (active, readable), never the actor, each once.
 */
export function notificationRecipients(event: NotificationEvent, f: RecipientFacts): number[] {
  const setting = (u: number) => f.settings.get(u) ?? PARTICIPATING;
  let out: number[];
  if (event.kind === 'notice') {
    out = f.userId ? [f.userId] : [];
  } else if (event.kind === 'build_failed') {
    out = [];
    if (f.userId) {
      const s = setting(f.userId);
      const off = s.level === 'disabled' || (s.level === 'custom' && s.events.failed_pipeline === false);
      if (!off) out.push(f.userId);
    }
  } else {
    const custom: CustomEvent = event.kind === 'note' ? 'new_note' : (`${event.action}_${event.kind}` as CustomEvent);
    const members = f.members ?? [];
    const watchers = members.filter((u) => setting(u).level === 'watch');
    const customs = members.filter((u) => setting(u).level === 'custom' && setting(u).events[custom] === true);
    const mentioned = event.kind === 'note' ? (f.mentionedInNote ?? []) : [];
    const notMention = (u: number) => setting(u).level !== 'mention';
    out = [...(f.participants ?? []), ...watchers, ...customs].filter((u) => !mentioned.includes(u) && notMention(u));
    out.push(...mentioned);
    if (event.kind !== 'note' && event.action === 'reassign') {
      if (f.previousAssigneeId) out.push(f.previousAssigneeId);
      if (f.assigneeId) out.push(f.assigneeId);
    }
    out = out.filter((u) => setting(u).level !== 'disabled');
    out.push(...(f.subscribed ?? []));
    if (event.kind !== 'note' && event.action === 'new') out.push(...(f.labelSubscribers ?? []));
    const unsubscribed = new Set(f.unsubscribed ?? []);
    out = out.filter((u) => !unsubscribed.has(u));
  }
  return [...new Set(out)].filter((u) => u !== f.actorId && f.canSee(u));
}
