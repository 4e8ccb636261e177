import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Frozen SQL: deploy keys (issue 39). A deploy key is a row of `keys` with `type = 'DeployKey'` and no
 * owner (as GitLab 8.17's single-table `Key`/`DeployKey`), so one unique fingerprint index keeps a key
 * from being both a user's key and a deploy key; `can_push` is the key's, as 8.17's. Which projects a
 * deploy key is enabled on is `deploy_keys_projects`. The `auth_changed` notification now also names a
 * deploy key (`key-<id>`, gitlab-shell's identity of a key) when the key row changes or goes, and when
 * it is disabled on a project, so the SSH server re-checks (and closes) that key's open connections.
 */
export class DeployKeys1734404000000 implements MigrationInterface {
  name = 'DeployKeys1734404000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE keys ALTER COLUMN user_id DROP NOT NULL`);
    await q.query(`ALTER TABLE keys ADD COLUMN type varchar(32)`);
    await q.query(`ALTER TABLE keys ADD COLUMN can_push boolean NOT NULL DEFAULT false`);
    await q.query(`
      ALTER TABLE keys ADD CONSTRAINT keys_owner_or_deploy_key
        CHECK ((type IS NOT DISTINCT FROM 'DeployKey') = (user_id IS NULL) AND (type IS NULL OR type = 'DeployKey'))`);
    await q.query(`CREATE INDEX keys_deploy_key_idx ON keys (id) WHERE type = 'DeployKey'`);
    await q.query(`
      CREATE TABLE deploy_keys_projects (
        id serial PRIMARY KEY,
        deploy_key_id integer NOT NULL REFERENCES keys(id) ON DELETE CASCADE,
        project_id integer NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE UNIQUE INDEX deploy_keys_projects_key ON deploy_keys_projects (project_id, deploy_key_id)`);
    await q.query(`CREATE INDEX deploy_keys_projects_deploy_key_idx ON deploy_keys_projects (deploy_key_id)`);
    await q.query(`
      CREATE OR REPLACE FUNCTION notify_auth_changed_key() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('auth_changed', COALESCE(OLD.user_id::text, 'key-' || OLD.id));
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE FUNCTION notify_auth_changed_deploy_key_project() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('auth_changed', 'key-' || OLD.deploy_key_id);
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE TRIGGER deploy_keys_projects_auth_changed AFTER UPDATE OR DELETE ON deploy_keys_projects
        FOR EACH ROW EXECUTE FUNCTION notify_auth_changed_deploy_key_project()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER IF EXISTS deploy_keys_projects_auth_changed ON deploy_keys_projects`);
    await q.query(`DROP FUNCTION IF EXISTS notify_auth_changed_deploy_key_project()`);
    await q.query(`DROP TABLE IF EXISTS deploy_keys_projects`);
    await q.query(`DELETE FROM keys WHERE type = 'DeployKey'`);
    await q.query(`
      CREATE OR REPLACE FUNCTION notify_auth_changed_key() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('auth_changed', OLD.user_id::text);
        RETURN NULL;
      END $$`);
    await q.query(`DROP INDEX IF EXISTS keys_deploy_key_idx`);
    await q.query(`ALTER TABLE keys DROP CONSTRAINT IF EXISTS keys_owner_or_deploy_key`);
    await q.query(`ALTER TABLE keys DROP COLUMN IF EXISTS can_push`);
    await q.query(`ALTER TABLE keys DROP COLUMN IF EXISTS type`);
    await q.query(`ALTER TABLE keys ALTER COLUMN user_id SET NOT NULL`);
  }
}
