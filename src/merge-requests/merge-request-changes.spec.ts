import { issuableChanges } from '../issuables/issuable-changes';
import { MergeRequest } from './merge-request.entity';
import { AUTO_MERGE_OFF, mergeRequestChangeRules } from './merge-request-changes';

const mr = (over: Partial<MergeRequest> = {}): MergeRequest =>
  ({
    id: 1,
    projectId: 2,
    title: 'Feature',
    description: null,
    state: 'opened',
    assigneeId: null,
    milestoneId: null,
    targetBranch: 'master',
    sourceBranch: 'feature',
    mergeStatus: 'can_be_merged',
    mergeWhenBuildSucceeds: false,
    mergeUserId: null,
    mergeParams: null,
    mergeWhenBuildSucceedsSha: null,
    ...over,
  }) as MergeRequest;
const none = { assignee: null, milestone: null };
const waiting = { mergeWhenBuildSucceeds: true, mergeUserId: 3, mergeParams: {}, mergeWhenBuildSucceedsSha: 'a'.repeat(40) };

describe('mergeRequestChangeRules', () => {
  it('notes marking and unmarking as work in progress after the title change', () => {
    expect(issuableChanges(mr(), { ...none, title: 'WIP: Feature' }, mergeRequestChangeRules(undefined)).notes).toEqual([
      'Changed title: **Feature** → **WIP: Feature**',
      'Marked this merge request as a **Work In Progress**',
    ]);
    expect(issuableChanges(mr({ title: '[WIP] Feature' }), { ...none, title: 'Feature' }, mergeRequestChangeRules(undefined)).notes).toEqual([
      'Changed title: **[WIP] Feature** → **Feature**',
      'Unmarked this merge request as a Work In Progress',
    ]);
    expect(issuableChanges(mr({ title: 'WIP: a' }), { ...none, title: 'WIP: b' }, mergeRequestChangeRules(undefined)).notes).toEqual([
      'Changed title: **WIP: a** → **WIP: b**',
    ]);
  });

  it('retargets: unchecked, noted, and an automatic merge approved into the old target called off', () => {
    expect(issuableChanges(mr(), none, mergeRequestChangeRules('stable'))).toEqual({
      changes: { targetBranch: 'stable', mergeStatus: 'unchecked' },
      notes: ['Target branch changed from `master` to `stable`'],
      transition: undefined,
    });
    expect(issuableChanges(mr(waiting), none, mergeRequestChangeRules('stable'))).toEqual({
      changes: { targetBranch: 'stable', mergeStatus: 'unchecked', ...AUTO_MERGE_OFF },
      notes: ['Target branch changed from `master` to `stable`', 'Canceled the automatic merge'],
      transition: undefined,
    });
  });

  it('keeps the target of a merged one and an unchanged target', () => {
    expect(issuableChanges(mr({ state: 'merged' }), none, mergeRequestChangeRules('stable')).changes).toEqual({});
    expect(issuableChanges(mr(), none, mergeRequestChangeRules('master')).changes).toEqual({});
  });

  it('closing calls the automatic merge off; reopening makes merge_status unchecked', () => {
    expect(issuableChanges(mr(waiting), { ...none, stateEvent: 'close' }, mergeRequestChangeRules(undefined)).changes).toEqual({
      state: 'closed',
      ...AUTO_MERGE_OFF,
    });
    expect(issuableChanges(mr({ state: 'closed' }), { ...none, stateEvent: 'reopen' }, mergeRequestChangeRules(undefined)).changes).toEqual({
      state: 'opened',
      mergeStatus: 'unchecked',
    });
  });
});
