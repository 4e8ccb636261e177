import { randomBytes } from 'node:crypto';
import { constants, existsSync, WriteStream } from 'node:fs';
import { cp, mkdir, mkdtemp, open, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join, relative } from 'node:path';
import { pipeline } from 'node:stream/promises';
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
 *
 * The file holds the secret key, the SSH host private keys and every password hash and sealed
 * token: it is created readable and writable by its owner only (0600) before a byte is written,
 * whatever the umask, and appears under its name only once complete (written beside it, renamed).
 */

/** The backup file's mode: its owner's only. */
export const BACKUP_FILE_MODE = 0o600;

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
  /** Always BACKUP_FILE_MODE. */
  mode: number;
}

export interface RestoreResult {
  /** Tables whose rows were copied from the backup, and those rows. */
  tables: number;
  rows: number;
  /** Tables not copied but rebuilt from the copied ones, with the rows they hold now and held in the backup. */
  derived: { name: string; rows: number; inBackup: number }[];
  /** The migrations the backup had applied: this version's migrations made the schema, the table itself is not copied. */
  migrations: number;
  repositories: number;
}

/**
 * Writes the tar.gz of `staging` to `file`: a new file beside it, created 0600 (O_EXCL: never an
 * existing file or link) and chmod-ed to exactly 0600 before anything is written, renamed over
 * `file` once complete; removed on failure.
 */
async function writeArchive(staging: string, file: string): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  const partial = join(dirname(file), `.${basename(file)}.${process.pid}.${randomBytes(6).toString('hex')}.partial`);
  const fh = await open(partial, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, BACKUP_FILE_MODE);
  try {
    let out: WriteStream;
    try {
      await fh.chmod(BACKUP_FILE_MODE); // the umask may have taken bits away from 0600; it never adds any
      out = fh.createWriteStream({ flush: true }); // closes the handle when it ends or fails (fsync first)
    } catch (e) {
      await fh.close();
      throw e;
    }
    await pipeline(tar.create({ gzip: true, cwd: staging, portable: true }, ['.']), out);
    await rename(partial, file);
  } catch (e) {
    await rm(partial, { force: true });
    throw e;
  }
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
    await writeArchive(staging, file);
    return {
      file,
      tables: manifest.tables.length,
      rows: manifest.tables.reduce((a, t) => a + t.rows, 0),
      repositories: manifest.repositories.length,
      mode: BACKUP_FILE_MODE,
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
 * write over existing data unless `force`, which empties both first. The counts say what was
 * copied: `schema_migrations` is made by this version's migrations, and derived tables are rebuilt
 * from the copied rows, so neither is among the copied tables and rows.
 */
export async function restore(config: AppConfig, ds: DataSource, file: string, opts: { force?: boolean } = {}): Promise<RestoreResult> {
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
    const loaded = await loadDatabase(
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
    const dumped = new Map(manifest.tables.map((t) => [t.name, t.rows]));
    return {
      tables: loaded.copied.length,
      rows: loaded.copied.reduce((a, t) => a + t.rows, 0),
      derived: loaded.derived.map((d) => ({ ...d, inBackup: dumped.get(d.name) ?? 0 })),
      migrations: manifest.migrations.length,
      repositories: manifest.repositories.length,
    };
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}
