import { LevelSetting } from './notification-levels';
import { notificationRecipients, RecipientFacts } from './notification-recipients';

const all = () => true;
const facts = (f: Partial<RecipientFacts>): RecipientFacts => ({ actorId: 1, settings: new Map(), canSee: all, ...f });
const level = (l: LevelSetting['level'], events: LevelSetting['events'] = {}): LevelSetting => ({ level: l, events });
const sorted = (a: number[]) => [...a].sort((x, y) => x - y);

describe('notificationRecipients', () => {
  it('new issue: assignee and mentioned participants, label subscribers, never the author', () => {
    const r = notificationRecipients({ kind: 'issue', action: 'new' }, facts({ actorId: 1, participants: [1, 2, 3], labelSubscribers: [4] }));
    expect(sorted(r)).toEqual([2, 3, 4]);
  });

  it('label subscribers only hear of new issues and MRs', () => {
    expect(notificationRecipients({ kind: 'issue', action: 'close' }, facts({ labelSubscribers: [4] }))).toEqual([]);
    expect(notificationRecipients({ kind: 'merge_request', action: 'new' }, facts({ labelSubscribers: [4] }))).toEqual([4]);
  });

  it('note: participants, watchers, subscribers, mentioned; not the note author', () => {
    const settings = new Map([
      [5, level('watch')],
      [6, level('participating')],
    ]);
    const r = notificationRecipients(
      { kind: 'note' },
      facts({ actorId: 2, participants: [1, 2, 3], members: [5, 6], subscribed: [7], mentionedInNote: [8], settings }),
    );
    expect(sorted(r)).toEqual([1, 3, 5, 7, 8]);
  });

  it('mention level: only when mentioned in the note itself', () => {
    const settings = new Map([
      [3, level('mention')],
      [4, level('mention')],
    ]);
    const r = notificationRecipients({ kind: 'note' }, facts({ actorId: 2, participants: [1, 3, 4], mentionedInNote: [4], settings }));
    expect(sorted(r)).toEqual([1, 4]);
  });

  it('disabled level: not mailed as participant or watcher, still as explicit subscriber (GitLab)', () => {
    const settings = new Map([
      [3, level('disabled')],
      [4, level('disabled')],
    ]);
    const r = notificationRecipients({ kind: 'issue', action: 'close' }, facts({ participants: [3], subscribed: [4], settings }));
    expect(r).toEqual([4]);
  });

  it('custom level: members with the event switch on', () => {
    const settings = new Map([
      [5, level('custom', { close_issue: true })],
      [6, level('custom', { new_issue: true })],
    ]);
    expect(notificationRecipients({ kind: 'issue', action: 'close' }, facts({ members: [5, 6], settings }))).toEqual([5]);
    expect(notificationRecipients({ kind: 'issue', action: 'new' }, facts({ members: [5, 6], settings }))).toEqual([6]);
    expect(notificationRecipients({ kind: 'merge_request', action: 'merge' }, facts({ members: [5, 6], settings }))).toEqual([]);
  });

  it('reassign: old and new assignee even on mention level', () => {
    const settings = new Map([
      [3, level('mention')],
      [4, level('mention')],
    ]);
    const r = notificationRecipients({ kind: 'issue', action: 'reassign' }, facts({ participants: [2], assigneeId: 3, previousAssigneeId: 4, settings }));
    expect(sorted(r)).toEqual([2, 3, 4]);
  });

  it('an unsubscribe stops a participant', () => {
    const r = notificationRecipients({ kind: 'note' }, facts({ actorId: 9, participants: [1, 2], unsubscribed: [2] }));
    expect(r).toEqual([1]);
  });

  it('never anyone who cannot see the thing (blocked, no access), not even a subscriber or the mentioned', () => {
    const r = notificationRecipients(
      { kind: 'note' },
      facts({ actorId: 9, participants: [1, 2], subscribed: [3], mentionedInNote: [4], canSee: (u) => u === 1 }),
    );
    expect(r).toEqual([1]);
  });

  it('each user once, the actor never', () => {
    const settings = new Map([[2, level('watch')]]);
    const r = notificationRecipients(
      { kind: 'note' },
      facts({ actorId: 1, participants: [1, 2, 2], members: [1, 2], subscribed: [1, 2], mentionedInNote: [1, 2], settings }),
    );
    expect(r).toEqual([2]);
  });

  it('failed build: the pusher unless disabled or custom without failed_pipeline', () => {
    expect(notificationRecipients({ kind: 'build_failed' }, facts({ actorId: null, userId: 3 }))).toEqual([3]);
    expect(notificationRecipients({ kind: 'build_failed' }, facts({ actorId: null, userId: 3, settings: new Map([[3, level('disabled')]]) }))).toEqual([]);
    expect(
      notificationRecipients(
        { kind: 'build_failed' },
        facts({ actorId: null, userId: 3, settings: new Map([[3, level('custom', { failed_pipeline: false })]]) }),
      ),
    ).toEqual([]);
    expect(notificationRecipients({ kind: 'build_failed' }, facts({ actorId: null, userId: 3, canSee: () => false }))).toEqual([]);
  });

  it('notice: the user concerned whatever the level, not when they did it themselves for someone else', () => {
    expect(notificationRecipients({ kind: 'notice' }, facts({ actorId: 3, userId: 3, settings: new Map([[3, level('disabled')]]) }))).toEqual([]);
    expect(notificationRecipients({ kind: 'notice' }, facts({ actorId: null, userId: 3, settings: new Map([[3, level('disabled')]]) }))).toEqual([3]);
  });
});
