import { createReadStream, createWriteStream, existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { createInterface } from 'node:readline';
import { once } from 'node:events';
import * as tar from 'tar';
import { DataSource, QueryRunner } from 'typeorm';
import { AppConfig } from '../config/config';
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
const BATCH = 1000;

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

async function publicTables(q: QueryRunner | DataSource): Promise<{ name: string; ident: string }[]> {
  return q.query(
    `SELECT tablename AS name, quote_ident(tablename) AS ident FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename`,
  );
}

export async function backup(config: AppConfig, ds: DataSource, file: string): Promise<BackupResult> {
  const staging = await mkdtemp(join(tmpdir(), 'glv3-backup-'));
  try {
    await mkdir(join(staging, 'db'));
    await mkdir(join(staging, 'repositories'));
    await mkdir(join(staging, 'data'));
    const manifest: Manifest = { format: FORMAT, created_at: new Date().toISOString(), migrations: [], tables: [], repositories: [], files: [] };

    // 1. The database, in one snapshot.
    const qr = ds.createQueryRunner();
    await qr.connect();
    try {
      await qr.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      for (const t of await publicTables(qr)) {
        const out = createWriteStream(join(staging, 'db', `${t.name}.ndjson`));
        let rows = 0;
        // identifiers come from pg_tables, quoted by the server (quote_ident)
        // ordered by the first column (the id), so rows that refer to earlier rows of the same table load after them
        await qr.query(`DECLARE backup_rows NO SCROLL CURSOR FOR SELECT row_to_json(t)::text AS j FROM (SELECT * FROM ${t.ident} ORDER BY 1) t`);
        for (;;) {
          const batch: { j: string }[] = await qr.query(`FETCH ${BATCH} FROM backup_rows`);
          for (const r of batch) {
            if (!out.write(r.j + '\n')) await once(out, 'drain');
          }
          rows += batch.length;
          if (batch.length < BATCH) break;
        }
        await qr.query('CLOSE backup_rows');
        out.end();
        await once(out, 'close');
        manifest.tables.push({ name: t.name, rows });
        if (t.name === 'schema_migrations') {
          const names: { name: string }[] = await qr.query(`SELECT name FROM schema_migrations ORDER BY id`);
          manifest.migrations = names.map((n) => n.name);
        }
      }
      await qr.query('COMMIT');
    } finally {
      await qr.release();
    }

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
  const exists: { t: string | null }[] = await ds.query(`SELECT to_regclass('public.users')::text AS t`);
  if (exists[0].t) {
    const users: { n: number }[] = await ds.query(`SELECT count(*)::int AS n FROM users`);
    if (users[0].n > 0) return 'the database is not empty';
  }
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
      await ds.query('DROP SCHEMA public CASCADE');
      await ds.query('CREATE SCHEMA public');
      for (const entry of await readdir(config.dataDir)) {
        if (entry === 'db') continue;
        await rm(join(config.dataDir, entry), { recursive: true, force: true });
      }
    }
    await ds.runMigrations({ transaction: 'each' });

    // 1. The database: every table emptied, then loaded in foreign-key order, sequences moved on.
    let rows = 0;
    const tables = await publicTables(ds);
    const inBackup = new Map(manifest.tables.map((t) => [t.name, t]));
    const order = await loadOrder(ds, tables.map((t) => t.name));
    const ident = new Map(tables.map((t) => [t.name, t.ident]));
    await ds.transaction(async (m) => {
      const data = tables.filter((t) => t.name !== 'schema_migrations');
      if (data.length) await m.query(`TRUNCATE ${data.map((t) => t.ident).join(', ')} RESTART IDENTITY CASCADE`);
      for (const name of order) {
        if (name === 'schema_migrations' || !inBackup.has(name)) continue;
        const path = join(staging, 'db', `${name}.ndjson`);
        if (!existsSync(path)) continue;
        let batch: string[] = [];
        const flush = async () => {
          if (!batch.length) return;
          await m.query(`INSERT INTO ${ident.get(name)} SELECT * FROM json_populate_recordset(NULL::${ident.get(name)}, $1::json)`, [
            `[${batch.join(',')}]`,
          ]);
          rows += batch.length;
          batch = [];
        };
        for await (const line of createInterface({ input: createReadStream(path, 'utf8'), crlfDelay: Infinity })) {
          if (!line) continue;
          batch.push(line);
          if (batch.length >= BATCH) await flush();
        }
        await flush();
      }
      const serials: { seq: string; ident: string; col: string }[] = await m.query(
        `SELECT pg_get_serial_sequence(quote_ident(c.table_name), c.column_name) AS seq, quote_ident(c.table_name) AS ident,
                quote_ident(c.column_name) AS col
           FROM information_schema.columns c
          WHERE c.table_schema = 'public' AND pg_get_serial_sequence(quote_ident(c.table_name), c.column_name) IS NOT NULL`,
      );
      for (const s of serials) {
        await m.query(`SELECT setval($1::regclass, coalesce((SELECT max(${s.col}) FROM ${s.ident}), 0) + 1, false)`, [s.seq]);
      }
    });

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

/** Tables ordered so that every table comes after the tables its foreign keys point at. */
async function loadOrder(ds: DataSource, names: string[]): Promise<string[]> {
  const edges: { child: string; parent: string }[] = await ds.query(
    `SELECT c.conrelid::regclass::text AS child, c.confrelid::regclass::text AS parent
       FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace
      WHERE c.contype = 'f' AND n.nspname = 'public' AND c.conrelid <> c.confrelid`,
  );
  const strip = (s: string) => s.replace(/^"|"$/g, '');
  const deps = new Map(names.map((n) => [n, new Set<string>()]));
  for (const e of edges) deps.get(strip(e.child))?.add(strip(e.parent));
  const out: string[] = [];
  const seen = new Set<string>();
  const visit = (n: string, stack: Set<string>) => {
    if (seen.has(n) || stack.has(n)) return;
    stack.add(n);
    for (const p of deps.get(n) ?? []) visit(p, stack);
    stack.delete(n);
    seen.add(n);
    out.push(n);
  };
  for (const n of names) visit(n, new Set());
  return out;
}
