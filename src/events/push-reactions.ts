import { Injectable } from '@nestjs/common';
import { Logger } from '../common/http/logger';
import { Tx } from '../database/transactions';
import { QueueService } from '../queue/queue.service';
import { PushReceived } from './domain-events';

/** The queue of one reaction to pushes: `push.<name>`. */
export const pushQueue = (name: string) => `push.${name}`;

/**
 * What happens after a push, on the durable queue: each area that reacts to pushes (pipelines, merge
 * request mergeability and closing issues) registers its reaction once, and every push sends one job
 * per reaction. A reaction runs once across all
 * instances, survives a restart between the push and the work, and is retried with backoff on its
 * own when it throws (the others are not run again).
 */
@Injectable()
export class PushReactions {
  private readonly names: string[] = [];

  constructor(
    private readonly queue: QueueService,
    private readonly logger: Logger,
  ) {}

  /** Registers a reaction (call it from `onModuleInit`). */
  react(name: string, handler: (e: PushReceived) => Promise<void>, opts: { retryLimit?: number } = {}): void {
    this.names.push(name);
    this.queue
      .register<PushReceived>(pushQueue(name), {
        handler: (job) => handler(job.data),
        retryLimit: opts.retryLimit ?? 3,
        retryDelay: 5,
        retryBackoff: true,
        expireInSeconds: 15 * 60,
      })
      .catch((e) => this.logger.error('push reaction: queue setup failed', { reaction: name, error: e instanceof Error ? e.message : String(e) }));
  }

  /**
   * One job per reaction, written by `tx` when given (the push's own transaction: its events and its
   * reactions commit together). Without `tx`, never throws (a job that cannot be written is logged).
   */
  async enqueue(e: PushReceived, tx?: Tx): Promise<void> {
    if (tx) {
      for (const name of this.names) await this.queue.send(pushQueue(name), e, { tx });
      return;
    }
    await Promise.all(
      this.names.map((name) =>
        this.queue.send(pushQueue(name), e).catch((err) =>
          this.logger.error('push reaction could not be enqueued', {
            project_id: e.projectId,
            reaction: name,
            error: err instanceof Error ? err.message : String(err),
          }),
        ),
      ),
    );
  }
}
