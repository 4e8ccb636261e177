/*
 * DOMAIN EVENTS — the one way an area reacts to what another area did.
 *
 * Emitting: the service that makes the change emits in its own transaction, after its writes:
 *
 *     await this.domainEvents.emit(tx, 'issue.closed', { issueId, projectId, userId });
 *
 * (`emitCommitted(name, payload)` when the change is already committed and there is no transaction.)
 * Names and payload types come from the catalogue (domain-event-catalogue.ts): add an event there first.
 *
 * Handling: declare the handler where the work is done, on a method of any provider (a service of
 * your module); nothing else registers it — DomainEvents finds it at bootstrap (Nest's DiscoveryService):
 *
 *     @OnDomainEvent('issue.closed', { durable: true })
 *     async onIssueClosed(e: DomainEventCatalogue['issue.closed']): Promise<void> { ... }
 *
 *   - durable: true  — one pg-boss job per handler, written by the emitter's transaction (the outbox:
 *     rolled back → never runs; committed → runs even if the process dies right after). It runs once
 *     across all instances, on any of them, and is retried with backoff when it throws (`retryLimit`,
 *     default 3; 0 when a retry could do the work twice). The payload travels as JSON (Dates come back
 *     as Dates): carry ids, read fresh rows in the handler. Use it for anything that must happen.
 *   - in-process (default) — runs in the emitting process after the transaction commits, never when it
 *     rolls back; lost if the process dies in between. For caches and best-effort nudges.
 *   - inTransaction: true — runs inside `emit`, in the emitter's transaction (`meta.tx`): its writes are
 *     part of the change and a throw rolls the change back. With `emitCommitted` it runs in a
 *     transaction of its own, and a throw is logged. For records that must exist with the change (the
 *     activity feed records `activity.recorded` this way).
 *
 * Errors are never swallowed: a handler that throws is logged (`domain event handler failed`, with the
 * event and handler) and counted in /-/metrics as `domain_event_handler_failures_total{event,handler}`;
 * other handlers of the same event run regardless, and the emitter never sees the error.
 *
 * Who reacts to what: `grep -rn "@OnDomainEvent('issue.closed'" src`, or `handlersOf(name)` at run time.
 * The webhooks outbox is one of these handlers (HookOutboxWorker.run, queue `hooks.event`, fanned out
 * to project and system hooks). The same declare-and-discover pattern (common/discovery/
 * declared-methods.ts) answers the two extension points that are questions rather than events:
 * `@AdminSettingsField` / `@SettingsResetAction` (application settings) and `@ResolvesBuildToken`
 * (git over HTTP). LISTEN/NOTIFY between instances (database/notifications.ts) stays infrastructure:
 * it drops caches in every instance, it is not a domain event (no payload, no handler elsewhere).
 */
