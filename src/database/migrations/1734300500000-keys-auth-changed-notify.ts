import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Frozen SQL: every update or deletion of an SSH key notifies `auth_changed` with its owner's id, on
 * commit, as a change to the user row does (AuthChangedNotify1733700000000). The SSH server of each
 * app instance listens and closes the open connections that authenticated with a key that is gone
 * (or whose owner is blocked), whoever removed it: the API on any instance, a user's deletion, or
 * SQL run by hand.
 */
export class KeysAuthChangedNotify1734300500000 implements MigrationInterface {
  name = 'KeysAuthChangedNotify1734300500000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION notify_auth_changed_key() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('auth_changed', OLD.user_id::text);
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE TRIGGER keys_auth_changed AFTER UPDATE OR DELETE ON keys
        FOR EACH ROW EXECUTE FUNCTION notify_auth_changed_key()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER IF EXISTS keys_auth_changed ON keys`);
    await q.query(`DROP FUNCTION IF EXISTS notify_auth_changed_key()`);
  }
}
