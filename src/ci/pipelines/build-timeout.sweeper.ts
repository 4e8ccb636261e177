import { Injectable, OnApplicationBootstrap, OnModuleInit } from '@nestjs/common';
import { QueueService } from '../../queue/queue.service';
import { Transactions } from '../../database/transactions';
import { Logger } from '../../common/logging/logger';
import { BuildsService } from '../builds/builds.service';
import { PipelinesService } from './pipelines.service';

const SWEEP_EVERY_SECONDS = 60;
export const SWEEP_QUEUE = 'ci-build-timeout-sweep';
const BATCH = 100;

/**
 * A running build past its project's `build_timeout` (the runner died or lost the network) is
 * failed with a trace line saying so, and its pipeline moves on. Pending builds wait for a runner.
 * The sweep is a job on the durable queue that schedules its successor a minute later (one per
 * minute slot across every instance, so it survives restarts and never runs twice at once); within a
 * sweep `FOR UPDATE SKIP LOCKED` hands each build to one sweeper.
 */
@Injectable()
export class BuildTimeoutSweeper implements OnModuleInit, OnApplicationBootstrap {
  private running = false;

  constructor(
    private readonly tx: Transactions,
    private readonly builds: BuildsService,
    private readonly pipelines: PipelinesService,
    private readonly logger: Logger,
    private readonly queue: QueueService,
  ) {}

  onModuleInit(): void {
    this.queue
      .register(SWEEP_QUEUE, { handler: () => this.tick(), retryLimit: 0, expireInSeconds: 600 })
      .catch((e) => this.logger.error('build timeout sweep: queue setup failed', { error: e instanceof Error ? e.message : String(e) }));
  }

  /** Makes sure a sweep is scheduled (the first instance up starts the chain; the others add nothing). */
  async onApplicationBootstrap(): Promise<void> {
    await this.queue.send(SWEEP_QUEUE, {}, { singletonKey: 'sweep', singletonSeconds: SWEEP_EVERY_SECONDS });
  }

  private async tick(): Promise<void> {
    try {
      await this.sweep();
    } finally {
      await this.queue.send(
        SWEEP_QUEUE,
        {},
        {
          startAfterSeconds: SWEEP_EVERY_SECONDS,
          singletonKey: 'sweep',
          singletonSeconds: SWEEP_EVERY_SECONDS,
          singletonNextSlot: true,
        },
      );
    }
  }

  /** One pass; returns the ids of the builds it failed. */
  async sweep(): Promise<number[]> {
    if (this.running) return [];
    this.running = true;
    const failed: number[] = [];
    try {
      const due = await this.tx.run((m) => this.builds.timedOut(m, BATCH));
      for (const b of due) {
        try {
          const finished = await this.builds.timeOut(b.id, b.pipelineId, b.buildTimeout);
          if (finished) {
            failed.push(b.id);
            await this.pipelines.buildFinished(finished);
          }
        } catch (e) {
          this.logger.error('build timeout sweep failed', { build_id: b.id, error: e instanceof Error ? e.message : String(e) });
        }
      }
    } finally {
      this.running = false;
    }
    return failed;
  }
}
