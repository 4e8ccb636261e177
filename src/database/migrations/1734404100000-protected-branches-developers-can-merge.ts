import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Frozen SQL: `developers_can_merge` of a protected branch (GitLab 8.17's protect API flag, issue 39
 * item 2): developers may merge merge requests into it (by the API or when a build succeeds) and push a
 * new branch its pattern protects, as 8.17's merge access level DEVELOPER.
 */
export class ProtectedBranchesDevelopersCanMerge1734404100000 implements MigrationInterface {
  name = 'ProtectedBranchesDevelopersCanMerge1734404100000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE protected_branches ADD COLUMN developers_can_merge boolean NOT NULL DEFAULT false`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE protected_branches DROP COLUMN IF EXISTS developers_can_merge`);
  }
}
