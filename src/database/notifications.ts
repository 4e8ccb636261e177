import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { Logger } from '../common/http/logger';
import { APP_CONFIG, AppConfig } from '../config/config';

type Handler = (payload: string) => void;

/**
 * Cross-instance signals over PostgreSQL LISTEN/NOTIFY, for caches that must not outlive a change
 * made through another app instance (application settings). On PostgreSQL one extra connection per
 * instance listens; if it drops, every handler runs (caches forget) and it reconnects. On the
 * embedded default there is only one instance, so a notification just runs the local handlers.
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
    if (!this.config.databaseUrl || !fresh) return;
    await this.connect();
    await this.client?.query(`LISTEN ${channel}`);
  }

  /** Stops running `handler` (the channel stays listened to: other handlers come and go). */
  unlisten(channel: string, handler: Handler): void {
    this.handlers.get(channel)?.delete(handler);
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
        void client.end().catch(() => undefined);
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
    await c?.end().catch(() => undefined);
  }
}
