import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Frozen SQL: the sign-in throttle lives in the database, so that every app instance (and a
 * restart) counts the same failures. `key` is a keyed digest of (IP, login): no address or login is
 * stored in clear.
 */
export class LoginAttempts1732550000000 implements MigrationInterface {
  name = 'LoginAttempts1732550000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE login_attempts (
      key varchar(64) PRIMARY KEY,
      failures integer NOT NULL,
      first_at timestamptz NOT NULL,
      locked_until timestamptz
    )`);
    await q.query(`CREATE INDEX login_attempts_first_at ON login_attempts (first_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE login_attempts`);
  }
}
