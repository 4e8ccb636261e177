import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import { Client } from 'pg';
import { apiError } from '../common/errors/domain-errors';
import { Logger } from '../common/http/logger';
import { APP_CONFIG, AppConfig } from '../config/config';

/** Advisory-lock namespace of repository writes (`glv3`), the first key of pg_try_advisory_lock(int, int). */
const LOCK_CLASS = 0x676c7633;
/**
 * The turnstile's namespace (`glv4`): an exclusive holder takes it first and keeps it until it lets go of
 * the lock, and a shared holder passes through it (a transaction-scoped shared lock, released as its
 * statement ends), so shared holders arriving on other instances cannot keep a waiting exclusive one out.
 */
const TURNSTILE_CLASS = 0x676c7634;
/** How long a write waits for the repository before giving up with 503. */
const DEFAULT_WAIT_MS = 120_000;

/**
 * `exclusive`: the API's writes (files, merges, branch and tag create and delete), which read the
 * repository, decide, then move a ref. `shared`: pushes, whose `receive-pack` checks and moves its refs
 * itself (compare-and-swap, per ref), so pushes to one repository run side by side while no API write does.
 */
export type LockMode = 'exclusive' | 'shared';

interface Waiter {
  shared: boolean;
  grant: () => void;
}

/** One repository's holders and queue in this process. */
interface LocalLock {
  holders: number;
  shared: boolean;
  queue: Waiter[];
}

/**
 * Repository writes (push, files API, merge, branch and tag create and delete) are serialised per
 * repository, across every instance; pushes share the lock with each other (see LockMode). First a
 * process-local readers-writer queue per project, in arrival order (a shared request behind a waiting
 * exclusive one waits for it), then a PostgreSQL session advisory lock keyed by the project id — taken
 * with `pg_try_advisory_lock` / `pg_try_advisory_lock_shared` on one dedicated connection per instance
 * (never a pool connection: a write that waits holds nothing the lock holder needs, so waiting cannot
 * deadlock the pool), behind a turnstile so that pushes on other instances cannot starve an API write.
 * Under the lock, ref updates stay compare-and-swap, so a lost lock connection (its locks are released
 * by the server) degrades to CAS, never to a lost update.
 *
 * On the embedded default there is one instance and one connection: the process-local queue alone.
 */
