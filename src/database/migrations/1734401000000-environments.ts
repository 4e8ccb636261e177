import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Frozen SQL: GitLab 8.17's environments and deployments (issue 38). An environment is named per
 * project (`name` and its generated `slug` unique in the project), `available` or `stopped`; a
 * deployment is recorded when a build with an `environment` succeeds, numbered per project (`iid`),
 * with its build (`deployable_id`, a commit status id: one deployment per build) and the name of the
 * manual action that stops it (`on_stop`). Both go with their project.
 */
export class Environments1734401000000 implements MigrationInterface {
  name = 'Environments1734401000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE environments (
        id serial PRIMARY KEY,
        project_id integer NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        name varchar(255) NOT NULL,
        slug varchar(24) NOT NULL,
        external_url varchar(255),
        environment_type varchar(255),
        state varchar(16) NOT NULL DEFAULT 'available' CHECK (state IN ('available', 'stopped')),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT environments_project_name_key UNIQUE (project_id, name),
        CONSTRAINT environments_project_slug_key UNIQUE (project_id, slug)
      )`);
    await q.query(`
      CREATE TABLE deployments (
        id serial PRIMARY KEY,
        iid integer NOT NULL,
        project_id integer NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        environment_id integer NOT NULL REFERENCES environments(id) ON DELETE CASCADE,
        ref varchar(255) NOT NULL,
        tag boolean NOT NULL DEFAULT false,
        sha varchar(40) NOT NULL,
        user_id integer REFERENCES users(id) ON DELETE SET NULL,
        deployable_type varchar(255),
        deployable_id integer REFERENCES commit_statuses(id) ON DELETE SET NULL,
        on_stop varchar(255),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT deployments_project_iid_key UNIQUE (project_id, iid),
        CONSTRAINT deployments_deployable_key UNIQUE (deployable_id)
      )`);
    await q.query(`CREATE INDEX deployments_environment_idx ON deployments (environment_id, id)`);
    await q.query(`CREATE INDEX deployments_project_ref_idx ON deployments (project_id, ref)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS deployments`);
    await q.query(`DROP TABLE IF EXISTS environments`);
  }
}
