import { IssuableChangeRules } from '../issuables/issuable-changes';
import { isWorkInProgress, MergeRequest } from './merge-request.entity';

/** The columns of a merge request that no longer waits to be merged automatically. */
export const AUTO_MERGE_OFF = {
  mergeWhenBuildSucceeds: false,
  mergeUserId: null,
  mergeParams: null,
  mergeWhenBuildSucceedsSha: null,
} satisfies Partial<MergeRequest>;

/** GitLab's system note when an automatic merge is called off (by hand, because its source moved, or its target changed). */
export const CANCELED_AUTO_MERGE = 'Canceled the automatic merge';

/**
 * What a merge request update changes beyond the shared issuable update: the WIP marks of a title,
 * a new `target_branch` (unless merged: `merge_status` unchecked, an automatic merge approved into
 * the old target called off), and a state change (closing calls the automatic merge off, reopening
 * makes `merge_status` unchecked).
 */
export function mergeRequestChangeRules(targetBranch: string | undefined): IssuableChangeRules<MergeRequest> {
  return {
    titleNotes: (was, is) => {
      const [wasWip, isWip] = [isWorkInProgress(was), isWorkInProgress(is)];
      if (!wasWip && isWip) return ['Marked this merge request as a **Work In Progress**'];
      if (wasWip && !isWip) return ['Unmarked this merge request as a Work In Progress'];
      return [];
    },
    attributes: (current, changes, notes) => {
      if (targetBranch === undefined || targetBranch === current.targetBranch || current.state === 'merged') return;
      changes.targetBranch = targetBranch;
      changes.mergeStatus = 'unchecked';
      notes.push(`Target branch changed from \`${current.targetBranch}\` to \`${targetBranch}\``);
      // the automatic merge was approved into the old target: it does not carry over to another
      if (current.mergeWhenBuildSucceeds) {
        Object.assign(changes, AUTO_MERGE_OFF);
        notes.push(CANCELED_AUTO_MERGE);
      }
    },
    transition: (transition, changes) => {
      if (transition === 'closed') Object.assign(changes, AUTO_MERGE_OFF);
      else changes.mergeStatus = 'unchecked';
    },
  };
}
