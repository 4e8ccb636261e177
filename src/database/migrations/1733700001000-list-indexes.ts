import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Frozen SQL: indexes serving the filters and sorts of the big lists, so that a page (deep ones
 * included) and its window count read an index in the list's order instead of sorting every row.
 * Issues and merge requests: per project (and per author for `GET /issues`), by created_at or
 * updated_at then id, live rows only; the state filter reads the same index. Projects: each
 * `order_by` column. Builds: by project and status, id descending.
 */
export class ListIndexes1733700001000 implements MigrationInterface {
  name = 'ListIndexes1733700001000';

  async up(q: QueryRunner): Promise<void> {
    const indexes = [
      `issues_project_created_idx ON issues (project_id, created_at, id) WHERE deleted_at IS NULL`,
      `issues_project_updated_idx ON issues (project_id, updated_at, id) WHERE deleted_at IS NULL`,
      `issues_project_state_created_idx ON issues (project_id, state, created_at, id) WHERE deleted_at IS NULL`,
      `issues_author_created_idx ON issues (author_id, created_at, id) WHERE deleted_at IS NULL`,
      `issues_milestone_created_idx ON issues (milestone_id, created_at, id) WHERE deleted_at IS NULL`,
      `merge_requests_project_live_created_idx ON merge_requests (project_id, created_at, id) WHERE deleted_at IS NULL`,
      `merge_requests_project_live_updated_idx ON merge_requests (project_id, updated_at, id) WHERE deleted_at IS NULL`,
      `merge_requests_project_state_idx ON merge_requests (project_id, state, created_at, id) WHERE deleted_at IS NULL`,
      `projects_created_idx ON projects (created_at, id)`,
      `projects_updated_idx ON projects (updated_at, id)`,
      `projects_last_activity_idx ON projects (last_activity_at, id)`,
      `projects_name_idx ON projects (name, id)`,
      `projects_path_idx ON projects (path, id)`,
      `projects_namespace_idx ON projects (namespace_id, id)`,
      `commit_statuses_project_status_idx ON commit_statuses (project_id, status, id)`,
      `ci_builds_pipeline_idx ON ci_builds (pipeline_id)`,
    ];
    for (const ix of indexes) await q.query(`CREATE INDEX ${ix}`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const name of [
      'issues_project_created_idx',
      'issues_project_updated_idx',
      'issues_project_state_created_idx',
      'issues_author_created_idx',
      'issues_milestone_created_idx',
      'merge_requests_project_live_created_idx',
      'merge_requests_project_live_updated_idx',
      'merge_requests_project_state_idx',
      'projects_created_idx',
      'projects_updated_idx',
      'projects_last_activity_idx',
      'projects_name_idx',
      'projects_path_idx',
      'projects_namespace_idx',
      'commit_statuses_project_status_idx',
      'ci_builds_pipeline_idx',
    ]) {
      await q.query(`DROP INDEX IF EXISTS ${name}`);
    }
  }
}
