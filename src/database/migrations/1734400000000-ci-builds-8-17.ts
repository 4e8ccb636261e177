import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * GitLab 8.9–8.17's pipeline processing (decision 36): a build exists from its pipeline's creation
 * as `created`, is `skipped` when not reached and `manual` when it is a manual action reached, so
 * commit statuses (and pipelines, which may stay `created`) take those states. A build keeps its
 * job's `environment` (unexpanded, 8.17's `ci_builds.environment`) and `coverage` regex
 * (`ci_builds.coverage_regex`).
 */
export class CiBuildsStates1734400000000 implements MigrationInterface {
  name = 'CiBuildsStates1734400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE commit_statuses DROP CONSTRAINT commit_statuses_status_check`);
    await q.query(`ALTER TABLE commit_statuses ADD CONSTRAINT commit_statuses_status_check
      CHECK (status IN ('created', 'pending', 'running', 'success', 'failed', 'canceled', 'skipped', 'manual'))`);
    await q.query(`ALTER TABLE ci_pipelines DROP CONSTRAINT ci_pipelines_status_check`);
    await q.query(`ALTER TABLE ci_pipelines ADD CONSTRAINT ci_pipelines_status_check
      CHECK (status IN ('created', 'pending', 'running', 'success', 'failed', 'canceled', 'skipped', 'manual'))`);
    await q.query(`ALTER TABLE ci_builds ADD COLUMN environment varchar(255), ADD COLUMN coverage_regex varchar(255)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE ci_builds DROP COLUMN environment, DROP COLUMN coverage_regex`);
    await q.query(`UPDATE commit_statuses SET status = 'skipped' WHERE status IN ('created', 'manual')`);
    await q.query(`UPDATE ci_pipelines SET status = 'pending' WHERE status = 'created'`);
    await q.query(`UPDATE ci_pipelines SET status = 'skipped' WHERE status = 'manual'`);
    await q.query(`ALTER TABLE commit_statuses DROP CONSTRAINT commit_statuses_status_check`);
    await q.query(`ALTER TABLE commit_statuses ADD CONSTRAINT commit_statuses_status_check
      CHECK (status IN ('pending', 'running', 'success', 'failed', 'canceled', 'skipped'))`);
    await q.query(`ALTER TABLE ci_pipelines DROP CONSTRAINT ci_pipelines_status_check`);
    await q.query(`ALTER TABLE ci_pipelines ADD CONSTRAINT ci_pipelines_status_check
      CHECK (status IN ('pending', 'running', 'success', 'failed', 'canceled', 'skipped'))`);
  }
}
