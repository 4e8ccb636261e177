import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';

/** The sign-in throttle's counters (table `login_attempts`), shared by every app instance. */
@Injectable()
export class LoginAttemptsRepository {
  constructor(private readonly ds: DataSource) {}

  /** The latest lock among `keys` that is still in force, in seconds from now (0: none). */
  async lockedFor(keys: string[]): Promise<number> {
    const rows: { seconds: number | null }[] = await this.ds.query(
      `SELECT ceil(extract(epoch FROM max(locked_until) - now()))::int AS seconds
         FROM login_attempts WHERE key = ANY($1) AND locked_until > now()`,
      [keys],
    );
    return rows[0]?.seconds ?? 0;
  }

  /**
   * Counts one failure for each key (a new window when the last one is over); locks keys that reach
   * `max`: until the window ends, or for `lockSeconds` from now when given (a ban).
   */
  async failed(keys: string[], max: number, windowSeconds: number, lockSeconds?: number): Promise<void> {
    await this.ds.query(
      `INSERT INTO login_attempts AS a (key, failures, first_at, locked_until)
         SELECT k, 1, now(), CASE WHEN $2 <= 1 THEN now() + make_interval(secs => coalesce($4::int, $3)) END FROM unnest($1::varchar[]) AS k
       ON CONFLICT (key) DO UPDATE SET
         failures = CASE WHEN a.first_at <= now() - make_interval(secs => $3) THEN 1 ELSE a.failures + 1 END,
         first_at = CASE WHEN a.first_at <= now() - make_interval(secs => $3) THEN now() ELSE a.first_at END,
         locked_until = CASE
           WHEN a.first_at <= now() - make_interval(secs => $3) THEN NULL
           WHEN a.failures + 1 >= $2 THEN coalesce(now() + make_interval(secs => $4::int), a.first_at + make_interval(secs => $3))
           ELSE a.locked_until END`,
      [keys, max, windowSeconds, lockSeconds ?? null],
    );
  }

  /** Forgets the failures counted for `keys`, but not a lock in force (a success must not lift a ban). */
  async forgetFailures(keys: string[]): Promise<void> {
    await this.ds.query(`DELETE FROM login_attempts WHERE key = ANY($1) AND (locked_until IS NULL OR locked_until <= now())`, [keys]);
  }

  async clear(keys: string[]): Promise<void> {
    await this.ds.query(`DELETE FROM login_attempts WHERE key = ANY($1)`, [keys]);
  }

  /** Forgets windows that are over and locks that have run out. */
  async prune(windowSeconds: number): Promise<void> {
    await this.ds.query(
      `DELETE FROM login_attempts WHERE first_at < now() - make_interval(secs => $1) AND (locked_until IS NULL OR locked_until < now())`,
      [windowSeconds],
    );
  }
}
