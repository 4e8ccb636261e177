import { Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { Logger } from '../../common/logging/logger';
import { addGaugeSource } from '../../metrics/registry';
import { QueueService } from '../../queue/queue.service';
import { BuildsRepository } from './builds.repository';
import { BuildsService } from './builds.service';

export const ARTIFACTS_EXPIRY_QUEUE = 'ci.artifacts-expiry';
const EVERY_SECONDS = 60;
const BATCH = 200;

/**
 * Artifacts uploaded with `expire_in` are deleted when they expire: a periodic job on the durable
 * queue (one per minute across every instance, surviving restarts) removes the file and clears the
 * build's artifacts columns. Also the source of the pending/running builds gauge.
 */
@Injectable()
export class ArtifactsExpiry implements OnModuleInit, OnModuleDestroy {
  private removeGauge?: () => void;

  constructor(
    private readonly repo: BuildsRepository,
    private readonly builds: BuildsService,
    private readonly queue: QueueService,
    private readonly logger: Logger,
  ) {}

  onModuleInit(): void {
    this.queue
      .every(ARTIFACTS_EXPIRY_QUEUE, EVERY_SECONDS, async () => {
        await this.expire();
      })
      .catch((e) => this.logger.error('artifacts expiry: queue setup failed', { error: e instanceof Error ? e.message : String(e) }));
    // database-wide figures: the same for every instance, so the last one read is kept
    this.removeGauge = addGaugeSource('ci_builds', () => this.repo.activeCounts(), { shared: true });
  }

  onModuleDestroy(): void {
    this.removeGauge?.();
  }

  /** One pass: the ids of the builds whose artifacts it removed. */
  async expire(): Promise<number[]> {
    const removed: number[] = [];
    for (;;) {
      const due = await this.repo.expiredArtifacts(BATCH);
      let progress = false;
      for (const b of due) {
        try {
          // the row first: a download started after this sees no artifacts; the file goes next
          if (await this.repo.clearExpiredArtifacts(b.id, b.expireAt)) {
            await this.builds.files.removeArtifacts(b.id);
            removed.push(b.id);
            progress = true;
          }
        } catch (e) {
          this.logger.error('artifacts expiry failed', { build_id: b.id, error: e instanceof Error ? e.message : String(e) });
        }
      }
      if (due.length < BATCH || !progress) return removed;
    }
  }
}
