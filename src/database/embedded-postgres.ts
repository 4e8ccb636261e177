import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import * as tar from 'tar';
import { DataFolderLock, LockDetails } from './data-folder-lock';

/** Memory settings of the embedded server (GUCs given at start; Postgres' own defaults are sized for a dedicated host). */
export interface EmbeddedTuning {
  /** `shared_buffers`: PGlite's default is 128MB, all of it resident in the WASM heap once touched. */
  sharedBuffers: string;
  workMem: string;
  maintenanceWorkMem: string;
}

export const DEFAULT_EMBEDDED_TUNING: EmbeddedTuning = { sharedBuffers: '16MB', workMem: '4MB', maintenanceWorkMem: '16MB' };

/** The pre-initialised data folder written by `npm run build` (see embedded-template.ts), beside the compiled code. */
export const TEMPLATE_FILE = join(__dirname, 'embedded-template.tgz');

let lockRole = 'server';
/** What a process refused the data folder is told holds it: `server`, or the admin CLI's command. */
export function setLockRole(role: string): void {
  lockRole = role;
}

let lockDetails: ReturnType<LockDetails> = {};
/** What the holder adds to its answer once known: a server's address and migrations (`cli check` asks the running server). */
export function setLockDetails(details: ReturnType<LockDetails>): void {
  lockDetails = details;
}

/**
 * The zero-setup database: PGlite (Postgres compiled to WASM) served in-process over the
 * Postgres wire protocol on a private Unix socket, so the app reaches it with the same `pg`
 * driver, SQL and migrations as production. The caller uses a pool of ONE connection, so
 * transactions queue instead of interleaving on PGlite's single session.
 *
 * A new data folder starts from the build's template (initdb and the migrations of that build
 * already applied: `initdb` in WASM is most of a first start's time and memory); later migrations
 * still run at start as usual, so an older template only means more of them.
 */
export class EmbeddedPostgres {
  private constructor(
    private readonly db: PGlite,
    private readonly server: PGLiteSocketServer,
    private readonly socketDir: string,
    private readonly lock: DataFolderLock | undefined,
  ) {}

  /**
   * `dir` is the data folder, or `memory://` for a throw-away database. A data folder is locked for
   * the life of the process (see DataFolderLock): PGlite is a single-process database, and a second
   * process on the same files silently loses the first one's writes. `lock: false` only for a private folder.
   */
  static async start(
    dir: string,
    tuning: EmbeddedTuning = DEFAULT_EMBEDDED_TUNING,
    opts: { template?: string | false; lock?: boolean } = {},
  ): Promise<EmbeddedPostgres> {
    const inMemory = dir.startsWith('memory://');
    if (!inMemory) mkdirSync(dir, { recursive: true, mode: 0o700 });
    const lock = inMemory || opts.lock === false ? undefined : await DataFolderLock.acquire(dir, lockRole, () => lockDetails);
    try {
      return await EmbeddedPostgres.open(dir, inMemory, tuning, opts, lock);
    } catch (e) {
      await lock?.release();
      throw e;
    }
  }

  private static async open(
    dir: string,
    inMemory: boolean,
    tuning: EmbeddedTuning,
    opts: { template?: string | false },
    lock: DataFolderLock | undefined,
  ): Promise<EmbeddedPostgres> {
    const fresh = inMemory || !existsSync(join(dir, 'PG_VERSION'));
    const template = opts.template === false ? undefined : (opts.template ?? TEMPLATE_FILE);
    const useTemplate = fresh && !!template && existsSync(template);
    // on disk, the template is unpacked into the new folder, which PGlite then opens like an existing one
    // (loading it through PGlite's loadDataDir costs ~150 MB more resident memory for the life of the process)
    if (useTemplate && !inMemory) tar.x({ file: template, cwd: dir, sync: true, preservePaths: false });
    const loadDataDir = useTemplate && inMemory ? new Blob([readFileSync(template)]) : undefined;
    const db = await PGlite.create(inMemory ? undefined : dir, {
      startParams: [
        ...PGlite.defaultStartParams,
        '-c',
        `shared_buffers=${tuning.sharedBuffers}`,
        '-c',
        `work_mem=${tuning.workMem}`,
        '-c',
        `maintenance_work_mem=${tuning.maintenanceWorkMem}`,
      ],
      loadDataDir,
      // pg_trgm serves the `search` filters (LIKE '%term%') from trigram indexes (see the search indexes migration)
      extensions: { pg_trgm },
    });
    // A short, private folder for the socket (Unix socket paths are limited to ~107 bytes).
    const socketDir = mkdtempSync(join(tmpdir(), 'pgl-'));
    const server = new PGLiteSocketServer({ db, path: join(socketDir, '.s.PGSQL.5432'), maxConnections: 1 });
    await server.start();
    return new EmbeddedPostgres(db, server, socketDir, lock);
  }

  /** pg connection options reaching this server. */
  get connectionOptions(): { host: string; port: number; username: string; database: string } {
    return { host: this.socketDir, port: 5432, username: 'postgres', database: 'postgres' };
  }

  /** The whole data folder as a gzipped tarball (PGlite's own format, loadable by `start`). */
  async dump(): Promise<Buffer> {
    const file = await this.db.dumpDataDir('gzip');
    return Buffer.from(await file.arrayBuffer());
  }

  async stop(): Promise<void> {
    await this.server.stop();
    await this.db.close();
    rmSync(this.socketDir, { recursive: true, force: true });
    await this.lock?.release(); // only once PGlite has written its last page
  }
}
