import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Frozen SQL: `projects (id, created_at)`, so that a member's project list (the ids from
 * project_authorizations, sorted by creation, the default order) reads its page and total from
 * the index alone instead of visiting each project's row (bench/authorized-projects.explain.js).
 */
export class ProjectsPageIndex1734200001000 implements MigrationInterface {
  name = 'ProjectsPageIndex1734200001000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX projects_id_created_idx ON projects (id, created_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS projects_id_created_idx`);
  }
}