@Injectable()
export class RepositoryLocks implements OnModuleDestroy {
  private readonly local = new Map<number, LocalLock>();
  private client?: Client;
  private connecting?: Promise<Client>;
  private closed = false;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly logger: Logger,
  ) {}

  /** Runs `work` holding the write lock of project `projectId`'s repository. */
  async run<T>(projectId: number, work: () => Promise<T>, waitMs = DEFAULT_WAIT_MS, mode: LockMode = 'exclusive'): Promise<T> {
    const release = await this.hold(projectId, waitMs, mode);
    try {
      return await work();
    } finally {
      await release();
    }
  }

  /**
   * Takes the write lock of project `projectId`'s repository and resolves to its release, for a holder
   * that gives it back before its own work ends (a push: the lock covers git's ref updates, not the
   * reactions after them). The release may be called more than once; only the first call releases.
   */
  async hold(projectId: number, waitMs = DEFAULT_WAIT_MS, mode: LockMode = 'exclusive'): Promise<() => Promise<void>> {
    const shared = mode === 'shared';
    await this.enter(projectId, shared);
    let client: Client | undefined;
    try {
      if (this.config.databaseUrl) client = await this.acquire(projectId, shared, Date.now() + waitMs);
    } catch (e) {
      this.leave(projectId);
      throw e;
    }
    const [unlock, keys]: [string, number[]] = shared
      ? ['SELECT pg_advisory_unlock_shared($1::int, $2::int)', [LOCK_CLASS, projectId]]
      : ['SELECT pg_advisory_unlock($1::int, $3::int), pg_advisory_unlock($2::int, $3::int)', [LOCK_CLASS, TURNSTILE_CLASS, projectId]];
    let released: Promise<void> | undefined;
    return () =>
      (released ??= (async () => {
        // an unlock that fails means the lock connection is gone, and the server released its locks with it
        await client?.query(unlock, keys).catch((e: Error) => this.logger.warn('repository unlock failed', { project_id: projectId, error: e.message }));
        this.leave(projectId);
      })());
  }

  /** This process's turn: at once when nothing is held or queued (or shared is held and asked), else in arrival order. */
  private enter(projectId: number, shared: boolean): Promise<void> {
    let lock = this.local.get(projectId);
    if (!lock) this.local.set(projectId, (lock = { holders: 0, shared, queue: [] }));
    if (lock.queue.length === 0 && (lock.holders === 0 || (lock.shared && shared))) {
      lock.holders++;
      lock.shared = shared;
      return Promise.resolve();
    }
    return new Promise((grant) => lock.queue.push({ shared, grant }));
  }

  /** Gives back one hold; the queue's head (with the shared requests right behind a shared head) goes next. */
  private leave(projectId: number): void {
    const lock = this.local.get(projectId);
    if (!lock) return;
    lock.holders--;
    if (lock.holders > 0) return;
    const head = lock.queue[0];
    if (!head) {
      this.local.delete(projectId);
      return;
    }
    lock.shared = head.shared;
    while (lock.queue.length && (lock.holders === 0 || (head.shared && lock.queue[0].shared))) {
      lock.holders++;
      lock.queue.shift()!.grant();
    }
  }

  /**
   * The database's side of the lock, polled: an exclusive holder takes the turnstile, then the lock once
   * the shared holders are gone; a shared one takes the lock only through a free turnstile (one statement).
   */
  private async acquire(projectId: number, shared: boolean, deadline: number): Promise<Client> {
    let delay = 5;
    let turnstileOn: Client | undefined; // the connection whose session holds the turnstile (exclusive only)
    for (;;) {
      const client = await this.connect();
      if (!shared && turnstileOn !== client) {
        // (on a new connection after a lost one: the old session's turnstile went with it)
        const { rows } = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1::int, $2::int) AS ok', [TURNSTILE_CLASS, projectId]);
        if (rows[0]?.ok) turnstileOn = client;
      }
      if (shared || turnstileOn === client) {
        const { rows } = shared
          ? await client.query<{ ok: boolean }>(
              'SELECT CASE WHEN pg_try_advisory_xact_lock_shared($2::int, $3::int) THEN pg_try_advisory_lock_shared($1::int, $3::int) ELSE false END AS ok',
              [LOCK_CLASS, TURNSTILE_CLASS, projectId],
            )
          : await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1::int, $2::int) AS ok', [LOCK_CLASS, projectId]);
        if (rows[0]?.ok) return client;
      }
      if (Date.now() + delay > deadline) {
        if (turnstileOn === client) {
          await client
            .query('SELECT pg_advisory_unlock($1::int, $2::int)', [TURNSTILE_CLASS, projectId])
            .catch((e: Error) => this.logger.warn('repository turnstile unlock failed', { project_id: projectId, error: e.message }));
        }
        throw apiError(503, 'The repository is busy; try again');
      }
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, 100);
    }
  }

  private connect(): Promise<Client> {
    if (this.client) return Promise.resolve(this.client);
    if (this.closed) return Promise.reject(apiError(503, 'The server is shutting down'));
    this.connecting ??= (async () => {
      const client = new Client({ connectionString: this.config.databaseUrl, application_name: 'glv3-repository-locks' });
      client.on('error', (e) => {
        // its locks are released by the server; writes under them still compare-and-swap
        this.logger.warn('repository lock connection lost', { error: e.message });
        if (this.client === client) this.client = undefined;
        void client.end().catch(() => undefined);
      });
      await client.connect();
      this.client = client;
      return client;
    })().finally(() => (this.connecting = undefined));
    return this.connecting;
  }

  async onModuleDestroy(): Promise<void> {
    this.closed = true;
    const c = this.client;
    this.client = undefined;
    await c?.end().catch(() => undefined);
  }
}
