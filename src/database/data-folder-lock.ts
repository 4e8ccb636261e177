import { closeSync, openSync, statSync, unlinkSync } from 'node:fs';
import { createConnection, createServer, Server } from 'node:net';
import { join, relative, sep } from 'node:path';

/** Who holds a data folder: what the holder answers on its lock socket. */
export interface LockHolder {
  pid: number | null;
  role: string;
  /** A server, once it listens: its HTTP address and the last migration of its build (what `cli check` asks it). */
  listening?: { host: string; port: number };
  migration?: string;
}

/** What a holder adds to its answer, read at each probe (a server knows its address only once it listens). */
export type LockDetails = () => Pick<LockHolder, 'listening' | 'migration'>;

/** The embedded data folder is open in another process (a server or an admin CLI command). */
export class DataFolderInUse extends Error {
  constructor(
    readonly dir: string,
    readonly holder: LockHolder,
  ) {
    const shown = displayPath(dir);
    const who = `${holder.role === 'server' ? 'another server' : `a running \`${holder.role}\``}${holder.pid ? ` (pid ${holder.pid})` : ''}`;
    super(`data folder ${shown} is in use by ${who}; stop it, or set DATABASE_URL to share a PostgreSQL database between instances`);
  }
}

/** `./data/db` for a folder under the working directory, else the absolute path. */
function displayPath(dir: string): string {
  const rel = relative(process.cwd(), dir);
  return rel && !rel.startsWith('..') && !rel.startsWith(sep) ? `.${sep}${rel}` : dir;
}

const SOCKET = '.lock.sock';
const PROBE_TIMEOUT_MS = 3000;
// sun_path holds 108 bytes on Linux, 104 on macOS (with the terminating NUL)
const MAX_SOCKET_PATH = 100;
const GUARD_WAIT_MS = 10_000;

/**
 * An exclusive lock on a data folder that the operating system releases when the holder dies:
 * the holder LISTENS on a Unix-domain socket in the folder (`.lock.sock`). The kernel closes the
 * listening socket with the process however it ends (kill -9, OOM, crash), so a lock is never held by
 * a dead process — unlike a pid file, whose liveness check (`kill(pid, 0)`) is fooled by pid reuse
 * and, inside containers, by pid namespaces — and it needs no native module (Node has no flock).
 *
 *  - `bind` on an existing path fails (EADDRINUSE) however the file got there: a free lock is taken atomically;
 *  - a live holder accepts connections (the kernel does, even while its event loop is busy) and
 *    answers its pid: the refusal names it;
 *  - a socket file left by a dead holder refuses connections (ECONNREFUSED): it is stale, and removed.
 * Probing and removing a stale file is not atomic, so taking the lock is serialised between the
 * processes that try at once by a second socket in Linux's abstract namespace (no file, freed by the
 * kernel with its process), named after the folder's device and inode: two processes that both find
 * the same stale file can never both remove it and both take the lock.
 */
export class DataFolderLock {
  private constructor(
    private readonly server: Server,
    private readonly dirFd: number | undefined,
  ) {}

  /** Takes the lock on `dir` (which must exist) or throws DataFolderInUse. `role` is what a refused process is told. */
  static async acquire(dir: string, role: string, details: LockDetails = () => ({})): Promise<DataFolderLock> {
    // a long folder path is reached through the folder's descriptor (Linux), whose path is short
    let dirFd: number | undefined;
    if (Buffer.byteLength(join(dir, SOCKET)) > MAX_SOCKET_PATH) {
      if (process.platform !== 'linux') throw new Error(`data folder path too long for its lock socket (${dir}); use a shorter DATA_DIR`);
      dirFd = openSync(dir, 'r');
    }
    const address = dirFd === undefined ? join(dir, SOCKET) : `/proc/self/fd/${dirFd}/${SOCKET}`;
    const guard = await takeGuard(dir);
    try {
      for (let attempt = 0; attempt < 3; attempt++) {
        const server = await listen(address, () => JSON.stringify({ pid: process.pid, role, ...details() }) + '\n');
        if (server) return new DataFolderLock(server, dirFd);
        const holder = await probe(address);
        if (holder) throw new DataFolderInUse(dir, holder);
        unlinkStale(address);
      }
      throw new Error(`could not lock the data folder ${dir}: its lock file keeps reappearing`);
    } catch (e) {
      if (dirFd !== undefined) closeSync(dirFd);
      throw e;
    } finally {
      if (guard) await close(guard);
    }
  }

  /** Closing the server removes the socket file too (as the process' death releases the lock). */
  async release(): Promise<void> {
    await close(this.server);
    if (this.dirFd !== undefined) closeSync(this.dirFd);
  }
}

/** The abstract-namespace socket serialising lock takers of `dir` (Linux; elsewhere none). */
async function takeGuard(dir: string): Promise<Server | undefined> {
  if (process.platform !== 'linux') return undefined;
  const { dev, ino } = statSync(dir);
  const name = `\0gitlab-v3-data-folder-${dev}-${ino}`;
  const deadline = Date.now() + GUARD_WAIT_MS;
  for (;;) {
    const guard = await listen(name, () => '');
    if (guard) return guard;
    if (Date.now() > deadline) throw new Error(`could not lock the data folder ${dir}: another process is stuck taking its lock`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function unlinkStale(address: string): void {
  try {
    unlinkSync(address);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
}

function close(server: Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

/** Listens on `address`: the server, or undefined when the address is taken (held, or a stale file). */
function listen(address: string, answer: () => string): Promise<Server | undefined> {
  return new Promise((resolve, reject) => {
    const server = createServer((socket) => {
      socket.on('error', () => undefined);
      socket.end(answer());
    });
    server.once('error', (e: NodeJS.ErrnoException) => (e.code === 'EADDRINUSE' ? resolve(undefined) : reject(e)));
    server.listen(address, () => {
      server.unref(); // the lock never keeps a process alive on its own
      resolve(server);
    });
  });
}

/** The holder listening on `address`, or undefined when nobody listens there (stale or gone). */
function probe(address: string): Promise<LockHolder | undefined> {
  return new Promise((resolve) => {
    const socket = createConnection(address);
    let answer = '';
    let connected = false;
    const done = (holder: LockHolder | undefined) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(holder);
    };
    // connected but no answer (a holder whose event loop is stuck): still a live holder
    const timer = setTimeout(() => done({ pid: null, role: 'process' }), PROBE_TIMEOUT_MS);
    socket.on('connect', () => (connected = true));
    socket.on('data', (d: Buffer) => (answer += d.toString()));
    socket.on('end', () => done(parseHolder(answer)));
    socket.on('error', (e: NodeJS.ErrnoException) =>
      done(connected || (e.code !== 'ECONNREFUSED' && e.code !== 'ENOENT') ? { pid: null, role: 'process' } : undefined),
    );
  });
}

function parseHolder(answer: string): LockHolder {
  try {
    const h = JSON.parse(answer) as { pid?: unknown; role?: unknown; listening?: { host?: unknown; port?: unknown }; migration?: unknown };
    const holder: LockHolder = { pid: typeof h.pid === 'number' ? h.pid : null, role: typeof h.role === 'string' ? h.role : 'process' };
    const l = h.listening;
    if (l && typeof l.host === 'string' && typeof l.port === 'number' && Number.isInteger(l.port) && l.port > 0 && l.port < 65536) {
      holder.listening = { host: l.host, port: l.port };
    }
    if (typeof h.migration === 'string') holder.migration = h.migration;
    return holder;
  } catch {
    return { pid: null, role: 'process' };
  }
}
