import { Inject, Injectable, OnApplicationBootstrap, BeforeApplicationShutdown } from '@nestjs/common';
import PgBoss from 'pg-boss';
import { QueryRunner } from 'typeorm';
import { Logger } from '../common/logging/logger';
import { APP_CONFIG, AppConfig } from '../config/config';
import { backgroundWork } from '../database/query-counter';
import { Tx } from '../database/transactions';
import { QueueRepository } from './queue.repository';
import { addGaugeSource, queueJobFailed } from '../metrics/registry';

/** A job's own data and its attempt number (0 on the first run). */
export interface QueueJob<T> {
  id: string;
  data: T;
  retryCount: number;
  retryLimit: number;
}

/** Thrown by a handler when another attempt cannot succeed: the job is failed at once, not retried (the message is kept as its output). */
export class PermanentJobError extends Error {}

export interface QueueDefinition<T> {
  /** Runs one job. Throwing fails this attempt: it is retried (with backoff) until `retryLimit`. */
  handler: (job: QueueJob<T>) => Promise<void>;
  retryLimit?: number;
  /** Seconds before the first retry; doubled on each later one when `retryBackoff`. */
  retryDelay?: number;
  retryBackoff?: boolean;
  /** A job running longer than this is failed (and retried): a worker that died mid-job gives its work back. */
  expireInSeconds?: number;
  /** Jobs fetched at once by a worker and run concurrently (each completes or fails on its own). */
  batchSize?: number;
  /** Workers polling this queue in this instance (each runs one batch at a time). */
  workers?: number;
}

interface Registered {
  name: string;
  def: QueueDefinition<unknown>;
  workerIds: string[];
}

/**
 * The one durable job queue of the app (pg-boss on the app's PostgreSQL). Areas register their
 * queues in `onModuleInit` and send jobs; a job sent with `tx` is written by that transaction (the
 * outbox: rolled back → never runs). Jobs survive restarts, retry with backoff, and each runs once
 * across all instances (row locks with SKIP LOCKED).
 *
 * pg-boss reaches the database through the app's own `pg` pool (its `db` option), so on the embedded
 * default it shares PGlite's single connection instead of opening a second session.
 */
