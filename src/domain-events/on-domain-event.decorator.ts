import { declareMethod } from '../common/discovery/declared-methods';
import type { DomainEventCatalogue, DomainEventName } from './domain-event-catalogue';

/** What a handler gets beside the payload. */
export interface DomainEventMeta<K extends DomainEventName = DomainEventName> {
  name: K;
  /** When the event was emitted. */
  at: Date;
  /** Durable handlers: the queue job (its id lets a handler complete it in its own transaction). */
  job?: { queue: string; id: string; retryCount: number };
  /** In-transaction handlers: the transaction to write in. */
  tx?: import('../database/transactions').Tx;
}

export interface OnDomainEventOptions {
  /**
   * Durable: a job on the pg-boss queue, written in the emitter's transaction (rolled back → never
   * runs), run once across all instances, retried with backoff when the handler throws. Otherwise the
   * handler runs in this process after the emitter's transaction commits.
   */
  durable?: boolean;
  /**
   * In the transaction: the handler runs inside `emit`, with the emitter's transaction (`meta.tx`), so
   * its writes are part of the change (a throw rolls it back). With `emitCommitted` it runs in a
   * transaction of its own and a throw is logged. For a record that must exist with the change (the
   * activity feed); never for slow work or anything outside the database.
   */
  inTransaction?: boolean;
  /** Durable only: the queue's name (default `event.<event>.<Class>.<method>`). */
  queue?: string;
  /** Durable only: attempts after the first (default 3). 0 when a retry could do the work twice. */
  retryLimit?: number;
  /** Durable only: seconds before the first retry (default 5, doubled each time). */
  retryDelay?: number;
  /** Durable only: a run longer than this is failed and retried (default 900). */
  expireInSeconds?: number;
  /** Durable only: jobs fetched at once by a worker (default 1). */
  batchSize?: number;
}

export interface HandlerDeclaration {
  events: DomainEventName[];
  opts: OnDomainEventOptions;
}

export const DOMAIN_EVENT_HANDLER = Symbol('domain-event-handler');

type Handler<K extends DomainEventName> = (payload: DomainEventCatalogue[K], meta: DomainEventMeta<K>) => unknown;

/**
 * Declares the method a handler of `event` (or of each of several events): found at bootstrap by
 * DomainEvents (domain-events.ts, which explains the mechanism). The method's parameter is checked
 * against the catalogue's payload of that event.
 */
export function OnDomainEvent<K extends DomainEventName>(event: K | K[], opts: OnDomainEventOptions = {}) {
  const declare = declareMethod<HandlerDeclaration>(DOMAIN_EVENT_HANDLER, { events: Array.isArray(event) ? event : [event], opts });
  // the descriptor's type checks the method's parameter against the catalogue
  return <T extends Handler<K>>(target: object, key: string | symbol, desc: TypedPropertyDescriptor<T>): void => void declare(target, key, desc);
}
