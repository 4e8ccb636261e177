import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import { EventEmitter } from 'node:events';
import { Client, ClientConfig, Notification } from 'pg';
import { DataSource } from 'typeorm';
import { Logger } from '../common/logging/logger';
import { APP_CONFIG, AppConfig } from '../config/config';

type Handler = (payload: string) => void;

/** Where the embedded pool's connections report the notifications they receive (one per database). */
type Notices = EventEmitter;

/**
 * Pool options for the embedded database: every connection the pool opens forwards the
 * notifications it receives to one emitter, which DbNotifications reads. PGlite has a single
 * session, shared by whatever connection the pool holds, so `LISTEN` issued once stays in force
 * across reconnects, and a trigger's NOTIFY reaches the pool's connection with the answer of the
 * committing statement, before that statement's promise resolves.
 */
export function embeddedNotices(): { Client: typeof Client; notices: Notices } {
  const notices: Notices = new EventEmitter();
  class NotifyingClient extends Client {
    constructor(options: ClientConfig) {
      super(options);
      this.on('notification', (n) => notices.emit('notification', n));
    }
  }
  return { Client: NotifyingClient, notices };
}

/**
 * Cross-instance signals over PostgreSQL LISTEN/NOTIFY, for caches that must not outlive a change
 * made through another app instance (application settings) or by a database trigger (credentials,
 * runners). On PostgreSQL one extra connection per instance listens; if it drops, every handler
 * runs (caches forget) and it reconnects. On the embedded default there is only one instance:
 * notify() just runs the local handlers, and the triggers' notifications arrive on the pool's own
 * connection (embeddedNotices).
 */
@Injectable()
export class DbNotifications implements OnModuleDestroy {
  private readonly handlers = new Map<string, Set<Handler>>();
  private client?: Client;
  private closed = false;
  private connecting?: Promise<void>;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly ds: DataSource,
    private readonly logger: Logger,
  ) {}

  /** Runs `handler` whenever `channel` is notified by any instance (including this one). */
  async listen(channel: string, handler: Handler): Promise<void> {
    if (!/^[a-z_]+$/.test(channel)) throw new Error(`bad channel name ${channel}`);
    let set = this.handlers.get(channel);
    const fresh = !set;
    if (!set) this.handlers.set(channel, (set = new Set()));
    set.add(handler);
    if (!fresh) return;
    if (!this.config.databaseUrl) {
      const notices = this.embeddedNotices();
      if (!notices) return;
      if (notices.listenerCount('notification') === 0) notices.on('notification', (n: Notification) => this.run(n.channel, n.payload ?? ''));
      await this.ds.query(`LISTEN ${channel}`);
      return;
    }
    await this.connect();
    await this.client?.query(`LISTEN ${channel}`);
  }

  private embeddedNotices(): Notices | undefined {
    const pool = (this.ds.driver as unknown as { master?: { options?: { notices?: Notices } } }).master;
    return pool?.options?.notices;
  }

  /** Stops running `handler` (the channel stays listened to: other handlers come and go). */
  unlisten(channel: string, handler: Handler): void {
    this.handlers.get(channel)?.delete(handler);
  }

  /**
   * Resolves once every notification committed before the call has been handled here (its handlers
   * have run): a round trip on the listener connection that starts after the call. PostgreSQL sends
   * a listening session its pending notifications before the answer to its next query, and the
   * notifying commit has signalled this session before it returned, so a change another instance
   * (or this one) has answered for is seen. Concurrent callers share round trips (at most one in
   * flight and one waiting). False when there is no listener (lost, reconnecting, closed): nothing
   * the notifications keep exact may then be trusted. On the embedded database: true at once (the
   * notifications arrive with the committing statement's own answer).
   */
  sync(): Promise<boolean> {
    if (!this.config.databaseUrl) return Promise.resolve(true);
    if (this.queued) return this.queued; // starts after the one in flight ends, hence after this call
    if (!this.inFlight) return this.startRoundTrip();
    const queued = this.inFlight.then(() => {
      this.queued = undefined;
      return this.startRoundTrip();
    });
    this.queued = queued;
    return queued;
  }

  private inFlight?: Promise<boolean>;
  private queued?: Promise<boolean>;

  private startRoundTrip(): Promise<boolean> {
    const client = this.client;
    const trip = (async () => {
      if (!client) return false;
      try {
        await client.query('SELECT 1');
        return this.client === client;
      } catch {
        return false;
      }
    })();
    this.inFlight = trip.finally(() => {
      if (this.inFlight === tracked) this.inFlight = undefined;
    });
    const tracked = this.inFlight;
    return trip;
  }

  /** Tells every instance; call after the change has committed. `payload`: a short string (e.g. an id). */
  async notify(channel: string, payload = ''): Promise<void> {
    if (!this.config.databaseUrl) {
      this.run(channel, payload);
      return;
    }
    await this.ds.query(`SELECT pg_notify($1, $2)`, [channel, payload]);
  }

  /** Without a channel (the listener was lost): every handler, with an empty payload ("anything may have changed"). */
  private run(channel?: string, payload = ''): void {
    for (const [name, set] of this.handlers) if (channel === undefined || name === channel) for (const h of [...set]) h(payload);
  }

  private connect(): Promise<void> {
    if (this.client || this.closed) return Promise.resolve();
    this.connecting ??= (async () => {
      const client = new Client({ connectionString: this.config.databaseUrl });
      client.on('notification', (n) => this.run(n.channel, n.payload ?? ''));
      client.on('error', (e) => {
        this.logger.warn('notification listener lost', { error: e.message });
        this.client = undefined;
        this.run(); // a missed notification must not leave a stale cache
        void client.end().catch((x: Error) => this.logger.debug('closing the lost listener connection failed', { error: x.message }));
        if (!this.closed) setTimeout(() => void this.reconnect(), 1000).unref();
      });
      await client.connect();
      this.client = client;
    })().finally(() => (this.connecting = undefined));
    return this.connecting;
  }

  private async reconnect(): Promise<void> {
    try {
      await this.connect();
      for (const channel of this.handlers.keys()) await this.client?.query(`LISTEN ${channel}`);
      this.run();
    } catch (e) {
      this.logger.warn('notification listener reconnect failed', { error: e instanceof Error ? e.message : String(e) });
      if (!this.closed) setTimeout(() => void this.reconnect(), 5000).unref();
    }
  }

  async onModuleDestroy(): Promise<void> {
    this.closed = true;
    const c = this.client;
    this.client = undefined;
    await c?.end().catch((e: Error) => this.logger.warn('closing the listener connection failed', { error: e.message }));
  }
}
