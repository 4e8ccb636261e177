import { PolicyUser, ProjectAbility, ProjectAccess } from './policy';
import { ConfidentialitySubject, confidentialIssueVisible } from './visibility';

/**
 * GitLab's per-issue rules on top of the project abilities (ability.rb's issue rules): the author
 * and the assignee may read and update their issue; who reads a confidential one is the one rule of
 * common/policy/visibility.ts (reporters and above, administrators, its author and its assignee; lists
 * use its SQL form, `readableIssuesInProject`). Pure, like common/policy.
 */
export type IssueSubject = ConfidentialitySubject;

export function involvedIn(user: PolicyUser | undefined, issue: IssueSubject): boolean {
  return !!user && (issue.authorId === user.id || issue.assigneeId === user.id);
}

export function canReadIssue(user: PolicyUser | undefined, abilities: Set<ProjectAbility>, access: ProjectAccess | undefined, issue: IssueSubject): boolean {
  return abilities.has('read_issue') && confidentialIssueVisible(user, access, issue);
}

/** `update_issue` on this issue: reporters and up, or its author or assignee. */
export function canUpdateIssue(user: PolicyUser | undefined, abilities: Set<ProjectAbility>, issue: IssueSubject): boolean {
  return abilities.has('update_issue') || (abilities.has('read_issue') && involvedIn(user, issue));
}

/** Owners and administrators may back-date `created_at` / `updated_at` (GitLab: admin or project owner). */
export function canSetTimestamps(abilities: Set<ProjectAbility>): boolean {
  return abilities.has('remove_project');
}
