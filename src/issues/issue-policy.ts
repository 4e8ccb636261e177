import { AccessLevel, PolicyUser, ProjectAbility, ProjectAccess } from '../common/policy/policy';
import { PolicyService } from '../common/policy/policy.service';

/**
 * GitLab's per-issue rules on top of the project abilities (ability.rb's issue rules): the author
 * and the assignee may read and update their issue; a confidential issue is readable only by
 * members, administrators, its author and its assignee. Pure, like common/policy.
 */
export interface IssueSubject {
  authorId: number | null;
  assigneeId: number | null;
  confidential: boolean;
}

export function involvedIn(user: PolicyUser | undefined, issue: IssueSubject): boolean {
  return !!user && (issue.authorId === user.id || issue.assigneeId === user.id);
}

/** Whether deciding readability needs the caller's membership (a confidential issue of someone else). */
export function needsMembership(user: PolicyUser | undefined, issue: IssueSubject): boolean {
  return issue.confidential && !!user && !user.admin && !involvedIn(user, issue);
}

export function canReadIssue(
  user: PolicyUser | undefined,
  abilities: Set<ProjectAbility>,
  access: ProjectAccess | undefined,
  issue: IssueSubject,
): boolean {
  if (!abilities.has('read_issue')) return false;
  if (!issue.confidential) return true;
  if (!user) return false;
  return user.admin || involvedIn(user, issue) || (access?.level ?? 0) >= AccessLevel.GUEST;
}

/** `update_issue` on this issue: reporters and up, or its author or assignee. */
export function canUpdateIssue(user: PolicyUser | undefined, abilities: Set<ProjectAbility>, issue: IssueSubject): boolean {
  return abilities.has('update_issue') || (abilities.has('read_issue') && involvedIn(user, issue));
}

/** Owners and administrators may back-date `created_at` / `updated_at` (GitLab: admin or project owner). */
export function canSetTimestamps(abilities: Set<ProjectAbility>): boolean {
  return abilities.has('remove_project');
}

/**
 * SQL condition (aliases `i` for issues and `p` for their project; named parameters) for the issues
 * of readable projects that `user` may see: everything but other people's confidential issues in
 * projects the user is not a member of.
 */
export function issueVisibilityCondition(
  user: PolicyUser | undefined,
  policy: PolicyService,
): { sql: string; params: Record<string, unknown> } {
  if (user?.admin) return { sql: 'TRUE', params: {} };
  if (!user) return { sql: 'NOT i.confidential', params: {} };
  const member = policy.memberProjectsCondition(user);
  return {
    sql: `(NOT i.confidential OR i.author_id = :issueViewerId OR i.assignee_id = :issueViewerId OR ${member.sql})`,
    params: { ...member.params, issueViewerId: user.id },
  };
}
