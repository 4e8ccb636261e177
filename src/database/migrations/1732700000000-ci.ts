import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Frozen SQL: CI pipelines, builds, runners, variables and triggers.
 *
 * A build is a commit status (GitLab's STI `Ci::Build < CommitStatus`), stored as class-table
 * inheritance: its status, name, stage, ref, sha and times live in `commit_statuses` (so the commit
 * status API, combined statuses and merge-when-build-succeeds see builds), and what only builds have
 * lives in `ci_builds`, keyed by the same id. Tokens are stored as keyed digests (plus an encrypted
 * copy where they must be shown or masked again).
 */
export class Ci1732700000000 implements MigrationInterface {
  name = 'Ci1732700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE projects
      ADD COLUMN build_timeout integer NOT NULL DEFAULT 3600,
      ADD COLUMN build_allow_git_fetch boolean NOT NULL DEFAULT true,
      ADD COLUMN build_coverage_regex varchar(255)`);
    await q.query(`ALTER TABLE application_settings
      ADD COLUMN runners_registration_token_digest char(64),
      ADD COLUMN runners_registration_token_encrypted text,
      ADD COLUMN max_artifacts_size integer NOT NULL DEFAULT 100`);

    await q.query(`
      CREATE TABLE ci_runners (
        id serial PRIMARY KEY,
        token_digest char(64) NOT NULL,
        token_encrypted text NOT NULL,
        description varchar(255),
        contacted_at timestamptz,
        active boolean NOT NULL DEFAULT true,
        is_shared boolean NOT NULL DEFAULT false,
        name varchar(255),
        version varchar(255),
        revision varchar(255),
        platform varchar(255),
        architecture varchar(255),
        run_untagged boolean NOT NULL DEFAULT true,
        tag_list text[] NOT NULL DEFAULT '{}',
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE UNIQUE INDEX ci_runners_token_key ON ci_runners (token_digest)`);

    await q.query(`
      CREATE TABLE ci_runner_projects (
        id serial PRIMARY KEY,
        runner_id integer NOT NULL REFERENCES ci_runners(id) ON DELETE CASCADE,
        project_id integer NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE UNIQUE INDEX ci_runner_projects_key ON ci_runner_projects (runner_id, project_id)`);
    await q.query(`CREATE INDEX ci_runner_projects_project_idx ON ci_runner_projects (project_id)`);

    await q.query(`
      CREATE TABLE ci_triggers (
        id serial PRIMARY KEY,
        project_id integer NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        token_digest char(64) NOT NULL,
        token_encrypted text NOT NULL,
        deleted_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE UNIQUE INDEX ci_triggers_token_key ON ci_triggers (token_digest)`);

    await q.query(`
      CREATE TABLE ci_trigger_requests (
        id serial PRIMARY KEY,
        trigger_id integer NOT NULL REFERENCES ci_triggers(id) ON DELETE CASCADE,
        variables jsonb,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);

    await q.query(`
      CREATE TABLE ci_variables (
        id serial PRIMARY KEY,
        project_id integer NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        key varchar(255) NOT NULL,
        value_encrypted text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE UNIQUE INDEX ci_variables_project_key ON ci_variables (project_id, key)`);

    await q.query(`
      CREATE TABLE ci_pipelines (
        id serial PRIMARY KEY,
        project_id integer NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        ref varchar(255),
        sha char(40) NOT NULL,
        before_sha char(40),
        tag boolean NOT NULL DEFAULT false,
        yaml_errors text,
        status varchar(20),
        user_id integer REFERENCES users(id) ON DELETE SET NULL,
        started_at timestamptz,
        finished_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT ci_pipelines_status_check CHECK (status IN ('pending', 'running', 'success', 'failed', 'canceled', 'skipped'))
      )`);
    await q.query(`CREATE INDEX ci_pipelines_project_sha_idx ON ci_pipelines (project_id, sha)`);

    await q.query(`ALTER TABLE commit_statuses DROP CONSTRAINT commit_statuses_status_check`);
    await q.query(`ALTER TABLE commit_statuses
      ADD CONSTRAINT commit_statuses_status_check CHECK (status IN ('pending', 'running', 'success', 'failed', 'canceled', 'skipped')),
      ADD COLUMN pipeline_id integer REFERENCES ci_pipelines(id) ON DELETE CASCADE`);
    // the build queue: pending statuses, oldest first
    await q.query(`CREATE INDEX commit_statuses_pending_idx ON commit_statuses (id) WHERE status = 'pending'`);
    await q.query(`CREATE INDEX commit_statuses_pipeline_idx ON commit_statuses (pipeline_id, name, id) WHERE pipeline_id IS NOT NULL`);

    await q.query(`
      CREATE TABLE ci_builds (
        id integer PRIMARY KEY REFERENCES commit_statuses(id) ON DELETE CASCADE,
        pipeline_id integer NOT NULL REFERENCES ci_pipelines(id) ON DELETE CASCADE,
        project_id integer NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        stage_idx integer NOT NULL,
        commands text NOT NULL,
        options jsonb NOT NULL DEFAULT '{}',
        yaml_variables jsonb NOT NULL DEFAULT '[]',
        tag_list text[] NOT NULL DEFAULT '{}',
        "when" varchar(20) NOT NULL DEFAULT 'on_success',
        tag boolean NOT NULL DEFAULT false,
        runner_id integer REFERENCES ci_runners(id) ON DELETE SET NULL,
        token_digest char(64),
        token_encrypted text,
        trigger_request_id integer REFERENCES ci_trigger_requests(id) ON DELETE SET NULL,
        user_id integer REFERENCES users(id) ON DELETE SET NULL,
        coverage double precision,
        trace_size bigint NOT NULL DEFAULT 0,
        artifacts_file varchar(255),
        artifacts_size bigint,
        artifacts_expire_at timestamptz,
        erased_at timestamptz,
        erased_by_id integer REFERENCES users(id) ON DELETE SET NULL
      )`);
    await q.query(`CREATE UNIQUE INDEX ci_builds_token_key ON ci_builds (token_digest)`);
    await q.query(`CREATE INDEX ci_builds_runner_idx ON ci_builds (runner_id)`);
    await q.query(`CREATE INDEX ci_builds_project_idx ON ci_builds (project_id, id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const t of ['ci_builds', 'ci_variables', 'ci_trigger_requests', 'ci_triggers', 'ci_runner_projects', 'ci_runners']) {
      await q.query(`DROP TABLE IF EXISTS ${t}`);
    }
    await q.query(`DELETE FROM commit_statuses WHERE pipeline_id IS NOT NULL`);
    await q.query(`ALTER TABLE commit_statuses DROP COLUMN pipeline_id`);
    await q.query(`DROP TABLE IF EXISTS ci_pipelines`);
    await q.query(`ALTER TABLE application_settings DROP COLUMN runners_registration_token_digest,
      DROP COLUMN runners_registration_token_encrypted, DROP COLUMN max_artifacts_size`);
    await q.query(`ALTER TABLE projects DROP COLUMN build_timeout, DROP COLUMN build_allow_git_fetch, DROP COLUMN build_coverage_regex`);
  }
}
