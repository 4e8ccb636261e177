import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { DataSource } from 'typeorm';
import { BASE_OPTIONS } from './data-source';
import { EmbeddedPostgres, TEMPLATE_FILE } from './embedded-postgres';
import { MIGRATIONS } from './migrations';

/**
 * `npm run build` (postbuild): writes the embedded default's template data folder — PGlite's initdb
 * plus every migration of this build — so a first start loads it instead of running initdb in WASM
 * (seconds and hundreds of MB). It holds no secret: the secret key, tokens and users are made at
 * start. Rewritten only when the migrations or the PGlite version change.
 */
async function main(): Promise<void> {
  const pgliteVersion = (JSON.parse(readFileSync(join(dirname(require.resolve('@electric-sql/pglite')), '..', 'package.json'), 'utf8')) as { version: string })
    .version;
  const stamp = JSON.stringify({ pglite: pgliteVersion, migrations: MIGRATIONS.map((m) => m.name) });
  const stampFile = `${TEMPLATE_FILE}.json`;
  if (existsSync(TEMPLATE_FILE) && existsSync(stampFile) && readFileSync(stampFile, 'utf8') === stamp) return;
  const dir = mkdtempSync(join(tmpdir(), 'pgl-template-'));
  const embedded = await EmbeddedPostgres.start(join(dir, 'db'), undefined, { template: false, lock: false });
  try {
    const ds = new DataSource({ ...BASE_OPTIONS, ...embedded.connectionOptions, extra: { max: 1 }, entities: [] });
    await ds.initialize();
    await ds.runMigrations({ transaction: 'each' });
    await ds.query('CHECKPOINT');
    await ds.destroy();
    const tarball = await embedded.dump();
    writeFileSync(`${TEMPLATE_FILE}.tmp`, tarball);
    renameSync(`${TEMPLATE_FILE}.tmp`, TEMPLATE_FILE);
    writeFileSync(stampFile, stamp);
    process.stdout.write(`embedded template: ${MIGRATIONS.length} migrations, ${(tarball.length / 1048576).toFixed(1)} MB\n`);
  } finally {
    await embedded.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  // Without a template a first start still works (initdb at start), only slower: never fail the build for it.
  process.stderr.write(`embedded template not written: ${e instanceof Error ? e.message : String(e)}\n`);
});
