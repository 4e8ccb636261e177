import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Frozen SQL: the source head a merging user approved when setting "merge when build succeeds". The
 * automatic merge merges exactly that commit, and only while it is still the source head; a row
 * waiting from before this column (no approved sha) is never merged automatically.
 */
export class MergeWhenBuildSucceedsSha1734000003000 implements MigrationInterface {
  name = 'MergeWhenBuildSucceedsSha1734000003000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE merge_requests ADD COLUMN merge_when_build_succeeds_sha varchar(40)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE merge_requests DROP COLUMN IF EXISTS merge_when_build_succeeds_sha`);
  }
}
