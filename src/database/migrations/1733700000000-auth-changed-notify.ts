import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Frozen SQL: every change to a user row (state, token, password, admin flag, profile; deletion)
 * and to an OAuth access token (revocation, deletion) notifies `auth_changed` with the user's id,
 * on commit. Each app instance listens and drops what its authentication cache holds for that user,
 * whoever made the change: this instance, another one, or SQL run by hand.
 */
export class AuthChangedNotify1733700000000 implements MigrationInterface {
  name = 'AuthChangedNotify1733700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION notify_auth_changed_user() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('auth_changed', OLD.id::text);
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE TRIGGER users_auth_changed AFTER UPDATE OR DELETE ON users
        FOR EACH ROW EXECUTE FUNCTION notify_auth_changed_user()`);
    await q.query(`
      CREATE FUNCTION notify_auth_changed_token() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('auth_changed', OLD.resource_owner_id::text);
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE TRIGGER oauth_access_tokens_auth_changed AFTER UPDATE OR DELETE ON oauth_access_tokens
        FOR EACH ROW EXECUTE FUNCTION notify_auth_changed_token()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER IF EXISTS oauth_access_tokens_auth_changed ON oauth_access_tokens`);
    await q.query(`DROP TRIGGER IF EXISTS users_auth_changed ON users`);
    await q.query(`DROP FUNCTION IF EXISTS notify_auth_changed_token()`);
    await q.query(`DROP FUNCTION IF EXISTS notify_auth_changed_user()`);
  }
}
