import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import { Client } from 'pg';
import { TryAgainLater } from '../common/errors/domain-errors';
import { Logger } from '../common/logging/logger';
import { APP_CONFIG, AppConfig } from '../config/config';

/** Advisory-lock namespace of repository writes (`glv3`), the first key of pg_try_advisory_lock(int, int). */
const LOCK_CLASS = 0x676c7633;
/** How long a write waits for the repository before giving up with 503. */
const DEFAULT_WAIT_MS = 120_000;

/**
 * Repository writes (push, files API, merge, branch and tag create and delete) are serialised per
 * repository, across every instance: first a process-local queue per project (one waiter per
 * instance reaches the database), then a PostgreSQL session advisory lock keyed by the project id,
 * taken with `pg_try_advisory_lock` on one dedicated connection per instance (never a pool
 * connection: a write that waits holds nothing the lock holder needs, so waiting cannot deadlock
 * the pool). Under the lock, ref updates stay compare-and-swap, so a lost lock connection (its locks
 * are released by the server) degrades to CAS, never to a lost update.
 *
 * On the embedded default there is one instance and one connection: the process-local queue alone.
 */
@Injectable()
export class RepositoryLocks implements OnModuleDestroy {
  private readonly local = new Map<number, Promise<void>>();
  private client?: Client;
  private connecting?: Promise<Client>;
  private closed = false;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly logger: Logger,
  ) {}

  /** Runs `work` holding the write lock of project `projectId`'s repository. */
  async run<T>(projectId: number, work: () => Promise<T>, waitMs = DEFAULT_WAIT_MS): Promise<T> {
    const release = await this.hold(projectId, waitMs);
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
  async hold(projectId: number, waitMs = DEFAULT_WAIT_MS): Promise<() => Promise<void>> {
    const previous = this.local.get(projectId) ?? Promise.resolve();
    let open!: () => void;
    const mine = new Promise<void>((r) => (open = r));
    const tail = previous.then(() => mine);
    this.local.set(projectId, tail);
    const leaveQueue = () => {
      open();
      if (this.local.get(projectId) === tail) this.local.delete(projectId);
    };
    let client: Client | undefined;
    try {
      await previous;
      if (this.config.databaseUrl) client = await this.acquire(projectId, Date.now() + waitMs);
    } catch (e) {
      leaveQueue();
      throw e;
    }
    let released: Promise<void> | undefined;
    return () =>
      (released ??= (async () => {
        // an unlock that fails means the lock connection is gone, and the server released its locks with it
        await client
          ?.query('SELECT pg_advisory_unlock($1::int, $2::int)', [LOCK_CLASS, projectId])
          .catch((e: Error) => this.logger.warn('repository unlock failed', { project_id: projectId, error: e.message }));
        leaveQueue();
      })());
  }

  private async acquire(projectId: number, deadline: number): Promise<Client> {
    let delay = 5;
    for (;;) {
      const client = await this.connect();
      const { rows } = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1::int, $2::int) AS ok', [LOCK_CLASS, projectId]);
      if (rows[0]?.ok) return client;
      if (Date.now() + delay > deadline) throw new TryAgainLater('The repository is busy; try again');
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, 100);
    }
  }

  private connect(): Promise<Client> {
    if (this.client) return Promise.resolve(this.client);
    if (this.closed) return Promise.reject(new TryAgainLater('The server is shutting down'));
    this.connecting ??= (async () => {
      const client = new Client({ connectionString: this.config.databaseUrl, application_name: 'glv3-repository-locks' });
      client.on('error', (e) => {
        // its locks are released by the server; writes under them still compare-and-swap
        this.logger.warn('repository lock connection lost', { error: e.message });
        if (this.client === client) this.client = undefined;
        void client.end().catch((x: Error) => this.logger.debug('closing the lost lock connection failed', { error: x.message }));
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
    await c?.end().catch((e: Error) => this.logger.warn('closing the lock connection failed', { error: e.message }));
  }
}
