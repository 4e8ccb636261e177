import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';

export interface RateCount {
  key: string;
  requests: number;
  /** Seconds until the key's window ends. */
  resetIn: number;
}

/** The request rate limit's counters (table `request_rate_counters`), shared by every app instance. */
@Injectable()
export class RateLimitRepository {
  constructor(private readonly ds: DataSource) {}

  /** Counts one request for each key (a new window when the last one is over) in one statement. */
  async hit(keys: string[], periodSeconds: number): Promise<RateCount[]> {
    // sorted: two requests upserting the same keys lock them in the same order (no deadlock)
    const rows: { key: string; requests: number; reset_in: number }[] = await this.ds.query(
      `INSERT INTO request_rate_counters AS c (key, window_start, requests)
         SELECT k, now(), 1 FROM unnest($1::varchar[]) AS k ORDER BY k
       ON CONFLICT (key) DO UPDATE SET
         requests = CASE WHEN c.window_start <= now() - make_interval(secs => $2) THEN 1 ELSE c.requests + 1 END,
         window_start = CASE WHEN c.window_start <= now() - make_interval(secs => $2) THEN now() ELSE c.window_start END
       RETURNING key, requests, greatest(1, ceil(extract(epoch FROM c.window_start + make_interval(secs => $2) - now())))::int AS reset_in`,
      [[...keys].sort(), periodSeconds],
    );
    return rows.map((r) => ({ key: r.key, requests: r.requests, resetIn: r.reset_in }));
  }

  /** Forgets windows that are over. */
  async prune(periodSeconds: number): Promise<void> {
    await this.ds.query(`DELETE FROM request_rate_counters WHERE window_start < now() - make_interval(secs => $1)`, [periodSeconds]);
  }
}
