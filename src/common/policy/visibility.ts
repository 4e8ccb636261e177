import { PolicyUser } from './policy';

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
