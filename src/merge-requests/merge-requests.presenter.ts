import { Commit, DiffEntry } from '../git/objects';
import { Paginated } from '../common/pagination/pagination';
import { Milestone } from '../milestones/milestone.entity';
import { presentMilestone } from '../milestones/milestones.presenter';
import { presentAuthor } from '../users/users.presenter';
import { presentCommitInList, presentDiff } from '../repo-api/repo-api.presenter';
import type { UserSummary } from '../users/users.presenter';
import { PresentContext, presentUserBasic } from '../users/users.presenter';
import { isWorkInProgress, MergeRequest } from './merge-request.entity';
import { CommitResponse } from '../repo-api/repo-api.responses';
import { MergeRequestChangesResponse, MergeRequestRecordResponse, MergeRequestResponse } from './merge-requests.responses';
import type { Caller } from '../common/caller/caller';

/** Everything a merge request response needs besides the row, loaded in a fixed number of queries. */
export interface MergeRequestExtras {
  labels: string[];
  milestone: Milestone | null;
  assignee: UserSummary | null;
  author: UserSummary | null;
  subscribed: boolean;
  userNotesCount: number;
  upvotes: number;
  downvotes: number;
}

/** The state clients see: a reopened request is `opened` (../shared/docs/spec-decisions.md #8), `locked` is a merge in progress. */
function visibleState(mr: MergeRequest): string {
  return mr.state === 'reopened' || mr.state === 'locked' ? 'opened' : mr.state;
}

/** GitLab 8.8's MergeRequest entity, keys in its order, with `created_at`/`updated_at` (../shared/docs/spec-decisions.md #9). */
export function presentMergeRequest(mr: MergeRequest, x: MergeRequestExtras, viewer: Caller | undefined, ctx: PresentContext): MergeRequestResponse {
  return {
    id: mr.id,
    iid: mr.iid,
    project_id: mr.projectId,
    title: mr.title,
    description: mr.description,
    state: visibleState(mr),
    created_at: mr.createdAt,
    updated_at: mr.updatedAt,
    target_branch: mr.targetBranch,
    source_branch: mr.sourceBranch,
    upvotes: x.upvotes,
    downvotes: x.downvotes,
    author: presentAuthor(x.author, viewer, ctx),
    assignee: x.assignee ? presentUserBasic(x.assignee, ctx) : null,
    source_project_id: mr.sourceProjectId,
    target_project_id: mr.projectId,
    labels: x.labels,
    work_in_progress: isWorkInProgress(mr.title),
    milestone: x.milestone ? presentMilestone(x.milestone) : null,
    merge_when_build_succeeds: mr.mergeWhenBuildSucceeds,
    merge_status: mr.mergeStatus,
    subscribed: x.subscribed,
    user_notes_count: x.userNotesCount,
  };
}

/** MergeRequestChanges: the entity plus `changes`, every diff entry (with the compare caps). */
export function presentMergeRequestChanges(base: MergeRequestResponse, changes: DiffEntry[], truncated: boolean): MergeRequestChangesResponse {
  return { ...base, changes: changes.map(presentDiff), changes_truncated: truncated };
}

export function presentMergeRequestCommits(commits: Paginated<Commit>): Paginated<CommitResponse> {
  return commits.map(presentCommitInList);
}

/** The DELETE answer: the soft-deleted record, as GitLab returned its row. */
export function presentMergeRequestRecord(mr: MergeRequest): MergeRequestRecordResponse {
  return {
    id: mr.id,
    iid: mr.iid,
    target_project_id: mr.projectId,
    source_project_id: mr.sourceProjectId,
    target_branch: mr.targetBranch,
    source_branch: mr.sourceBranch,
    title: mr.title,
    description: mr.description,
    state: visibleState(mr),
    merge_status: mr.mergeStatus,
    author_id: mr.authorId,
    assignee_id: mr.assigneeId,
    milestone_id: mr.milestoneId,
    merge_when_build_succeeds: mr.mergeWhenBuildSucceeds,
    merge_user_id: mr.mergeUserId,
    merge_commit_sha: mr.mergeCommitSha,
    created_at: mr.createdAt,
    updated_at: mr.updatedAt,
    deleted_at: mr.deletedAt,
  };
}
