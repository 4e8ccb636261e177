import type { ActivityRecord } from '../domain-events/domain-event-catalogue';
import { Milestone } from '../milestones/milestone.entity';
import { assignmentChanges } from '../notes/system-notes';

/** What issues and merge requests share, as far as an update reads or writes it. */
export interface Issuable {
  id: number;
  projectId: number;
  title: string;
  description: string | null;
  state: string;
  assigneeId: number | null;
  milestoneId: number | null;
  updatedAt: Date;
}

export type Transition = 'closed' | 'reopened';

/** The project hooks' `action` of an update (GitLab's `execute_hooks(issuable, action)`). */
export type IssuableHookAction = 'update' | 'close' | 'reopen';

/** An update's requested values, checked and resolved (absent: unchanged; null: cleared). */
export interface IssuableEdit {
  title?: string;
  description?: string;
  stateEvent?: string;
  assigneeId?: number | null;
  assignee: { username: string } | null;
  milestoneId?: number | null;
  milestone: Pick<Milestone, 'title'> | null;
}

/** How one kind of issuable differs in the column changes of an update. */
export interface IssuableChangeRules<T extends Issuable> {
  /** Notes a title change adds after `Changed title: ...` (merge requests: the WIP marks). */
  titleNotes?(was: string, is: string): string[];
  /** The kind's own attributes, after title and description (issues: confidential; merge requests: the target branch). */
  attributes?(current: T, changes: Partial<T>, notes: string[]): void;
  /** Further columns a state change sets (merge requests: the automatic merge off, `merge_status`). */
  transition?(transition: Transition, changes: Partial<T>): void;
}

/**
 * The columns an update changes and their system notes, in GitLab's order: title, description, the
 * kind's own attributes, assignee and milestone, then the state (`close` of an open one, `reopen` of
 * a closed one; anything else changes nothing). Labels are the caller's (they need the database).
 */
export function issuableChanges<T extends Issuable>(
  current: T,
  edit: IssuableEdit,
  rules: IssuableChangeRules<T>,
): { changes: Partial<T>; notes: string[]; transition: Transition | undefined } {
  const changes: Partial<T> = {};
  const notes: string[] = [];
  if (edit.title !== undefined && edit.title !== current.title) {
    changes.title = edit.title;
    notes.push(`Changed title: **${current.title}** → **${edit.title}**`);
    if (rules.titleNotes) notes.push(...rules.titleNotes(current.title, edit.title));
  }
  if (edit.description !== undefined && edit.description !== (current.description ?? '')) changes.description = edit.description;
  rules.attributes?.(current, changes, notes);
  assignmentChanges(current, edit, changes, notes);
  const transition = transitionOf(current.state, edit.stateEvent);
  if (transition) {
    changes.state = transition === 'closed' ? 'closed' : 'opened';
    rules.transition?.(transition, changes);
    notes.push(`Status changed to ${transition}`);
  }
  return { changes, notes, transition };
}

/** `close` closes an open (opened or reopened) one, `reopen` reopens a closed one; otherwise no state change. */
export function transitionOf(state: string, stateEvent: string | undefined): Transition | undefined {
  if (stateEvent === 'close' && (state === 'opened' || state === 'reopened')) return 'closed';
  if (stateEvent === 'reopen' && state === 'closed') return 'reopened';
  return undefined;
}

export function hookAction(transition: Transition | undefined): IssuableHookAction {
  return transition === 'closed' ? 'close' : transition === 'reopened' ? 'reopen' : 'update';
}

/**
 * The events (activity feed) of an update: the state change, and `updated` for a label change —
 * alongside the state change (issues) or only without one (merge requests, `labelsBesideTransition` false).
 */
export function updateEventActions(transition: Transition | undefined, labelsChanged: boolean, labelsBesideTransition: boolean): ActivityRecord['action'][] {
  const actions: ActivityRecord['action'][] = [];
  if (transition) actions.push(transition);
  if (labelsChanged && (!transition || labelsBesideTransition)) actions.push('updated');
  return actions;
}
