import PgBoss from 'pg-boss';
import { DataSource } from 'typeorm';
import { BASE_OPTIONS } from '../../src/database/data-source';
import { alive, databaseName, databases, dropDatabase, isReleased, RUN_ENV, runOf, templateName, withAdmin, withDatabase } from './test-db';

/** The janitor of the run (see test-db.ts), stopped by the global teardown (globals of the setup are the teardown's). */
export interface Janitor {
  stop(): Promise<void>;
}

export const janitorOf = globalThis as { testDbJanitor?: Janitor };

/**
 * jest globalSetup: on PostgreSQL (DATABASE_URL set) builds this run's template database (see
 * test-db.ts) — every migration, run as the app runs them, and pg-boss's schema, installed by
 * pg-boss itself — drops what runs that ended without their teardown left behind, and starts the
 * janitor that drops released test databases while the tests run. Without DATABASE_URL nothing to
 * do: each app opens its own in-memory PGlite.
 */
export default async function globalSetup(): Promise<void> {
  const url = process.env.DATABASE_URL;
  if (!url) return;
  const run = process.pid.toString(36);
  process.env[RUN_ENV] = run; // read by the test files (jest's workers start after this, with this environment)
  const base = databaseName(url);
  const template = templateName(base, run);
  await withAdmin(url, async (c) => {
    for (const name of await databases(c)) {
      const other = runOf(base, name);
      if (other && other !== run && !alive(parseInt(other, 36))) await dropDatabase(c, name);
    }
    await dropDatabase(c, template);
    await c.query(`CREATE DATABASE ${c.escapeIdentifier(template)}`);
  });
  const templateUrl = withDatabase(url, template);
  const ds = new DataSource({ ...BASE_OPTIONS, url: templateUrl, entities: [] });
  await ds.initialize();
  try {
    await ds.runMigrations({ transaction: 'each' });
  } finally {
    await ds.destroy();
  }
  const boss = new PgBoss({ connectionString: templateUrl, schema: 'pgboss', migrate: true, supervise: false, schedule: false });
  await boss.start();
  await boss.stop({ graceful: false, wait: true });
  // no session may be connected to a template while it is copied: none can connect now
  await withAdmin(url, (c) => c.query(`ALTER DATABASE ${c.escapeIdentifier(template)} WITH IS_TEMPLATE true ALLOW_CONNECTIONS false`));
  janitorOf.testDbJanitor = janitor(url, base);
}

/** Drops the released databases of the run, one at a time, every second; `stop` waits for the current drop. */
function janitor(url: string, base: string): Janitor {
  let stopped = false;
  let current: Promise<void> = Promise.resolve();
  const sweep = async () => {
    await withAdmin(url, async (c) => {
      for (const name of await databases(c)) {
        if (stopped) return;
        if (isReleased(base, name) && runOf(base, name) === process.env[RUN_ENV]) await dropDatabase(c, name);
      }
    }).catch(() => undefined); // the teardown drops what is left
  };
  const timer = setInterval(() => {
    current = current.then(sweep);
  }, 1000);
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await current;
    },
  };
}
