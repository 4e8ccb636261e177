import { once } from 'node:events';
import { createReadStream, createWriteStream, existsSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { DataSource, QueryRunner } from 'typeorm';
import { rowsOf } from './query-rows';

/**
 * The database half of the admin CLI's backup and restore: a logical dump of every table of the
 * `public` schema as JSON lines (`<table>.ndjson`), read in one REPEATABLE READ snapshot, and its
 * load into a migrated schema. Logical rather than pg_dump so that the same dump moves between
 * embedded PGlite and PostgreSQL either way. Identifiers come from the catalogue, quoted by the
 * server (quote_ident); nothing a user typed reaches the SQL.
 */

const BATCH = 1000;

/**
 * Tables whose rows triggers derive from the other tables' (migration 1734200000000): filled while
 * the tables they derive from load, so their dumped rows are not loaded again.
 */
const DERIVED_TABLES = new Set(['project_authorizations']);

export interface DumpResult {
  tables: { name: string; rows: number }[];
  migrations: string[];
}

/** Writes every table of `public` to `dir` in one snapshot; returns the row counts and the applied migrations. */
export async function dumpDatabase(ds: DataSource, dir: string): Promise<DumpResult> {
  const out: DumpResult = { tables: [], migrations: [] };
  const qr = ds.createQueryRunner();
  await qr.connect();
  try {
    await qr.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    for (const t of await publicTables(qr)) {
      const file = createWriteStream(join(dir, `${t.name}.ndjson`));
      let rows = 0;
      // identifiers come from pg_tables, quoted by the server (quote_ident)
      // ordered by the first column (the id), so rows that refer to earlier rows of the same table load after them
      await qr.query(`DECLARE backup_rows NO SCROLL CURSOR FOR SELECT row_to_json(t)::text AS j FROM (SELECT * FROM ${t.ident} ORDER BY 1) t`);
      for (;;) {
        const batch = rowsOf<JsonRow>(await qr.query(`FETCH ${BATCH} FROM backup_rows`));
        for (const r of batch) {
          if (!file.write(r.j + '\n')) await once(file, 'drain');
        }
        rows += batch.length;
        if (batch.length < BATCH) break;
      }
      await qr.query('CLOSE backup_rows');
      file.end();
      await once(file, 'close');
      out.tables.push({ name: t.name, rows });
      if (t.name === 'schema_migrations') {
        const names = rowsOf<MigrationRow>(await qr.query(`SELECT name FROM schema_migrations ORDER BY id`));
        out.migrations = names.map((n) => n.name);
      }
    }
    await qr.query('COMMIT');
  } finally {
    await qr.release();
  }
  return out;
}

/** Whether the database holds users (a database in use). */
export async function hasUsers(ds: DataSource): Promise<boolean> {
  const exists: { t: string | null }[] = await ds.query(`SELECT to_regclass('public.users')::text AS t`);
  if (!exists[0].t) return false;
  const users: { n: number }[] = await ds.query(`SELECT count(*)::int AS n FROM users`);
  return users[0].n > 0;
}

/** Drops and re-creates the `public` schema (restore --force). */
export async function emptyDatabase(ds: DataSource): Promise<void> {
  await ds.query('DROP SCHEMA public CASCADE');
  await ds.query('CREATE SCHEMA public');
}

/** What `loadDatabase` did: the tables copied from the dump and their rows, and the derived tables rebuilt (their rows now). */
export interface LoadResult {
  copied: { name: string; rows: number }[];
  derived: { name: string; rows: number }[];
}

/**
 * Loads the dumped tables `names` from `dir` into the migrated schema: every table emptied, then
 * loaded in foreign-key order, sequences moved on past the loaded ids; one transaction. The derived
 * tables are not loaded (their triggers fill them from the loaded rows) and `schema_migrations` is
 * this version's own.
 */
export async function loadDatabase(ds: DataSource, dir: string, names: string[]): Promise<LoadResult> {
  const result: LoadResult = { copied: [], derived: [] };
  const tables = await publicTables(ds);
  const inBackup = new Set(names);
  const order = await loadOrder(
    ds,
    tables.map((t) => t.name),
  );
  const ident = new Map(tables.map((t) => [t.name, t.ident]));
  await ds.transaction(async (m) => {
    const data = tables.filter((t) => t.name !== 'schema_migrations');
    if (data.length) await m.query(`TRUNCATE ${data.map((t) => t.ident).join(', ')} RESTART IDENTITY CASCADE`);
    for (const name of order) {
      if (name === 'schema_migrations' || !inBackup.has(name) || DERIVED_TABLES.has(name)) continue;
      const path = join(dir, `${name}.ndjson`);
      if (!existsSync(path)) continue;
      let batch: string[] = [];
      let copied = 0;
      const flush = async () => {
        if (!batch.length) return;
        await m.query(`INSERT INTO ${ident.get(name)} SELECT * FROM json_populate_recordset(NULL::${ident.get(name)}, $1::json)`, [`[${batch.join(',')}]`]);
        copied += batch.length;
        batch = [];
      };
      for await (const line of createInterface({ input: createReadStream(path, 'utf8'), crlfDelay: Infinity })) {
        if (!line) continue;
        batch.push(line);
        if (batch.length >= BATCH) await flush();
      }
      await flush();
      result.copied.push({ name, rows: copied });
    }
    for (const name of order.filter((n) => DERIVED_TABLES.has(n))) {
      const [{ n }] = await m.query<{ n: number }[]>(`SELECT count(*)::int AS n FROM ${ident.get(name)}`);
      result.derived.push({ name, rows: n });
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
  return result;
}

/** A row of each statement below: a table's row as JSON, a migration's name, a public table. */
interface JsonRow {
  j: string;
}
interface MigrationRow {
  name: string;
}
interface TableRow {
  name: string;
  ident: string;
}

async function publicTables(q: QueryRunner | DataSource): Promise<TableRow[]> {
  return rowsOf<TableRow>(
    await q.query(`SELECT tablename AS name, quote_ident(tablename) AS ident FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename`),
  );
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
