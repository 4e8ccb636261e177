import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Frozen SQL: every update or deletion of a runner row notifies `runner_changed` with its id, on
 * commit. Each app instance listens and drops what its runner cache (token → runner, for the
 * runners' poll) holds for that runner, whoever made the change.
 */
export class RunnerChangedNotify1733900000000 implements MigrationInterface {
  name = 'RunnerChangedNotify1733900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION notify_runner_changed() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('runner_changed', OLD.id::text);
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE TRIGGER ci_runners_changed AFTER UPDATE OR DELETE ON ci_runners
        FOR EACH ROW EXECUTE FUNCTION notify_runner_changed()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER IF EXISTS ci_runners_changed ON ci_runners`);
    await q.query(`DROP FUNCTION IF EXISTS notify_runner_changed()`);
  }
}
