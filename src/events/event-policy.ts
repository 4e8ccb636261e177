import { AccessLevel, PolicyUser, ProjectAbility, ProjectAccess, Visibility } from '../common/policy/policy';
import { seesConfidentialIssues } from '../common/policy/visibility';

/**
 * What a caller may see of a project's activity feed: an event is shown only when its target is
 * (GitLab's `Event#visible_to_user?`, made complete). The repository turns this into SQL so that a
 * page of the feed stays one statement.
 *
 * - Issue events (opened, closed, reopened, destroyed): `read_issue`, and for a confidential issue
 *   the one rule of common/policy/visibility.ts (reporter and up, administrator, its author or assignee).
 * - Comment events: `read_note` and the same rule as the noteable (issue rules above; for a
 *   snippet `read_project_snippet` and the snippet's own visibility; for a merge request
 *   `read_merge_request`). A comment whose note is gone is hidden (its title is the noteable's).
 * - Milestone events: `read_milestone`; merge request events: `read_merge_request`.
 * - Everything else (push, joined, left, created, imported): whoever reads the project.
 */
export interface EventVisibility {
  /** The caller (author/assignee of confidential issues, author of snippets); null for anonymous. */
  viewerId: number | null;
  readIssue: boolean;
  /** Sees every confidential issue of the project (`seesConfidentialIssues`). */
  allConfidential: boolean;
  readNote: boolean;
  readSnippet: boolean;
  /** Sees every snippet of the project whatever its visibility. */
  allSnippets: boolean;
  /** Snippet visibility levels visible without membership. */
  snippetLevels: number[];
  readMilestone: boolean;
  readMergeRequest: boolean;
}

export function eventVisibility(user: PolicyUser | undefined, abilities: Set<ProjectAbility>, access: ProjectAccess): EventVisibility {
  const member = !!user && (user.admin || access.level >= AccessLevel.GUEST);
  return {
    viewerId: user?.id ?? null,
    readIssue: abilities.has('read_issue'),
    allConfidential: seesConfidentialIssues(user, access),
    readNote: abilities.has('read_note'),
    readSnippet: abilities.has('read_project_snippet'),
    allSnippets: member,
    snippetLevels: !user ? [Visibility.PUBLIC] : user.external ? [Visibility.PUBLIC] : [Visibility.INTERNAL, Visibility.PUBLIC],
    readMilestone: abilities.has('read_milestone'),
    readMergeRequest: abilities.has('read_merge_request'),
  };
}
