import { MigrationInterface, QueryRunner } from 'typeorm';

/** Frozen SQL: projects, project and group members, stars, events. */
export class ProjectsGroupsMembersEvents1732320000000 implements MigrationInterface {
  name = 'ProjectsGroupsMembersEvents1732320000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE projects (
        id serial PRIMARY KEY,
        name varchar(255) NOT NULL,
        path varchar(255) NOT NULL,
        description text,
        namespace_id integer NOT NULL REFERENCES namespaces(id) ON DELETE RESTRICT,
        creator_id integer REFERENCES users(id) ON DELETE SET NULL,
        visibility_level integer NOT NULL DEFAULT 0,
        default_branch varchar(255),
        issues_enabled boolean NOT NULL DEFAULT true,
        merge_requests_enabled boolean NOT NULL DEFAULT true,
        wiki_enabled boolean NOT NULL DEFAULT true,
        builds_enabled boolean NOT NULL DEFAULT true,
        snippets_enabled boolean NOT NULL DEFAULT true,
        container_registry_enabled boolean NOT NULL DEFAULT false,
        shared_runners_enabled boolean NOT NULL DEFAULT true,
        public_builds boolean NOT NULL DEFAULT true,
        archived boolean NOT NULL DEFAULT false,
        star_count integer NOT NULL DEFAULT 0,
        forked_from_project_id integer REFERENCES projects(id) ON DELETE SET NULL,
        import_url varchar(2048),
        import_status varchar(20) NOT NULL DEFAULT 'none',
        import_error text,
        runners_token_digest char(64) NOT NULL,
        runners_token_encrypted text NOT NULL,
        last_activity_at timestamptz NOT NULL DEFAULT now(),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT projects_visibility_check CHECK (visibility_level IN (0, 10, 20))
      )`);
    await q.query(`CREATE UNIQUE INDEX projects_namespace_path_key ON projects (namespace_id, lower(path))`);
    await q.query(`CREATE UNIQUE INDEX projects_namespace_name_key ON projects (namespace_id, lower(name))`);
    await q.query(`CREATE UNIQUE INDEX projects_runners_token_key ON projects (runners_token_digest)`);
    await q.query(`CREATE INDEX projects_forked_from_idx ON projects (forked_from_project_id)`);
    await q.query(`CREATE INDEX projects_visibility_idx ON projects (visibility_level)`);

    await q.query(`
      CREATE TABLE project_members (
        id serial PRIMARY KEY,
        project_id integer NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        user_id integer NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        access_level integer NOT NULL,
        notification_level integer NOT NULL DEFAULT 3,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT project_members_level_check CHECK (access_level IN (10, 20, 30, 40, 50))
      )`);
    await q.query(`CREATE UNIQUE INDEX project_members_key ON project_members (project_id, user_id)`);
    await q.query(`CREATE INDEX project_members_user_idx ON project_members (user_id)`);

    await q.query(`
      CREATE TABLE group_members (
        id serial PRIMARY KEY,
        namespace_id integer NOT NULL REFERENCES namespaces(id) ON DELETE CASCADE,
        user_id integer NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        access_level integer NOT NULL,
        notification_level integer NOT NULL DEFAULT 3,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT group_members_level_check CHECK (access_level IN (10, 20, 30, 40, 50))
      )`);
    await q.query(`CREATE UNIQUE INDEX group_members_key ON group_members (namespace_id, user_id)`);
    await q.query(`CREATE INDEX group_members_user_idx ON group_members (user_id)`);

    await q.query(`
      CREATE TABLE users_star_projects (
        id serial PRIMARY KEY,
        project_id integer NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        user_id integer NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE UNIQUE INDEX users_star_projects_key ON users_star_projects (user_id, project_id)`);
    await q.query(`CREATE INDEX users_star_projects_project_idx ON users_star_projects (project_id)`);

    await q.query(`
      CREATE TABLE events (
        id serial PRIMARY KEY,
        project_id integer REFERENCES projects(id) ON DELETE CASCADE,
        author_id integer REFERENCES users(id) ON DELETE SET NULL,
        action varchar(20) NOT NULL,
        target_id integer,
        target_type varchar(40),
        target_title text,
        title text,
        data jsonb,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX events_project_id_idx ON events (project_id, id DESC)`);
    await q.query(`CREATE INDEX events_author_id_idx ON events (author_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const t of ['events', 'users_star_projects', 'group_members', 'project_members', 'projects']) {
      await q.query(`DROP TABLE IF EXISTS ${t}`);
    }
  }
}
