import { loadConfig } from '../config/config';
import { openDatabase } from './data-source';

/** `npm run migration:run`: applies pending migrations and exits. */
async function main(): Promise<void> {
  const db = await openDatabase(loadConfig(), { migrate: false });
  const applied = await db.dataSource.runMigrations({ transaction: 'each' });
  process.stdout.write(`${applied.length} migration(s) applied\n`);
  await db.close();
}

main().catch((e) => {
  process.stderr.write(`migration failed: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
