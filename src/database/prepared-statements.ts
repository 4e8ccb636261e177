import { createHash } from 'node:crypto';
import { Client } from 'pg';

/** A statement text becomes a named prepared statement on its PREPARE_AFTER-th use. */
const PREPARE_AFTER = 3;
/** At most this many names per process (each connection prepares a name once, on its first use there, and keeps its plan: memory in every backend, and in this process on the embedded default). */
const MAX_NAMES = 250;
/** At most this many texts counted while they wait to be hot. */
const MAX_COUNTED = 2000;

/**
 * The pool's client class, with the app's hot statements as named prepared statements: PostgreSQL
 * then parses and plans a statement once per connection instead of on every request. Planning was
 * as costly as executing for the hottest reads (EXPLAIN on the large set: the project resolver
 * 2.2 ms planning for 0.2 ms executing; a builds page 6.3 ms for 5.5 ms), and on a small host
 * PostgreSQL's CPU is the app's throughput too; on the embedded default it runs on the app's own
 * thread. Only parameterised reads and writes are named, once they recur (so one-off texts never
 * accumulate), and their number is capped. The plans stay custom: `plan_cache_mode` is left at
 * PostgreSQL's default, which keeps custom plans when a generic one would cost more.
 *
 * Off with DB_PREPARED_STATEMENTS=false, for a connection pooler in transaction mode that cannot
 * keep a session's prepared statements (PgBouncer before 1.21).
 */
export function preparingClient<C extends typeof Client>(base: C): C {
  const counted = new Map<string, number>();
  const names = new Map<string, string>();
  const nameOf = (text: string): string | undefined => {
    const known = names.get(text);
    if (known || names.size >= MAX_NAMES) return known;
    const n = (counted.get(text) ?? 0) + 1;
    if (n < PREPARE_AFTER) {
      if (counted.size < MAX_COUNTED) counted.set(text, n);
      return undefined;
    }
    counted.delete(text);
    const name = `s${createHash('sha1').update(text).digest('hex').slice(0, 24)}`;
    names.set(text, name);
    return name;
  };
  /* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-member-access --
     one override for every overload of pg's Client.query (config or text, values or callback), each passed through as given */
  const PreparingClient = class extends (base as any) {
    query(config: any, values?: any, callback?: any): any {
      if (typeof config === 'string' && Array.isArray(values) && values.length > 0 && /^\s*(SELECT|WITH|INSERT|UPDATE|DELETE)\b/i.test(config)) {
        const name = nameOf(config);
        if (name) return super.query({ name, text: config, values }, callback);
      }
      return super.query(config, values, callback);
    }
  };
  /* eslint-enable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-member-access */
  return PreparingClient as unknown as C;
}
