import { EntityManager } from 'typeorm';

export type InternalIdUsage = 'issues' | 'milestones' | 'merge_requests';

/**
 * The next per-project iid for `usage`, allocated inside the caller's transaction. The counter row is
 * created or bumped with one statement; its row lock is held until commit, so concurrent creators
 * queue on it and each gets the next value (a rollback gives the value back). A missing row starts
 * after the highest iid already stored, so data created before the counter existed is respected.
 */
export async function nextInternalId(m: EntityManager, projectId: number, usage: InternalIdUsage): Promise<number> {
  const table = usage === 'issues' ? 'issues' : usage === 'milestones' ? 'milestones' : usage === 'merge_requests' ? 'merge_requests' : null;
  const start = table ? `(SELECT coalesce(max(iid), 0) + 1 FROM ${table} WHERE project_id = $1)` : '1';
  const rows: { last_value: number }[] = await m.query(
    `INSERT INTO internal_ids (project_id, usage, last_value) VALUES ($1, $2, ${start})
     ON CONFLICT (project_id, usage) DO UPDATE SET last_value = internal_ids.last_value + 1
     RETURNING last_value`,
    [projectId, usage],
  );
  return rows[0].last_value;
}
