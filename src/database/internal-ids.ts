import { EntityManager } from 'typeorm';

/**
 * Per-project internal ids (`internal_ids`, GitLab's InternalId): the database layer owns the counter
 * table, shared by the areas that number their rows per project (issues, milestones, merge requests, deployments).
 */
export type InternalIdUsage = 'issues' | 'milestones' | 'merge_requests' | 'deployments';

/**
 * The statement per usage, written out whole (no interpolated identifiers): a missing counter row
 * starts after the highest iid already stored in that usage's table.
 */
const NEXT_IID_SQL: Readonly<Record<InternalIdUsage, string>> = {
  issues: `INSERT INTO internal_ids (project_id, usage, last_value)
       VALUES ($1, $2, (SELECT coalesce(max(iid), 0) + 1 FROM issues WHERE project_id = $1))
     ON CONFLICT (project_id, usage) DO UPDATE SET last_value = internal_ids.last_value + 1
     RETURNING last_value`,
  milestones: `INSERT INTO internal_ids (project_id, usage, last_value)
       VALUES ($1, $2, (SELECT coalesce(max(iid), 0) + 1 FROM milestones WHERE project_id = $1))
     ON CONFLICT (project_id, usage) DO UPDATE SET last_value = internal_ids.last_value + 1
     RETURNING last_value`,
  merge_requests: `INSERT INTO internal_ids (project_id, usage, last_value)
       VALUES ($1, $2, (SELECT coalesce(max(iid), 0) + 1 FROM merge_requests WHERE project_id = $1))
     ON CONFLICT (project_id, usage) DO UPDATE SET last_value = internal_ids.last_value + 1
     RETURNING last_value`,
  deployments: `INSERT INTO internal_ids (project_id, usage, last_value)
       VALUES ($1, $2, (SELECT coalesce(max(iid), 0) + 1 FROM deployments WHERE project_id = $1))
     ON CONFLICT (project_id, usage) DO UPDATE SET last_value = internal_ids.last_value + 1
     RETURNING last_value`,
};

/**
 * The next per-project iid for `usage`, allocated inside the caller's transaction. The counter row is
 * created or bumped with one statement; its row lock is held until commit, so concurrent creators
 * queue on it and each gets the next value (a rollback gives the value back). A missing row starts
 * after the highest iid already stored, so data created before the counter existed is respected.
 */
export async function nextInternalId(m: EntityManager, projectId: number, usage: InternalIdUsage): Promise<number> {
  const rows: { last_value: number }[] = await m.query(NEXT_IID_SQL[usage], [projectId, usage]);
  return rows[0].last_value;
}