import { Injectable, OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { findDeclaredMethods } from '../common/discovery/declared-methods';
import { Logger } from '../common/logging/logger';
import { Transactions, Tx } from '../database/transactions';
import { domainEventHandlerFailed } from '../metrics/registry';
import { QueueJob, QueueService } from '../queue/queue.service';
import { DomainEventCatalogue, DomainEventName } from './domain-event-catalogue';
import { DOMAIN_EVENT_HANDLER, DomainEventMeta, HandlerDeclaration, OnDomainEventOptions } from './on-domain-event.decorator';

export * from './domain-event-catalogue';
export { OnDomainEvent, DomainEventMeta, OnDomainEventOptions } from './on-domain-event.decorator';

/** A durable handler's job: the event, its payload, and when it was emitted (ISO). */
export interface DomainEventJob<K extends DomainEventName = DomainEventName> {
  name: K;
  payload: DomainEventCatalogue[K];
  at: string;
}

type AnyHandler = (payload: never, meta: DomainEventMeta<never>) => unknown;

interface Registered {
  /** `Class.method` (or the id given to `subscribe`): the label of logs and metrics. */
  id: string;
  events: DomainEventName[];
  durable: boolean;
  inTransaction: boolean;
  /** Durable: the handler's queue. */
  queue?: string;
  run: (payload: unknown, meta: DomainEventMeta) => unknown;
}

@Injectable()
export class DomainEvents implements OnModuleInit {
  private readonly handlers = new Map<DomainEventName, Registered[]>();
  private discovered = false;

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly queue: QueueService,
    private readonly tx: Transactions,
    private readonly logger: Logger,
  ) {}

  /** Finds every `@OnDomainEvent` method of every provider (durable ones get their queue now, before the queue starts). */
  onModuleInit(): void {
    if (this.discovered) return;
    this.discovered = true;
    for (const h of findDeclaredMethods<HandlerDeclaration>(this.discovery, this.scanner, DOMAIN_EVENT_HANDLER)) {
      void this.add(h.meta.events, h.id, (p, m) => h.call(p, m), h.meta.opts);
    }
  }

  /**
   * Registers a handler without the decorator (tests; a handler that is not a provider's method).
   * Resolves when a durable handler's queue is ready.
   */
  subscribe<K extends DomainEventName>(
    event: K | K[],
    id: string,
    handler: (payload: DomainEventCatalogue[K], meta: DomainEventMeta<K>) => unknown,
    opts: OnDomainEventOptions = {},
  ): Promise<void> {
    return this.add(Array.isArray(event) ? event : [event], id, handler as AnyHandler as Registered['run'], opts);
  }

  /** The handlers of `event` (`Class.method`), for a look at who reacts to what. */
  handlersOf(event: DomainEventName): { id: string; durable: boolean; queue?: string }[] {
    return (this.handlers.get(event) ?? []).map(({ id, durable, queue }) => ({ id, durable, queue }));
  }

  /**
   * Emits `name` as part of `tx`: each durable handler's job is written by `tx`; in-process handlers
   * run once `tx` commits. Throws only when a job cannot be written (the change then rolls back).
   */
  async emit<K extends DomainEventName>(tx: Tx, name: K, payload: DomainEventCatalogue[K]): Promise<void> {
    const handlers = this.handlers.get(name) ?? [];
    if (handlers.length === 0) return;
    const at = new Date();
    for (const h of handlers) {
      if (h.inTransaction) await h.run(payload, { name, at, tx });
      else if (h.durable) await this.queue.send(h.queue!, this.job(name, payload, at), { tx });
    }
    if (handlers.some((h) => !h.durable && !h.inTransaction)) this.tx.afterCommit(tx, () => this.runInProcess(name, payload, at));
  }

  /**
   * Emits `name` for a change that is already committed (no transaction): durable jobs are sent at
   * once, in-process handlers start now. Never throws (a job that cannot be written is logged and counted).
   */
  async emitCommitted<K extends DomainEventName>(name: K, payload: DomainEventCatalogue[K]): Promise<void> {
    const handlers = this.handlers.get(name) ?? [];
    if (handlers.length === 0) return;
    const at = new Date();
    for (const h of handlers.filter((x) => x.inTransaction)) {
      await this.tx
        .run(async (tx) => {
          await h.run(payload, { name, at, tx });
        })
        .catch((e: unknown) => this.failed(name, h.id, e));
    }
    this.runInProcess(name, payload, at);
    await Promise.all(
      handlers
        .filter((h) => h.durable)
        .map((h) =>
          this.queue.send(h.queue!, this.job(name, payload, at)).catch((e: unknown) => this.failed(name, h.id, e, 'domain event could not be enqueued')),
        ),
    );
  }

  private add(events: DomainEventName[], id: string, run: Registered['run'], opts: OnDomainEventOptions): Promise<void> {
    let ready = Promise.resolve();
    const h: Registered = { id, events, durable: !!opts.durable, inTransaction: !!opts.inTransaction && !opts.durable, run };
    if (opts.durable) {
      h.queue = opts.queue ?? `event.${events.join('+')}.${id}`;
      ready = this.queue
        .register<DomainEventJob>(h.queue, {
          handler: (job) => this.runDurable(h, job),
          retryLimit: opts.retryLimit ?? 3,
          retryDelay: opts.retryDelay ?? 5,
          retryBackoff: true,
          expireInSeconds: opts.expireInSeconds ?? 15 * 60,
          batchSize: opts.batchSize,
        })
        .catch((e: unknown) => this.failed(events.join(','), id, e, 'domain event queue setup failed'));
    }
    for (const name of events) this.handlers.set(name, [...(this.handlers.get(name) ?? []), h]);
    return ready;
  }

  private job<K extends DomainEventName>(name: K, payload: DomainEventCatalogue[K], at: Date): DomainEventJob<K> {
    return { name, payload, at: at.toISOString() };
  }

  private runInProcess(name: DomainEventName, payload: unknown, at: Date): void {
    for (const h of this.handlers.get(name) ?? []) {
      if (h.durable || h.inTransaction) continue;
      void Promise.resolve()
        .then(() => h.run(payload, { name, at }))
        .catch((e: unknown) => this.failed(name, h.id, e));
    }
  }

  private async runDurable(h: Registered, job: QueueJob<DomainEventJob>): Promise<void> {
    // a job written before this mechanism (the push reactions' queues) carries the bare payload
    const data: DomainEventJob =
      job.data && 'payload' in job.data && 'name' in job.data ? job.data : { name: h.events[0], payload: job.data, at: new Date().toISOString() };
    const name = data.name;
    const meta: DomainEventMeta = { name, at: new Date(data.at), job: { queue: h.queue!, id: job.id, retryCount: job.retryCount } };
    try {
      await h.run(reviveDates(data.payload), meta);
    } catch (e) {
      this.failed(name, h.id, e, 'domain event handler failed', { attempt: job.retryCount + 1, of: job.retryLimit + 1 });
      throw e; // the queue retries it (or records it failed)
    }
  }

  private failed(event: string, handler: string, e: unknown, msg = 'domain event handler failed', extra: Record<string, unknown> = {}): void {
    domainEventHandlerFailed(event, handler);
    this.logger.error(msg, { event, handler, ...extra, error: e instanceof Error ? e.message : String(e) });
  }
}

/** A job's dates back as Dates (JSON turned them into `toISOString` strings; nothing else has that exact form). */
export function reviveDates<T>(value: T): T {
  if (typeof value === 'string') return (ISO.test(value) ? new Date(value) : value) as T;
  if (Array.isArray(value)) return (value as unknown[]).map((v) => reviveDates(v)) as T;
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = reviveDates(v);
    return out as T;
  }
  return value;
}

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
