import { AccessLevel, PolicyUser, ProjectAbility, ProjectAccess } from '../common/policy/policy';

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

export function canReadIssue(user: PolicyUser | undefined, abilities: Set<ProjectAbility>, access: ProjectAccess | undefined, issue: IssueSubject): boolean {
  if (!abilities.has('read_issue')) return false;
  if (!issue.confidential) return true;
  return seesConfidentialIssues(user, access) || involvedIn(user, issue);
}

/** `update_issue` on this issue: reporters and up, or its author or assignee. */
export function canUpdateIssue(user: PolicyUser | undefined, abilities: Set<ProjectAbility>, issue: IssueSubject): boolean {
  return abilities.has('update_issue') || (abilities.has('read_issue') && involvedIn(user, issue));
}

/** Owners and administrators may back-date `created_at` / `updated_at` (GitLab: admin or project owner). */
export function canSetTimestamps(abilities: Set<ProjectAbility>): boolean {
  return abilities.has('remove_project');
}

/** Whether the caller sees every issue of the project, confidential ones included (members and admins). */
export function seesConfidentialIssues(user: PolicyUser | undefined, access: ProjectAccess | undefined): boolean {
  return !!user && (user.admin || (access?.level ?? 0) >= AccessLevel.GUEST);
}

/**
 * SQL condition (alias `i`; named parameters) for the issues of ONE project that `user` may see,
 * decided from the access the project resolver already loaded (no membership subquery): members
 * and admins see all, others all but other people's confidential issues. Agrees with canReadIssue.
 */
export function issueVisibilityInProject(user: PolicyUser | undefined, access: ProjectAccess | undefined): { sql: string; params: Record<string, unknown> } {
  if (seesConfidentialIssues(user, access)) return { sql: 'TRUE', params: {} };
  if (!user) return { sql: 'NOT i.confidential', params: {} };
  return {
    sql: '(NOT i.confidential OR i.author_id = :issueViewerId OR i.assignee_id = :issueViewerId)',
    params: { issueViewerId: user.id },
  };
}
