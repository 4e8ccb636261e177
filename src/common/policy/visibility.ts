import { AccessLevel, PolicyUser, ProjectAccess } from './policy';

/** A SQL condition with its named parameters, to `andWhere` in a query builder or join into a WHERE list. */
export interface SqlCondition {
  sql: string;
  params: Record<string, unknown>;
}

/**
 * Visibility as query helpers for repositories: a service hands a repository the caller (a typed
 * value), and the repository restricts its own query with these, naming its own table alias. The
 * rules are the policy's (who reads a project: an administrator everything; anyone public projects;
 * a signed-in non-external user internal ones too; a member its projects), so that lists and the
 * single reads of PolicyService agree. Parameter names are prefixed so that they never collide with
 * a query's own.
 */

const AUTHORIZED_IDS = 'SELECT project_id FROM project_authorizations WHERE user_id = :visibilityViewerId';

/**
 * The projects (table alias `alias`) that `viewer` is a member of, from `project_authorizations`.
 * `= ANY(ARRAY(...))` rather than `IN (...)`: the member's ids are read first (one index range) and
 * the projects fetched by id. With `IN`, a list ordered by `created_at` was planned as a walk over
 * every project in that order, probing the authorizations for each (a member of 1,000 of 10,000
 * projects: 20,437 buffers, 9.5 ms; now 1.6 ms — docs/performance-history.md).
 */
export function memberProjects(alias: string, viewer: PolicyUser): SqlCondition {
  return { sql: `${alias}.id = ANY(ARRAY(${AUTHORIZED_IDS}))`, params: { visibilityViewerId: viewer.id } };
}

/** The projects (table alias `alias`) that `viewer` may read (no viewer: the public ones). */
export function readableProjects(alias: string, viewer: PolicyUser | undefined): SqlCondition {
  if (viewer?.admin) return { sql: 'TRUE', params: {} };
  if (!viewer) return { sql: `${alias}.visibility_level = 20`, params: {} };
  const open = viewer.external ? `${alias}.visibility_level = 20` : `${alias}.visibility_level IN (10, 20)`;
  // inside an OR, `IN (...)` is planned as one hashed subplan; an array would be searched row by row
  return { sql: `(${open} OR ${alias}.id IN (${AUTHORIZED_IDS}))`, params: { visibilityViewerId: viewer.id } };
}

// ---------------------------------------------------------------------------------------------
// Confidential issues

/**
 * Confidential issues as GitLab 8.12–8.17 protect them (spec-decisions.md #37; 8.17's `Issue#readable_by?`,
 * `IssuePolicy` and `IssuesFinder.not_restricted_by_confidentiality`): on top of the project's
 * `read_issue`, a confidential issue is seen by administrators, members from reporter up (direct, through
 * the group, or the personal namespace's owner), its author and its assignee — not by guests (8.8 let
 * any member read them) nor other non-members. The ONE rule: `confidentialIssueVisible` (TypeScript) and
 * `confidentialIssueSql` (SQL, which every other form here is built from) say the same thing, and
 * every list, read, count, feed, mail and hook asks one of them.
 */
export interface ConfidentialitySubject {
  confidential: boolean;
  authorId: number | null;
  assigneeId: number | null;
}

/** Whether `user` sees every confidential issue of a project where its access is `access`: administrators, reporters and above. */
export function seesConfidentialIssues(user: PolicyUser | undefined, access: Pick<ProjectAccess, 'level'> | undefined): boolean {
  return !!user && (user.admin || (access?.level ?? 0) >= AccessLevel.REPORTER);
}

/** The rule for one issue (the caller has already been given the project's `read_issue`). */
export function confidentialIssueVisible(
  user: PolicyUser | undefined,
  access: Pick<ProjectAccess, 'level'> | undefined,
  issue: ConfidentialitySubject,
): boolean {
  if (!issue.confidential) return true;
  if (seesConfidentialIssues(user, access)) return true;
  return !!user && (issue.authorId === user.id || issue.assigneeId === user.id);
}

/**
 * The same rule as SQL on the issue `alias`, from two SQL expressions: `viewerId` (the caller's id; NULL
 * for anonymous, which matches no author or assignee) and `seesAll` (a boolean: the caller sees every
 * confidential issue of that issue's project, `seesConfidentialIssues`).
 */
export function confidentialIssueSql(alias: string, viewerId: string, seesAll: string): string {
  return `(NOT ${alias}.confidential OR ${seesAll} OR ${alias}.author_id = ${viewerId} OR ${alias}.assignee_id = ${viewerId})`;
}

/**
 * The rule for the issues (alias `alias`) of ONE project whose access the caller already has (the
 * project resolver's): no membership subquery; `TRUE` for those who see them all.
 */
export function readableIssuesInProject(alias: string, user: PolicyUser | undefined, access: Pick<ProjectAccess, 'level'> | undefined): SqlCondition {
  if (seesConfidentialIssues(user, access)) return { sql: 'TRUE', params: {} };
  if (!user) return { sql: `NOT ${alias}.confidential`, params: {} };
  return { sql: confidentialIssueSql(alias, ':confidentialViewerId', 'FALSE'), params: { confidentialViewerId: user.id } };
}

/**
 * The rule for issues (alias `alias`) of any projects, for `viewerId` (an SQL expression; `viewerAdmin`
 * likewise): reporters and above from `project_authorizations` (direct, group and personal-namespace
 * access, kept by triggers), as 8.17's finder reads `authorized_projects(REPORTER)`.
 */
export function readableIssuesAnyProject(alias: string, viewerId: string, viewerAdmin: string): string {
  const reporter = `EXISTS (SELECT 1 FROM project_authorizations pa_c WHERE pa_c.user_id = ${viewerId} AND pa_c.project_id = ${alias}.project_id AND pa_c.access_level >= ${AccessLevel.REPORTER})`;
  return confidentialIssueSql(alias, viewerId, `(${viewerAdmin} OR ${reporter})`);
}
