import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Frozen SQL: Git LFS (issue 39 item 3), as GitLab 8.17's `lfs_objects` (one row per stored object, its
 * file content-addressed by `oid`) and `lfs_objects_projects` (which projects may serve it: a fork gets
 * its source's rows, never a copy of a file), and the per-project switch `projects.lfs_enabled` (null:
 * the instance's LFS_ENABLED, as 8.17's Project#lfs_enabled?).
 */
export class LfsObjects1734407000000 implements MigrationInterface {
  name = 'LfsObjects1734407000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE lfs_objects (
      id serial PRIMARY KEY,
      oid varchar(64) NOT NULL UNIQUE,
      size bigint NOT NULL CHECK (size >= 0),
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`);
    await q.query(`CREATE TABLE lfs_objects_projects (
      id serial PRIMARY KEY,
      lfs_object_id integer NOT NULL REFERENCES lfs_objects(id) ON DELETE CASCADE,
      project_id integer NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (project_id, lfs_object_id)
    )`);
    await q.query(`CREATE INDEX index_lfs_objects_projects_on_lfs_object_id ON lfs_objects_projects (lfs_object_id)`);
    await q.query(`ALTER TABLE projects ADD COLUMN lfs_enabled boolean`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE projects DROP COLUMN IF EXISTS lfs_enabled`);
    await q.query(`DROP TABLE IF EXISTS lfs_objects_projects`);
    await q.query(`DROP TABLE IF EXISTS lfs_objects`);
  }
}
