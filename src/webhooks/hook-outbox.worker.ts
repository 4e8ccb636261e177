import { Injectable } from '@nestjs/common';
import { Transactions } from '../database/transactions';
import { DomainEventCatalogue, DomainEventMeta, OnDomainEvent } from '../domain-events/domain-events';
import { HOOK_EVENT_NAMES, HOOK_EVENT_QUEUE, HookEventJob, HookEventName } from './hook-outbox';
import { QueueService } from '../queue/queue.service';
import { DeliveryJob, DELIVERY_QUEUE, HookEventHeader } from './hook-delivery.service';
import { WebHook } from './web-hook.entity';

/** What one event becomes for some hooks: the same payload to each. */
export interface PlannedDelivery {
  hooks: WebHook[];
  event: HookEventHeader;
  trigger: string;
  payload: unknown;
}

/** Turns an outbox event into deliveries (project hooks, system hooks); reads only, enqueues nothing. */
export type HookPlanner = (e: HookEventJob) => Promise<PlannedDelivery[]>;

/**
 * Runs the hook outbox (`hooks.event`, the durable handler of every event hooks hear of): after the
 * change committed, each event is planned by every
 * planner (finding the subscribed hooks and building their payloads), and the per-hook delivery jobs
 * are inserted in one transaction with the event job's completion — so an event is fanned out once,
 * also when a worker dies midway (then nothing was written and the job is retried).
 */
@Injectable()
export class HookOutboxWorker {
  private readonly planners: HookPlanner[] = [];

  constructor(
    private readonly queue: QueueService,
    private readonly tx: Transactions,
  ) {}

  /** Adds a planner (call it from `onModuleInit`). */
  plan(planner: HookPlanner): void {
    this.planners.push(planner);
  }

  @OnDomainEvent([...HOOK_EVENT_NAMES], { durable: true, queue: HOOK_EVENT_QUEUE, retryLimit: 10, retryDelay: 5, expireInSeconds: 300, batchSize: 10 })
  async run(payload: DomainEventCatalogue[HookEventName], meta: DomainEventMeta<HookEventName>): Promise<void> {
    const event = { name: meta.name, payload, at: meta.at.toISOString() } as HookEventJob;
    // a push whose own transaction failed is still announced to its other handlers, without push data: no hook hears of it
    if (event.name === 'push.received' && !(payload as { data?: unknown }).data) return;
    const job = meta.job!;
    const jobs: DeliveryJob[] = [];
    // reads outside the transaction: on the embedded database the pool has a single connection
    for (const planner of this.planners) {
      for (const d of await planner(event)) {
        for (const h of d.hooks) jobs.push({ hookId: h.id, event: d.event, trigger: d.trigger, payload: d.payload });
      }
    }
    await this.tx.run(async (tx) => {
      await this.queue.sendMany(DELIVERY_QUEUE, jobs, { tx });
      // taken over by another worker meanwhile (expired): roll back, that one fans it out
      if (!(await this.queue.complete(HOOK_EVENT_QUEUE, job.id, { tx }))) throw new Error('hook event job no longer active');
    });
  }
}