@Injectable()
export class QueueService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly boss: PgBoss;
  private readonly queues = new Map<string, Registered>();
  private started?: Promise<void>;
  private stopped = false;
  /** Queues to wake when a transaction that sent jobs to them commits. */
  private readonly pendingWake = new WeakMap<QueryRunner, Set<string>>();

  constructor(
    private readonly repo: QueueRepository,
    private readonly logger: Logger,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.boss = new PgBoss({
      db: repo.poolDb(),
      schema: 'pgboss',
      supervise: config.queue.workers,
      schedule: false,
      migrate: true,
      pollingIntervalSeconds: config.queue.pollSeconds,
      maintenanceIntervalSeconds: 60,
    });
    this.boss.on('error', (e: Error) => this.logger.error('queue error', { error: e.message }));
    // jobs sent in a transaction become visible at its commit: wake this instance's workers then
    repo.onTransactionEnd({
      commit: (qr) => {
        const names = this.pendingWake.get(qr);
        if (!names) return;
        this.pendingWake.delete(qr);
        for (const name of names) this.wake(name);
      },
      rollback: (qr) => this.pendingWake.delete(qr),
    });
    // queue depth and failures by queue and state, database-wide (metrics)
    this.removeGauge = addGaugeSource('queue_jobs', () => this.flatCounts(), { shared: true });
  }

  private readonly removeGauge: () => void;

  private async flatCounts(): Promise<Record<string, number>> {
    if (!this.started || this.stopped) return {};
    const out: Record<string, number> = {};
    for (const [queue, states] of Object.entries(await this.counts())) {
      for (const state of ['created', 'retry', 'active', 'completed', 'cancelled', 'failed']) out[`${queue}|${state}`] = states[state] ?? 0;
    }
    return out;
  }

  /**
   * Declares a queue and its handler. Call it from `onModuleInit`: the queue is created and its workers
   * start when the app is up. (Registered later, it is set up at once; the promise tells when.)
   */
  register<T>(name: string, def: QueueDefinition<T>): Promise<void> {
    if (this.queues.has(name)) throw new Error(`queue ${name} registered twice`);
    const q: Registered = { name, def: def as QueueDefinition<unknown>, workerIds: [] };
    this.queues.set(name, q);
    return this.started ? this.started.then(() => this.setup(q)) : Promise.resolve();
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.start();
    for (const [name, seconds] of this.periodic) await this.schedule(name, seconds, false);
  }

  private readonly periodic = new Map<string, number>();

  /**
   * Periodic work without a timer in memory: a job that, when it has run (or failed), enqueues its
   * successor `everySeconds` later. At most one job per time slot across every instance (singleton
   * per slot), so the chain survives restarts, is started by whichever instance comes up first, and
   * never runs twice at once. Call it from `onModuleInit`.
   */
  every(name: string, everySeconds: number, handler: () => Promise<void>, opts: { expireInSeconds?: number } = {}): Promise<void> {
    this.periodic.set(name, everySeconds);
    const done = this.register(name, {
      retryLimit: 0,
      expireInSeconds: opts.expireInSeconds ?? 600,
      handler: async () => {
        try {
          await handler();
        } finally {
          await this.schedule(name, everySeconds, true);
        }
      },
    });
    // registered after the app started: start the chain now
    return this.started ? done.then(() => this.schedule(name, everySeconds, false)) : done;
  }

  private async schedule(name: string, everySeconds: number, next: boolean): Promise<void> {
    await this.send(
      name,
      {},
      {
        startAfterSeconds: next ? everySeconds : undefined,
        singletonKey: 'periodic',
        singletonSeconds: everySeconds,
        singletonNextSlot: next,
      },
    );
  }

  /** Starts pg-boss (installing or migrating its schema), creates the queues, starts the workers. */
  start(): Promise<void> {
    this.started ??= (async () => {
      await this.boss.start();
      // one read of every queue's settings: a restart then writes only the queues whose settings changed
      const existing = new Map((await this.boss.getQueues()).map((x) => [x.name, x as unknown as Record<string, unknown>]));
      for (const q of this.queues.values()) await this.setup(q, existing);
    })();
    return this.started;
  }

  private async setup(q: Registered, existing?: Map<string, Record<string, unknown>>): Promise<void> {
    const options = {
      name: q.name,
      policy: 'standard' as const,
      retryLimit: q.def.retryLimit ?? 3,
      retryDelay: q.def.retryDelay ?? 10,
      retryBackoff: q.def.retryBackoff ?? true,
      expireInSeconds: q.def.expireInSeconds ?? 900,
    };
    const current = existing ? existing.get(q.name) : await this.boss.getQueue(q.name);
    if (current) {
      const same = (['policy', 'retryLimit', 'retryDelay', 'retryBackoff', 'expireInSeconds'] as const).every((k) => current[k] === options[k]);
      if (!same) await this.boss.updateQueue(q.name, options);
    } else
      await this.boss.createQueue(q.name, options).catch(async (e) => {
        if (!(await this.boss.getQueue(q.name))) throw e; // created meanwhile by another instance
      });
    if (!this.config.queue.workers) return;
    const batchSize = q.def.batchSize ?? 1;
    for (let i = 0; i < (q.def.workers ?? 1) && !this.stopped; i++) {
      let workerId = '';
      workerId = await this.boss.work<unknown>(q.name, { batchSize, includeMetadata: true }, async (jobs) => {
        await this.runBatch(q, jobs);
        // a full batch means more may be waiting: fetch again at once instead of sleeping a poll interval
        if (jobs.length >= batchSize && workerId) this.boss.notifyWorker(workerId);
      });
      q.workerIds.push(workerId);
    }
  }

  /**
   * Enqueues a job. With `tx` the job is inserted by that transaction (visible and runnable only
   * after it commits). Without, it is written at once through the pool.
   */
  async send<T extends object>(
    name: string,
    data: T,
    opts: { tx?: Tx; startAfterSeconds?: number; singletonKey?: string; singletonSeconds?: number; singletonNextSlot?: boolean } = {},
  ): Promise<string | null> {
    await this.start();
    const options: PgBoss.SendOptions = {};
    if (opts.tx) options.db = this.repo.txDb(opts.tx);
    if (opts.startAfterSeconds) options.startAfter = opts.startAfterSeconds;
    if (opts.singletonKey) options.singletonKey = opts.singletonKey;
    // at most one job of this key per time slot, across every instance (periodic work)
    if (opts.singletonSeconds) options.singletonSeconds = opts.singletonSeconds;
    if (opts.singletonNextSlot) options.singletonNextSlot = true;
    const id = await this.boss.send(name, data, options);
    if (opts.tx) this.wakeAfterCommit(opts.tx, name);
    else this.wake(name);
    return id;
  }

  /**
   * Does a job's work in-process instead of by a worker: cancels the job in `tx` (with the work done
   * there: both commit or neither) if no worker has started it. False when a worker has it or it
   * ended: the caller skips the work (rolls back). With a job sent `startAfterSeconds` later, the job
   * is only the durable fallback of work done at once (a crash in between leaves it to a worker).
   */
  async takeOver(name: string, id: string, opts: { tx: Tx }): Promise<boolean> {
    await this.start();
    return this.repo.takeOver(opts.tx, name, id);
  }

  /** Enqueues several jobs of one queue in one statement (optionally in `tx`). */
  async sendMany<T extends object>(name: string, items: T[], opts: { tx?: Tx } = {}): Promise<void> {
    if (items.length === 0) return;
    await this.start();
    const q = this.queues.get(name);
    const jobs: PgBoss.JobInsert[] = items.map((data) => ({
      name,
      data,
      retryLimit: q?.def.retryLimit,
      retryDelay: q?.def.retryDelay,
      retryBackoff: q?.def.retryBackoff,
      expireInSeconds: q?.def.expireInSeconds,
    }));
    await this.boss.insert(jobs, opts.tx ? { db: this.repo.txDb(opts.tx) } : {});
    if (opts.tx) this.wakeAfterCommit(opts.tx, name);
    else this.wake(name);
  }

  /**
   * Completes an active job in `tx` (with the work it did there: both commit or neither). False when
   * the job is no longer active (expired and handed to another worker): the caller rolls back.
   */
  async complete(name: string, id: string, opts: { tx: Tx }): Promise<boolean> {
    await this.start();
    // pg-boss answers { affected } (its typings say void); data null, then the connection
    const complete = this.boss.complete.bind(this.boss) as unknown as (n: string, i: string, data: null, o: { db: PgBoss.Db }) => Promise<{ affected: number }>;
    const r = await complete(name, id, null, { db: this.repo.txDb(opts.tx) });
    return r.affected === 1;
  }

  private wakeAfterCommit(tx: Tx, name: string): void {
    const qr = tx.queryRunner;
    if (!qr) return;
    const names = this.pendingWake.get(qr) ?? new Set<string>();
    names.add(name);
    this.pendingWake.set(qr, names);
  }

  /** Lets this instance's idle workers of `name` fetch at once instead of at their next poll. */
  wake(name: string): void {
    for (const id of this.queues.get(name)?.workerIds ?? []) this.boss.notifyWorker(id);
  }

  /** Job counts by state for each registered queue (visibility; metrics). */
  async counts(): Promise<Record<string, Record<string, number>>> {
    await this.start();
    const rows = await this.repo.countsByState([...this.queues.keys()]);
    const out: Record<string, Record<string, number>> = {};
    for (const name of this.queues.keys()) out[name] = {};
    for (const r of rows) out[r.name][r.state] = r.n;
    return out;
  }

  /** Stops fetching, lets running jobs finish (up to SHUTDOWN_TIMEOUT, at most 30 s; the rest are failed and retried later). */
  // before the data source's own shutdown hook ends the pool the workers use
  async beforeApplicationShutdown(): Promise<void> {
    this.removeGauge();
    if (this.stopped || !this.started) return;
    this.stopped = true;
    // a start that failed was reported to start()'s caller; what it did start is stopped all the same
    await this.started.catch((e: unknown) => this.logger.debug('queue: stopping after a failed start', { error: e instanceof Error ? e.message : String(e) }));
    const timeout = Math.max(1000, Math.min(this.config.shutdownTimeoutMs ?? 10_000, 30_000));
    await new Promise<void>((resolve) => {
      const done = () => resolve();
      this.boss.once('stopped', done);
      this.boss.stop({ graceful: true, wait: true, close: false, timeout }).catch(done);
      setTimeout(done, timeout + 2000).unref();
    });
    // pg-boss's stop does not wait for a fetch already under way: its jobs still run, and pg-boss then
    // completes them without awaiting (an unhandled rejection once the pool has ended). So the pool
    // stays until no pg-boss statement and no batch of ours is running, seen twice in a row.
    const deadline = Date.now() + timeout;
    for (let quiet = 0; quiet < 2 && Date.now() < deadline;) {
      quiet = this.repo.poolBusy() || this.batches > 0 ? 0 : quiet + 1;
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /** Batches of jobs being run by this instance's workers. */
  private batches = 0;

  private async runBatch(q: Registered, jobs: PgBoss.JobWithMetadata<unknown>[]): Promise<void> {
    this.batches++;
    try {
      await this.runJobs(q, jobs);
    } finally {
      this.batches--;
    }
  }

  private async runJobs(q: Registered, jobs: PgBoss.JobWithMetadata<unknown>[]): Promise<void> {
    await Promise.all(
      jobs.map(async (job) => {
        try {
          const run = { id: job.id, data: job.data, retryCount: job.retryCount, retryLimit: job.retryLimit };
          await backgroundWork.run(true, () => q.def.handler(run));
        } catch (e) {
          // Fails this job alone (pg-boss then completes only the batch's jobs still active).
          queueJobFailed(q.name);
          if (e instanceof PermanentJobError) {
            await this.repo.noMoreRetries(q.name, job.id).catch((err: unknown) =>
              this.logger.error('queue: a permanent failure could not stop the retries', {
                queue: q.name,
                job_id: job.id,
                error: err instanceof Error ? err.message : String(err),
              }),
            );
          }
          await this.boss.fail(q.name, job.id, { message: e instanceof Error ? e.message : String(e) }).catch((x: unknown) =>
            this.logger.warn('queue: a job left running could not be failed (it is retried when its lease expires)', {
              queue: q.name,
              job_id: job.id,
              error: x instanceof Error ? x.message : String(x),
            }),
          );
        }
      }),
    );
  }
}
