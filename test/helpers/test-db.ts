import { Client, escapeIdentifier } from 'pg';

/**
 * Test databases on PostgreSQL (DATABASE_URL set). The jest run's global setup (db-global-setup.ts)
 * builds one template database — every migration and pg-boss's schema, none of the rows an app makes
 * when it starts — and each startTestApp, or a spec that needs a database of its own, clones it with
 * CREATE DATABASE … TEMPLATE instead of emptying a schema and running every migration again.
 *
 * A database done with is renamed as such (`release`), and the run's janitor in the jest process drops
 * it in the background: a DROP DATABASE waits for a checkpoint of the whole server (seconds on a busy
 * one), which a test file need not wait for. The global teardown drops the rest.
 *
 * Names derive from DATABASE_URL's database, so runs with different DATABASE_URLs never meet; the run,
 * the jest worker and a counter keep them apart within one:
 *
 *   <db>_<run>_tpl              the template of a run (<run>: the jest process id in base 36)
 *   <db>_<run>_<worker>_<n>     a test database in use
 *   <db>_<run>_done_<worker>_<n>  released, to be dropped
 *
 * The database DATABASE_URL names is only connected to (to create and drop the others), never changed.
 */

/** The environment variable through which the global setup hands its run id to the test files. */
export const RUN_ENV = 'TEST_DB_RUN';

const MAX_NAME = 63; // PostgreSQL's identifier length: a longer name would be silently cut

export function databaseName(url: string): string {
  return decodeURIComponent(new URL(url).pathname.replace(/^\//, ''));
}

export function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${encodeURIComponent(name)}`;
  return u.toString();
}

export function templateName(base: string, run: string): string {
  return checked(`${base}_${run}_tpl`);
}

function checked(name: string): string {
  if (Buffer.byteLength(name) > MAX_NAME)
    throw new Error(`test database name ${name} is longer than ${MAX_NAME} bytes: use a shorter database name in DATABASE_URL`);
  return name;
}

export function isReleased(base: string, name: string): boolean {
  return runOf(base, name) !== undefined && name.slice(base.length + 1).includes('_done_');
}

/** The run a test database name belongs to (undefined for any other name). */
export function runOf(base: string, name: string): string | undefined {
  if (!name.startsWith(`${base}_`)) return undefined;
  return /^([0-9a-z]+)_(tpl|(done_)?\d+_\d+)$/.exec(name.slice(base.length + 1))?.[1];
}

/** Runs `fn` on a connection to the database DATABASE_URL names (the maintenance connection). */
export async function withAdmin<T>(url: string, fn: (c: Client) => Promise<T>): Promise<T> {
  const c = new Client({ connectionString: url });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

export async function databases(c: Client): Promise<string[]> {
  return (await c.query<{ datname: string }>('SELECT datname FROM pg_database ORDER BY datname')).rows.map((r) => r.datname);
}

/** Drops a database, ending its sessions; a template is made an ordinary database first. */
export async function dropDatabase(c: Client, name: string): Promise<void> {
  const id = escapeIdentifier(name);
  await c.query(`ALTER DATABASE ${id} WITH IS_TEMPLATE false`).catch(() => undefined); // absent: nothing to drop either
  await c.query(`DROP DATABASE IF EXISTS ${id} WITH (FORCE)`);
}

export interface TestDatabase {
  name: string;
  url: string;
  /**
   * Done with it: renamed for the janitor to drop (see above). Call it once the app on it is closed;
   * a database still in use (or never released) is dropped by the global teardown instead.
   */
  release(): Promise<void>;
}

let counter = 0;

/**
 * A new database of this test run: a clone of the run's template (migrated, as the app finds it
 * on its second start), or with `empty`, a database without any table (as a new install finds it).
 */
export async function createTestDatabase(opts: { empty?: boolean } = {}): Promise<TestDatabase> {
  const url = process.env.DATABASE_URL;
  if (!url) throw new Error('createTestDatabase: DATABASE_URL is not set');
  const run = process.env[RUN_ENV];
  if (!run) throw new Error(`createTestDatabase: ${RUN_ENV} is not set (jest's globalSetup, test/helpers/db-global-setup.ts, builds the template and sets it)`);
  const base = databaseName(url);
  const worker = process.env.JEST_WORKER_ID ?? '0';
  const from = opts.empty ? '' : ` TEMPLATE ${escapeIdentifier(templateName(base, run))}`;
  const done = (n: number) => checked(`${base}_${run}_done_${worker}_${n}`);
  const { name, n } = await withAdmin(url, async (c) => {
    for (;;) {
      // the counter restarts with each test file (jest loads this module again): skip the names an
      // earlier file of this worker used (only this worker makes names with its id: no race)
      const n = ++counter;
      const candidate = checked(`${base}_${run}_${worker}_${n}`);
      const taken = await c.query('SELECT 1 FROM pg_database WHERE datname = $1 OR datname = $2', [candidate, done(n)]);
      if (taken.rowCount) continue;
      await c.query(`CREATE DATABASE ${escapeIdentifier(candidate)}${from}`);
      return { name: candidate, n };
    }
  });
  let released: Promise<void> | undefined;
  return {
    name,
    url: withDatabase(url, name),
    release: () =>
      (released ??= withAdmin(url, (c) => c.query(`ALTER DATABASE ${escapeIdentifier(name)} RENAME TO ${escapeIdentifier(done(n))}`)).then(
        () => undefined,
        () => undefined, // still in use (an app a spec left open): the teardown drops it
      )),
  };
}

/** Whether a process (a run, a lock holder) still lives: EPERM means it does, under another user. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
