import { Milestone } from '../milestones/milestone.entity';
import { presentMilestone } from '../milestones/milestones.presenter';
import { presentAuthor } from '../users/users.presenter';
import type { UserSummary } from '../users/users.presenter';
import { PresentContext, presentUserBasic } from '../users/users.presenter';
import { Issue } from './issue.entity';
import { IssueRecordResponse, IssueResponse } from './issues.responses';
import type { Caller } from '../common/caller/caller';

/** Everything an issue response needs besides the row, loaded by IssueViews in a fixed number of queries. */
export interface IssueExtras {
  labels: string[];
  milestone: Milestone | null;
  assignee: UserSummary | null;
  author: UserSummary | null;
  subscribed: boolean;
  userNotesCount: number;
}

/** GitLab's Issue entity, keys in its order. A reopened issue reads `opened` (../shared/docs/spec-decisions.md #8). */
export function presentIssue(i: Issue, x: IssueExtras, viewer: Caller | undefined, ctx: PresentContext): IssueResponse {
  return {
    id: i.id,
    iid: i.iid,
    project_id: i.projectId,
    title: i.title,
    description: i.description,
    state: i.state === 'closed' ? 'closed' : 'opened',
    created_at: i.createdAt,
    updated_at: i.updatedAt,
    labels: x.labels,
    milestone: x.milestone ? presentMilestone(x.milestone) : null,
    assignee: x.assignee ? presentUserBasic(x.assignee, ctx) : null,
    author: presentAuthor(x.author, viewer, ctx),
    subscribed: x.subscribed,
    user_notes_count: x.userNotesCount,
  };
}

/** The DELETE answer: the (soft-deleted) issue record, as GitLab returned its row. */
export function presentIssueRecord(i: Issue): IssueRecordResponse {
  return {
    id: i.id,
    iid: i.iid,
    project_id: i.projectId,
    title: i.title,
    description: i.description,
    state: i.state === 'closed' ? 'closed' : 'opened',
    confidential: i.confidential,
    author_id: i.authorId,
    assignee_id: i.assigneeId,
    milestone_id: i.milestoneId,
    moved_to_id: i.movedToId,
    position: i.position,
    created_at: i.createdAt,
    updated_at: i.updatedAt,
    deleted_at: i.deletedAt,
  };
}
