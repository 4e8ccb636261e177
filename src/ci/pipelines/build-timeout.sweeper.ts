import { Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { Transactions } from '../../database/transactions';
import { Logger } from '../../common/http/logger';
import { BuildsRepository } from '../builds/builds.repository';
import { BuildsService } from '../builds/builds.service';
import { PipelinesService } from './pipelines.service';

const SWEEP_EVERY_MS = 60_000;
const BATCH = 100;

/**
 * A running build past its project's `build_timeout` (the runner died or lost the network) is
 * failed with a trace line saying so, and its pipeline moves on. Pending builds wait for a runner.
 * Every instance sweeps; `FOR UPDATE SKIP LOCKED` hands each build to one of them.
 */
@Injectable()
export class BuildTimeoutSweeper implements OnModuleInit, OnModuleDestroy {
  private timer?: NodeJS.Timeout;
  private running = false;

  constructor(
    private readonly tx: Transactions,
    private readonly repo: BuildsRepository,
    private readonly builds: BuildsService,
    private readonly pipelines: PipelinesService,
    private readonly logger: Logger,
  ) {}

  onModuleInit(): void {
    this.timer = setInterval(() => void this.sweep().catch(() => undefined), SWEEP_EVERY_MS);
    this.timer.unref();
  }

  onModuleDestroy(): void {
    if (this.timer) clearInterval(this.timer);
  }

  /** One pass; returns the ids of the builds it failed. */
  async sweep(): Promise<number[]> {
    if (this.running) return [];
    this.running = true;
    const failed: number[] = [];
    try {
      const due = await this.tx.run((m) => this.repo.timedOut(m, BATCH));
      for (const b of due) {
        try {
          if (await this.builds.timeOut(b.id, b.buildTimeout)) {
            failed.push(b.id);
            await this.pipelines.buildFinished(b.pipelineId, b.id);
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
