import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Frozen SQL: the instance's `shared_runners_enabled` setting (GitLab's column of the same name):
 * the default of new projects' flag, and when off, shared runners take no builds at all.
 */
export class SharedRunnersSetting1733000000000 implements MigrationInterface {
  name = 'SharedRunnersSetting1733000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE application_settings ADD COLUMN shared_runners_enabled boolean NOT NULL DEFAULT true`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE application_settings DROP COLUMN shared_runners_enabled`);
  }
}
