import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Frozen SQL: the optional request rate limit (RATE_LIMIT_PER_IP, RATE_LIMIT_PER_TOKEN) counts in
 * the database, so that every app instance behind the load balancer sees the same count. `key` is a
 * keyed digest of the IP or token: neither is stored in clear. One fixed window per key.
 */
export class RequestRateCounters1733600000000 implements MigrationInterface {
  name = 'RequestRateCounters1733600000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE request_rate_counters (
      key varchar(64) PRIMARY KEY,
      window_start timestamptz NOT NULL,
      requests integer NOT NULL
    )`);
    await q.query(`CREATE INDEX request_rate_counters_window_start ON request_rate_counters (window_start)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE request_rate_counters`);
  }
}
