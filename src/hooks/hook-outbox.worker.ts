import { Injectable, OnModuleInit } from '@nestjs/common';
import { Transactions } from '../database/transactions';
import { HOOK_EVENT_QUEUE, HookEventJob, reviveDates } from '../events/hook-outbox';
import { QueueJob, QueueService } from '../queue/queue.service';
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
 * Runs the hook outbox (`hooks.event`): after the change committed, each event is planned by every
 * planner (finding the subscribed hooks and building their payloads), and the per-hook delivery jobs
 * are inserted in one transaction with the event job's completion — so an event is fanned out once,
 * also when a worker dies midway (then nothing was written and the job is retried).
 */
@Injectable()
export class HookOutboxWorker implements OnModuleInit {
  private readonly planners: HookPlanner[] = [];

  constructor(
    private readonly queue: QueueService,
    private readonly tx: Transactions,
  ) {}

  /** Adds a planner (call it from `onModuleInit`). */
  plan(planner: HookPlanner): void {
    this.planners.push(planner);
  }

  onModuleInit(): void {
    void this.queue.register<HookEventJob>(HOOK_EVENT_QUEUE, {
      handler: (job) => this.run(job),
      retryLimit: 10,
      retryDelay: 5,
      retryBackoff: true,
      expireInSeconds: 300,
      batchSize: 10,
      workers: 1,
    });
  }

  private async run(job: QueueJob<HookEventJob>): Promise<void> {
    const event = reviveDates(job.data);
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
