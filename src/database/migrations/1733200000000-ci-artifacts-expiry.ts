import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Frozen SQL: the artifacts-expiry job finds due artifacts by `artifacts_expire_at` (only builds with
 * an expiry are indexed), and the metrics count running builds as cheaply as pending ones.
 */
export class CiArtifactsExpiry1733200000000 implements MigrationInterface {
  name = 'CiArtifactsExpiry1733200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX ci_builds_artifacts_expire_idx ON ci_builds (artifacts_expire_at) WHERE artifacts_expire_at IS NOT NULL`);
    await q.query(`CREATE INDEX commit_statuses_running_idx ON commit_statuses (id) WHERE status = 'running'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX commit_statuses_running_idx`);
    await q.query(`DROP INDEX ci_builds_artifacts_expire_idx`);
  }
}
