import { hookAction, Issuable, issuableChanges, IssuableEdit, transitionOf, updateEventActions } from './issuable-changes';

const row = (over: Partial<Issuable> = {}): Issuable => ({
  id: 1,
  projectId: 2,
  title: 'Old',
  description: null,
  state: 'opened',
  assigneeId: null,
  milestoneId: null,
  updatedAt: new Date(0),
  ...over,
});
const edit = (over: Partial<IssuableEdit> = {}): IssuableEdit => ({ assignee: null, milestone: null, ...over });

describe('issuableChanges', () => {
  it('changes nothing and notes nothing for an empty edit or unchanged values', () => {
    expect(issuableChanges(row(), edit(), {})).toEqual({ changes: {}, notes: [], transition: undefined });
    expect(issuableChanges(row({ description: null }), edit({ title: 'Old', description: '', assigneeId: null, milestoneId: null }), {})).toEqual({
      changes: {},
      notes: [],
      transition: undefined,
    });
  });

  it("notes a title change (then the kind's title notes), never a description change", () => {
    const r = issuableChanges(row(), edit({ title: 'New', description: 'text' }), { titleNotes: (was, is) => [`${was}>${is}`] });
    expect(r.changes).toEqual({ title: 'New', description: 'text' });
    expect(r.notes).toEqual(['Changed title: **Old** → **New**', 'Old>New']);
  });

  it('orders notes: title, own attributes, assignee, milestone, state', () => {
    const r = issuableChanges(
      row(),
      edit({ title: 'New', assigneeId: 5, assignee: { username: 'ann' }, milestoneId: 6, milestone: { title: 'v1' }, stateEvent: 'close' }),
      { attributes: (_current, _changes, notes) => notes.push('own') },
    );
    expect(r.notes).toEqual(['Changed title: **Old** → **New**', 'own', 'Reassigned to @ann', 'Milestone changed to %v1', 'Status changed to closed']);
    expect(r.changes).toEqual({ title: 'New', assigneeId: 5, milestoneId: 6, state: 'closed' });
    expect(r.transition).toBe('closed');
  });

  it('clears assignee and milestone with their notes', () => {
    const r = issuableChanges(row({ assigneeId: 5, milestoneId: 6 }), edit({ assigneeId: null, milestoneId: null }), {});
    expect(r.changes).toEqual({ assigneeId: null, milestoneId: null });
    expect(r.notes).toEqual(['Assignee removed', 'Milestone removed']);
  });

  it('reopens a closed one as opened, and lets the kind add columns to a state change', () => {
    const r = issuableChanges(row({ state: 'closed' }), edit({ stateEvent: 'reopen' }), {
      transition: (t, changes) => Object.assign(changes, { description: t }),
    });
    expect(r).toEqual({ changes: { state: 'opened', description: 'reopened' }, notes: ['Status changed to reopened'], transition: 'reopened' });
  });
});

describe('transitionOf', () => {
  it.each([
    ['opened', 'close', 'closed'],
    ['reopened', 'close', 'closed'],
    ['closed', 'close', undefined],
    ['merged', 'close', undefined],
    ['locked', 'close', undefined],
    ['closed', 'reopen', 'reopened'],
    ['opened', 'reopen', undefined],
    ['merged', 'reopen', undefined],
    ['opened', undefined, undefined],
    ['opened', 'merge', undefined],
  ])('%s + %s → %s', (state, event, expected) => {
    expect(transitionOf(state, event)).toBe(expected);
  });
});

describe('hookAction', () => {
  it('is close, reopen or update', () => {
    expect([hookAction('closed'), hookAction('reopened'), hookAction(undefined)]).toEqual(['close', 'reopen', 'update']);
  });
});

describe('updateEventActions', () => {
  it('records the state change, and a label change beside it only when the kind says so', () => {
    expect(updateEventActions(undefined, false, true)).toEqual([]);
    expect(updateEventActions(undefined, true, false)).toEqual(['updated']);
    expect(updateEventActions('closed', false, false)).toEqual(['closed']);
    expect(updateEventActions('closed', true, true)).toEqual(['closed', 'updated']);
    expect(updateEventActions('reopened', true, false)).toEqual(['reopened']);
  });
});
