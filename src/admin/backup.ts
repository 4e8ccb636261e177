import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import * as tar from 'tar';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/config';
import { dumpDatabase, emptyDatabase, hasUsers, loadDatabase } from '../database/logical-dump';
import { MIGRATIONS } from '../database/migrations';
import { bundleRepository, headRef, restoreRepository } from '../git/backup';
import { GitRunner } from '../git/git-runner';

/**
 * `backup` and `restore` of the admin CLI: one .tar.gz holding a consistent logical dump of the
 * database (every table of the `public` schema as JSON lines, read in one REPEATABLE READ snapshot),
 * a git bundle of every repository, and the rest of DATA_DIR that is state (artifacts, uploads, the
 * secret key). Logical rather than pg_dump so that the same file moves between embedded PGlite and
 * PostgreSQL either way. Caches (archive cache, git home, hook scripts) are rebuilt, not kept.
 */

const FORMAT = 1;
/** DATA_DIR entries that are not state: the embedded database (dumped logically) and rebuilt caches. */
const NOT_STATE = new Set(['db', 'repositories', 'git-home', 'git-hooks', 'archive-cache', 'initial_root_password']);

interface Manifest {
  format: number;
  created_at: string;
  migrations: string[];
  tables: { name: string; rows: number }[];
  repositories: { path: string; head: string; bundle: string | null }[];
  files: string[];
}

export interface BackupResult {
  file: string;
  tables: number;
  rows: number;
  repositories: number;
}

/** Bare repositories below `root` (folders ending in `.git` that hold a HEAD). */
async function findRepositories(root: string): Promise<string[]> {
  if (!existsSync(root)) return [];
  const out: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      if (!entry.isDirectory()) continue;
      const path = join(dir, entry.name);
      if (entry.name.endsWith('.git') && existsSync(join(path, 'HEAD'))) out.push(path);
      else await walk(path);
    }
  };
  await walk(root);
  return out.sort();
}

export async function backup(config: AppConfig, ds: DataSource, file: string): Promise<BackupResult> {
  const staging = await mkdtemp(join(tmpdir(), 'glv3-backup-'));
  try {
    await mkdir(join(staging, 'db'));
    await mkdir(join(staging, 'repositories'));
    await mkdir(join(staging, 'data'));
    const manifest: Manifest = { format: FORMAT, created_at: new Date().toISOString(), migrations: [], tables: [], repositories: [], files: [] };

    // 1. The database, in one snapshot.
    const dump = await dumpDatabase(ds, join(staging, 'db'));
    manifest.tables = dump.tables;
    manifest.migrations = dump.migrations;

    // 2. Repositories, as bundles.
    const runner = new GitRunner(join(staging, 'git-home'));
    const repoRoot = join(config.dataDir, 'repositories');
    let n = 0;
    for (const gitDir of await findRepositories(repoRoot)) {
      const rel = relative(repoRoot, gitDir);
      const bundle = `${String(n++).padStart(6, '0')}.bundle`;
      const kind = await bundleRepository(runner, gitDir, join(staging, 'repositories', bundle));
      manifest.repositories.push({ path: rel, head: await headRef(runner, gitDir), bundle: kind === 'bundled' ? bundle : null });
    }
    await rm(join(staging, 'git-home'), { recursive: true, force: true });

    // 3. The rest of DATA_DIR that is state.
    for (const entry of await readdir(config.dataDir)) {
      if (NOT_STATE.has(entry) || entry.startsWith('.')) continue;
      await cp(join(config.dataDir, entry), join(staging, 'data', entry), { recursive: true, preserveTimestamps: true });
      manifest.files.push(entry);
    }

    await writeFile(join(staging, 'manifest.json'), JSON.stringify(manifest, null, 2));
    await mkdir(dirname(file), { recursive: true });
    await tar.create({ gzip: true, file, cwd: staging, portable: true }, ['.']);
    return {
      file,
      tables: manifest.tables.length,
      rows: manifest.tables.reduce((a, t) => a + t.rows, 0),
      repositories: manifest.repositories.length,
    };
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

export class RestoreRefused extends Error {}

/** Whether the database holds any data (users exist) or DATA_DIR any repository. */
async function hasData(config: AppConfig, ds: DataSource): Promise<string | null> {
  if (await hasUsers(ds)) return 'the database is not empty';
  if ((await findRepositories(join(config.dataDir, 'repositories'))).length) return 'DATA_DIR already holds repositories';
  return null;
}

/**
 * Restores a backup into `ds` (migrated to this version first) and `config.dataDir`. Refuses to
 * write over existing data unless `force`, which empties both first.
 */
export async function restore(
  config: AppConfig,
  ds: DataSource,
  file: string,
  opts: { force?: boolean } = {},
): Promise<{ tables: number; rows: number; repositories: number }> {
  const existing = await hasData(config, ds);
  if (existing && !opts.force) throw new RestoreRefused(`${existing}: restore refused (use --force to replace it)`);
  const staging = await mkdtemp(join(tmpdir(), 'glv3-restore-'));
  try {
    await tar.extract({ file, cwd: staging, preserveOwner: false, strict: true });
    const manifest = JSON.parse(await readFile(join(staging, 'manifest.json'), 'utf8')) as Manifest;
    if (manifest.format !== FORMAT) throw new RestoreRefused(`unknown backup format ${manifest.format}`);
    const known = new Set(MIGRATIONS.map((m) => m.name));
    const unknown = manifest.migrations.filter((m) => !known.has(m));
    if (unknown.length) throw new RestoreRefused(`the backup is from a newer version (migrations ${unknown.join(', ')})`);

    if (opts.force) {
      await emptyDatabase(ds);
      for (const entry of await readdir(config.dataDir)) {
        if (entry === 'db') continue;
        await rm(join(config.dataDir, entry), { recursive: true, force: true });
      }
    }
    await ds.runMigrations({ transaction: 'each' });

    // 1. The database: every table emptied, then loaded in foreign-key order, sequences moved on.
    const rows = await loadDatabase(
      ds,
      join(staging, 'db'),
      manifest.tables.map((t) => t.name),
    );

    // 2. Repositories.
    const runner = new GitRunner(join(staging, 'git-home'));
    const repoRoot = join(config.dataDir, 'repositories');
    for (const r of manifest.repositories) {
      if (r.path.split(/[\\/]/).includes('..')) throw new RestoreRefused(`unsafe repository path in backup: ${r.path}`);
      await restoreRepository(runner, join(repoRoot, r.path), r.bundle ? join(staging, 'repositories', r.bundle) : null, r.head);
    }

    // 3. The rest of DATA_DIR.
    for (const entry of manifest.files) {
      if (entry.includes('/') || entry === '..' || NOT_STATE.has(entry)) continue;
      const src = join(staging, 'data', entry);
      if ((await stat(src)).isDirectory()) await cp(src, join(config.dataDir, entry), { recursive: true, preserveTimestamps: true });
      else await cp(src, join(config.dataDir, entry), { preserveTimestamps: true });
    }
    return { tables: manifest.tables.length, rows, repositories: manifest.repositories.length };
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}
