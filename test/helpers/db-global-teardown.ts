import { janitorOf } from './db-global-setup';
import { databaseName, databases, dropDatabase, RUN_ENV, runOf, withAdmin } from './test-db';

/** jest globalTeardown: stops the janitor, drops this run's template and every test database left (several at once: their checkpoints coincide). */
export default async function globalTeardown(): Promise<void> {
  await janitorOf.testDbJanitor?.stop();
  janitorOf.testDbJanitor = undefined;
  const url = process.env.DATABASE_URL;
  const run = process.env[RUN_ENV];
  if (!url || !run) return;
  const base = databaseName(url);
  const left = await withAdmin(url, async (c) => (await databases(c)).filter((name) => runOf(base, name) === run));
  await Promise.all(
    Array.from({ length: Math.min(4, left.length) }, () =>
      withAdmin(url, async (c) => {
        for (let name; (name = left.shift());) await dropDatabase(c, name);
      }),
    ),
  );
}
