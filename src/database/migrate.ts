import { loadConfig } from '../config/config';
import { DataFolderInUse } from './data-folder-lock';
import { openDatabase } from './data-source';
import { setLockRole } from './embedded-postgres';

/** `npm run migration:run`: applies pending migrations and exits. */
async function main(): Promise<void> {
  setLockRole('npm run migration:run');
  const db = await openDatabase(loadConfig(), { migrate: false });
  const applied = await db.dataSource.runMigrations({ transaction: 'each' });
  process.stdout.write(`${applied.length} migration(s) applied\n`);
  await db.close();
}

main().catch((e) => {
  process.stderr.write(e instanceof DataFolderInUse ? `${e.message}\n` : `migration failed: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
