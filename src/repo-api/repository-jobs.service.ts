import { Injectable, OnModuleInit } from '@nestjs/common';
import { Logger } from '../common/logging/logger';
import { GitService } from '../git/git.service';
import { QueueService } from '../queue/queue.service';

export const HOUSEKEEPING_QUEUE = 'repository.housekeeping';
export const ARCHIVE_PRUNE_QUEUE = 'repository.archive-cache-prune';

/** At most one housekeeping run per repository per this many seconds (later pushes join the next one). */
const HOUSEKEEPING_SLOT_SECONDS = 60;
/** Cached archives are kept this long after they were made. */
export const ARCHIVE_CACHE_MAX_AGE_MS = 24 * 3600_000;
const ARCHIVE_PRUNE_EVERY_SECONDS = 3600;
export const PACK_CACHE_PRUNE_QUEUE = 'repository.pack-cache-prune';
/** Packs of the pack-objects cache are served this long after they were made (Gitaly's default max age). */
export const PACK_CACHE_MAX_AGE_MS = 5 * 60_000;
const PACK_CACHE_PRUNE_EVERY_SECONDS = 60;

/**
 * The repositories' background work on the durable queue: housekeeping after pushes (repack with a
 * bitmap, commit-graph) and pruning of the archive and pack-objects caches. Both run on whichever instance's worker
 * takes the job, once, and survive a restart.
 */
@Injectable()
export class RepositoryJobs implements OnModuleInit {
  constructor(
    private readonly queue: QueueService,
    private readonly git: GitService,
    private readonly logger: Logger,
  ) {}

  onModuleInit(): void {
    const failed = (what: string) => (e: unknown) => this.logger.error(`${what}: queue setup failed`, { error: e instanceof Error ? e.message : String(e) });
    this.queue
      .register<{ projectId: number }>(HOUSEKEEPING_QUEUE, {
        handler: (job) => this.git.housekeeping(job.data.projectId),
        retryLimit: 2,
        retryDelay: 60,
        expireInSeconds: 40 * 60, // a full repack of a large repository may take this long
      })
      .catch(failed('repository housekeeping'));
    this.queue
      .every(ARCHIVE_PRUNE_QUEUE, ARCHIVE_PRUNE_EVERY_SECONDS, async () => {
        const removed = await this.git.pruneArchiveCache(ARCHIVE_CACHE_MAX_AGE_MS);
        if (removed) this.logger.info('archive cache pruned', { removed });
      })
      .catch(failed('archive cache pruning'));
    this.queue
      .every(PACK_CACHE_PRUNE_QUEUE, PACK_CACHE_PRUNE_EVERY_SECONDS, async () => {
        await this.git.prunePackCache(PACK_CACHE_MAX_AGE_MS);
      })
      .catch(failed('pack-objects cache pruning'));
  }

  /**
   * Schedules housekeeping of a project's repository after a push: at once when none is scheduled in
   * this minute, else in the next minute's slot (so a burst of pushes costs one or two runs, and the
   * last push is always covered).
   */
  async housekeepingAfterPush(projectId: number): Promise<void> {
    await this.queue.send(
      HOUSEKEEPING_QUEUE,
      { projectId },
      {
        singletonKey: `project:${projectId}`,
        singletonSeconds: HOUSEKEEPING_SLOT_SECONDS,
        singletonNextSlot: true,
      },
    );
  }
}
