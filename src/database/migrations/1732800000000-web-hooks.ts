import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Frozen SQL: system hooks and project webhooks (GitLab's `web_hooks`, one table with `type`), their
 * delivery health, and the last deliveries of each hook. The URL is stored without userinfo; the
 * userinfo and the token are kept encrypted.
 */
export class WebHooks1732800000000 implements MigrationInterface {
  name = 'WebHooks1732800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE web_hooks (
        id serial PRIMARY KEY,
        type varchar(20) NOT NULL,
        project_id integer REFERENCES projects(id) ON DELETE CASCADE,
        url varchar(2048) NOT NULL,
        url_userinfo_encrypted text,
        token_encrypted text,
        push_events boolean NOT NULL DEFAULT true,
        tag_push_events boolean NOT NULL DEFAULT false,
        issues_events boolean NOT NULL DEFAULT false,
        merge_requests_events boolean NOT NULL DEFAULT false,
        note_events boolean NOT NULL DEFAULT false,
        build_events boolean NOT NULL DEFAULT false,
        wiki_page_events boolean NOT NULL DEFAULT false,
        enable_ssl_verification boolean NOT NULL DEFAULT true,
        recent_failures integer NOT NULL DEFAULT 0,
        last_status integer,
        last_error text,
        last_failure_at timestamptz,
        disabled_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT web_hooks_type_check CHECK (type IN ('SystemHook', 'ProjectHook')),
        CONSTRAINT web_hooks_project_check CHECK ((type = 'ProjectHook') = (project_id IS NOT NULL))
      )`);
    await q.query(`CREATE INDEX web_hooks_project_idx ON web_hooks (project_id) WHERE project_id IS NOT NULL`);
    await q.query(`CREATE INDEX web_hooks_system_idx ON web_hooks (id) WHERE type = 'SystemHook'`);
    await q.query(`
      CREATE TABLE web_hook_logs (
        id bigserial PRIMARY KEY,
        web_hook_id integer NOT NULL REFERENCES web_hooks(id) ON DELETE CASCADE,
        trigger varchar(40) NOT NULL,
        event varchar(40) NOT NULL,
        attempt integer NOT NULL DEFAULT 0,
        response_status integer,
        execution_duration real NOT NULL,
        response_body text,
        error text,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX web_hook_logs_hook_idx ON web_hook_logs (web_hook_id, id DESC)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS web_hook_logs`);
    await q.query(`DROP TABLE IF EXISTS web_hooks`);
  }
}
