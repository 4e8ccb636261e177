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
   * Reserves one attempt for each key before its credential is checked, atomically (one statement:
   * concurrent requests and instances queue on the rows): counts it, in a new window when the last
   * one is over, unless the key already has `max` attempts in its window or a lock in force.
   * Returns the keys refused (none: go ahead and check).
   */
  async reserve(keys: string[], max: number, windowSeconds: number): Promise<string[]> {
    // sorted: two requests reserving the same keys lock them in the same order (no deadlock)
    const rows: { key: string }[] = await this.ds.query(
      `WITH granted AS (
         INSERT INTO login_attempts AS a (key, failures, first_at)
           SELECT k, 1, now() FROM unnest($1::varchar[]) AS k ORDER BY k
         ON CONFLICT (key) DO UPDATE SET
           failures = CASE WHEN a.first_at <= now() - make_interval(secs => $3) THEN 1 ELSE a.failures + 1 END,
           first_at = CASE WHEN a.first_at <= now() - make_interval(secs => $3) THEN now() ELSE a.first_at END,
           locked_until = CASE WHEN a.first_at <= now() - make_interval(secs => $3) THEN NULL ELSE a.locked_until END
         WHERE (a.locked_until IS NULL OR a.locked_until <= now())
           AND (a.first_at <= now() - make_interval(secs => $3) OR a.failures < $2)
         RETURNING a.key)
       SELECT k AS key FROM unnest($1::varchar[]) AS k WHERE k NOT IN (SELECT key FROM granted)`,
      [[...new Set(keys)].sort(), max, windowSeconds],
    );
    return rows.map((r) => r.key);
  }

  /** Gives back attempts reserved for `keys` that were not made (another key of the same attempt was refused). */
  async release(keys: string[]): Promise<void> {
    await this.ds.query(`UPDATE login_attempts SET failures = greatest(failures - 1, 0) WHERE key = ANY($1)`, [keys]);
  }

  /**
   * The reserved attempts failed: keys whose count reached `max` are locked until their window ends,
   * or for `lockSeconds` from now when given (a ban).
   */
  async failed(keys: string[], max: number, windowSeconds: number, lockSeconds?: number): Promise<void> {
    await this.ds.query(
      `UPDATE login_attempts
          SET locked_until = coalesce(now() + make_interval(secs => $4::int), first_at + make_interval(secs => $3))
        WHERE key = ANY($1) AND failures >= $2 AND (locked_until IS NULL OR locked_until <= now())`,
      [keys, max, windowSeconds, lockSeconds ?? null],
    );
  }

  /** Until when `keys` refuse attempts (their lock, else the end of a full window), and in how many seconds from now. */
  async refusedUntil(keys: string[], windowSeconds: number): Promise<{ until: Date; seconds: number }> {
    const rows: { until: Date | null; seconds: number | null }[] = await this.ds.query(
      `SELECT u AS until, greatest(1, ceil(extract(epoch FROM u - now())))::int AS seconds
         FROM (SELECT max(CASE WHEN locked_until > now() THEN locked_until ELSE first_at + make_interval(secs => $2) END) AS u
                 FROM login_attempts WHERE key = ANY($1)) s`,
      [keys, windowSeconds],
    );
    const until = rows[0]?.until ? new Date(rows[0].until) : new Date(Date.now() + windowSeconds * 1000);
    return { until, seconds: rows[0]?.seconds ?? windowSeconds };
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
    await this.ds.query(`DELETE FROM login_attempts WHERE first_at < now() - make_interval(secs => $1) AND (locked_until IS NULL OR locked_until < now())`, [
      windowSeconds,
    ]);
  }
}
