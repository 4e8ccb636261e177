import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Frozen SQL: merge requests. `project_id` is the target project; `iid` comes from the per-project
 * `internal_ids` counter (usage `merge_requests`). Soft delete (`deleted_at`). At most one open merge
 * request per source project/branch and target project/branch (the 409 of a concurrent duplicate).
 * `merge_params` keeps what the merging user asked for when the merge waits for the build. A deleted
 * fork leaves its merge requests in the upstream project with no source project (`source_project_id` null).
 */
export class MergeRequests1732600000000 implements MigrationInterface {
  name = 'MergeRequests1732600000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE merge_requests (
        id serial PRIMARY KEY,
        iid integer NOT NULL,
        project_id integer NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        source_project_id integer REFERENCES projects(id) ON DELETE SET NULL,
        source_branch varchar(255) NOT NULL,
        target_branch varchar(255) NOT NULL,
        title varchar(255) NOT NULL,
        description text,
        state varchar(20) NOT NULL DEFAULT 'opened',
        merge_status varchar(30) NOT NULL DEFAULT 'unchecked',
        author_id integer REFERENCES users(id) ON DELETE SET NULL,
        assignee_id integer REFERENCES users(id) ON DELETE SET NULL,
        milestone_id integer REFERENCES milestones(id) ON DELETE SET NULL,
        merge_when_build_succeeds boolean NOT NULL DEFAULT false,
        merge_user_id integer REFERENCES users(id) ON DELETE SET NULL,
        merge_params jsonb,
        merge_commit_sha varchar(64),
        merged_at timestamptz,
        deleted_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT merge_requests_state_check CHECK (state IN ('opened', 'reopened', 'closed', 'merged', 'locked')),
        CONSTRAINT merge_requests_merge_status_check CHECK (merge_status IN ('unchecked', 'can_be_merged', 'cannot_be_merged'))
      )`);
    await q.query(`CREATE UNIQUE INDEX merge_requests_project_iid_key ON merge_requests (project_id, iid)`);
    await q.query(`
      CREATE UNIQUE INDEX merge_requests_open_branches_key
        ON merge_requests (source_project_id, source_branch, project_id, target_branch)
        WHERE state IN ('opened', 'reopened', 'locked') AND deleted_at IS NULL`);
    await q.query(`CREATE INDEX merge_requests_project_created_idx ON merge_requests (project_id, created_at)`);
    await q.query(`CREATE INDEX merge_requests_target_branch_idx ON merge_requests (project_id, target_branch) WHERE deleted_at IS NULL`);
    await q.query(`CREATE INDEX merge_requests_source_branch_idx ON merge_requests (source_project_id, source_branch) WHERE deleted_at IS NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE merge_requests`);
  }
}
