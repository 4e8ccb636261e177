import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

/**
 * The zero-setup database: PGlite (Postgres compiled to WASM) served in-process over the
 * Postgres wire protocol on a private Unix socket, so the app reaches it with the same `pg`
 * driver, SQL and migrations as production. The caller uses a pool of ONE connection, so
 * transactions queue instead of interleaving on PGlite's single session.
 */
export class EmbeddedPostgres {
  private constructor(
    private readonly db: PGlite,
    private readonly server: PGLiteSocketServer,
    private readonly socketDir: string,
    private readonly ownsSocketDir: boolean,
  ) {}

  /** `dir` is the data folder, or `memory://` for a throw-away database. */
  static async start(dir: string): Promise<EmbeddedPostgres> {
    const inMemory = dir.startsWith('memory://');
    if (!inMemory) mkdirSync(dir, { recursive: true, mode: 0o700 });
    const db = await PGlite.create(inMemory ? undefined : dir);
    // A short, private folder for the socket (Unix socket paths are limited to ~107 bytes).
    const socketDir = mkdtempSync(join(tmpdir(), 'pgl-'));
    const server = new PGLiteSocketServer({ db, path: join(socketDir, '.s.PGSQL.5432'), maxConnections: 1 });
    await server.start();
    return new EmbeddedPostgres(db, server, socketDir, true);
  }

  /** pg connection options reaching this server. */
  get connectionOptions(): { host: string; port: number; username: string; database: string } {
    return { host: this.socketDir, port: 5432, username: 'postgres', database: 'postgres' };
  }

  async stop(): Promise<void> {
    await this.server.stop();
    await this.db.close();
    if (this.ownsSocketDir) rmSync(this.socketDir, { recursive: true, force: true });
  }
}
