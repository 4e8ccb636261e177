import { MigrationInterface, QueryRunner } from 'typeorm';

/** Frozen SQL: protected branches, releases, commit comments, commit statuses. */
export class Repository1732400000000 implements MigrationInterface {
  name = 'Repository1732400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE protected_branches (
        id serial PRIMARY KEY,
        project_id integer NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        name varchar(255) NOT NULL,
        developers_can_push boolean NOT NULL DEFAULT false,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE UNIQUE INDEX protected_branches_key ON protected_branches (project_id, name)`);

    await q.query(`
      CREATE TABLE releases (
        id serial PRIMARY KEY,
        project_id integer NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        tag varchar(255) NOT NULL,
        description text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE UNIQUE INDEX releases_key ON releases (project_id, tag)`);

    await q.query(`
      CREATE TABLE commit_comments (
        id serial PRIMARY KEY,
        project_id integer NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        commit_sha char(40) NOT NULL,
        author_id integer REFERENCES users(id) ON DELETE SET NULL,
        note text NOT NULL,
        path text,
        line integer,
        line_type varchar(10),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX commit_comments_sha_idx ON commit_comments (project_id, commit_sha, id)`);

    await q.query(`
      CREATE TABLE commit_statuses (
        id serial PRIMARY KEY,
        project_id integer NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        sha char(40) NOT NULL,
        ref varchar(255),
        name varchar(255) NOT NULL,
        stage varchar(255) NOT NULL DEFAULT 'external',
        status varchar(20) NOT NULL,
        target_url text,
        description text,
        allow_failure boolean NOT NULL DEFAULT false,
        author_id integer REFERENCES users(id) ON DELETE SET NULL,
        started_at timestamptz,
        finished_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT commit_statuses_status_check CHECK (status IN ('pending', 'running', 'success', 'failed', 'canceled'))
      )`);
    await q.query(`CREATE INDEX commit_statuses_sha_idx ON commit_statuses (project_id, sha, name, id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const t of ['commit_statuses', 'commit_comments', 'releases', 'protected_branches']) {
      await q.query(`DROP TABLE IF EXISTS ${t}`);
    }
  }
}
