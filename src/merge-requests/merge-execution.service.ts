import { Injectable } from '@nestjs/common';
import { MethodNotAllowed } from '../common/errors/domain-errors';
import { RepositoryLocks } from '../database/repository-locks';
import { Transactions } from '../database/transactions';
import { DomainEvents } from '../domain-events/domain-events';
import { parseRef, Sha } from '../git/names';
import { MergeConflict, RefUpdateRejected } from '../git/repository';
import { Issue } from '../issues/issue.entity';
import { SystemNotesService } from '../notes/system-notes.service';
import { Project } from '../projects/project.entity';
import { PushService } from '../repo-api/push.service';
import { ClosingIssues } from './closing-issues.service';
import { MergeParams, MergeRequest, MergeRequestState } from './merge-request.entity';
import { MergeRequestGit } from './merge-request-git.service';
import { MergeRequestsRepository } from './merge-requests.repository';
import { MergeRequestsService } from './merge-requests.service';
import { SourceBranchRemoval } from './source-branch-removal.service';
import type { Caller } from '../common/caller/caller';

/** How often a merge is recomputed when the target branch moved under it before giving up. */
const MERGE_ATTEMPTS = 3;

const cannotMerge = () => new MethodNotAllowed('Branch cannot be merged');

/** The source head is no longer the commit the merging user approved: the automatic merge is off. */
export class SourceMoved extends Error {}

/** GitLab's default merge commit message. */
export function defaultMergeMessage(mr: MergeRequest): string {
  return `Merge branch '${mr.sourceBranch}' into '${mr.targetBranch}'\n\n${mr.title}\n\n${mr.description ?? ''}\n\nSee merge request !${mr.iid}`;
}

/**
 * The merge itself, without a work tree, for `PUT .../merge` (MergeService) and for the automatic
 * merges (AutomaticMerges): under the target repository's lock, the target moved by compare-and-swap,
 * then the merge request merged, its note and events, closed issues, the source branch removed if
 * asked, and the push's after-effects.
 */
@Injectable()
export class MergeExecution {
  constructor(
    private readonly repo: MergeRequestsRepository,
    private readonly tx: Transactions,
    private readonly locks: RepositoryLocks,
    private readonly requests: MergeRequestsService,
    private readonly mrGit: MergeRequestGit,
    private readonly push: PushService,
    private readonly closing: ClosingIssues,
    private readonly domainEvents: DomainEvents,
    private readonly sourceBranches: SourceBranchRemoval,
    private readonly systemNotes: SystemNotesService,
  ) {}

  /**
   * Merges now: the merge request is claimed (`locked`, so a concurrent merge gets 405), the merge
   * commit is written without a work tree and the target moved by compare-and-swap — when a push
   * moved the target meanwhile, the merge is recomputed on the new tip (never overwriting it), up to
   * MERGE_ATTEMPTS times. Then: merged, system note and event, the push's after-effects, closed
   * issues, and the source branch removed if asked.
   */
  async mergeNow(user: Caller, project: Project, mr: MergeRequest, params: MergeParams, approved?: Sha): Promise<MergeRequest> {
    const previous = await this.repo.claimForMerge(mr.id);
    if (!previous) throw new MethodNotAllowed();
    let merged: { sha: Sha; target: Sha; source: Sha; closes: Issue[] } | undefined;
    try {
      // a repository write: serialised with the others of the target repository, across instances
      merged = await this.locks.run(project.id, () => this.writeMerge(user, project, mr, params, previous, approved));
    } finally {
      if (!merged) await this.repo.release(mr.id, previous);
    }
    await this.tx.run(async (m) => {
      await this.repo.update(m, mr.id, {
        state: 'merged',
        mergeStatus: 'can_be_merged',
        mergeCommitSha: merged.sha,
        mergedAt: new Date(),
        mergeWhenBuildSucceeds: false,
        mergeUserId: user.id,
        mergeParams: null,
        mergeWhenBuildSucceedsSha: null,
        updatedAt: new Date(),
      });
      await this.systemNotes.addSystemNotes(m, { projectId: project.id, type: 'MergeRequest', id: mr.id }, user.id, ['Status changed to merged']);
      await this.requests.announce(m, mr.id, user, 'merge');
    });
    await this.domainEvents.emitCommitted('activity.recorded', { events: [this.requests.event(mr, user, 'merged')] });
    await this.closing.close(user, merged.closes);
    if (params.should_remove_source_branch) await this.sourceBranches.remove(user, mr, merged.source);
    // the push's after-effects: its event, then CI, hooks and other requests' merge_status as jobs on
    // the durable queue (afterPush logs its own failures and never throws)
    await this.push.afterPush(project, user, [{ oldSha: merged.target, newSha: merged.sha, ref: `refs/heads/${mr.targetBranch}` }], 'api');
    return this.repo.byId(mr.id);
  }

  /**
   * Writes the merge commit of the source head into the target. With `approved` (an automatic merge)
   * the source head must be exactly that commit — compare-and-swap on what was approved: a source
   * that moved since is never merged (SourceMoved).
   */
  private async writeMerge(user: Caller, project: Project, mr: MergeRequest, params: MergeParams, previous: MergeRequestState, approved?: Sha) {
    for (let attempt = 0; attempt < MERGE_ATTEMPTS; attempt++) {
      const heads = await this.mrGit.heads(mr);
      if (!heads.source || !heads.target) {
        await this.repo.release(mr.id, previous, 'cannot_be_merged');
        throw cannotMerge();
      }
      if (approved !== undefined && heads.source !== approved) {
        await this.repo.release(mr.id, previous);
        throw new SourceMoved();
      }
      const closes =
        project.defaultBranch === mr.targetBranch
          ? await this.closing.referenced(user, project, [mr.description, ...(await this.mrGit.commits(mr)).map((c) => c.message)])
          : [];
      const branch = parseRef(mr.targetBranch);
      if (branch === null) throw cannotMerge();
      try {
        const sha = await heads.repo.merge({
          branch,
          ours: heads.target,
          theirs: heads.source,
          message: params.merge_commit_message ?? defaultMergeMessage(mr),
          author: { name: user.name, email: user.email },
        });
        // the merge commit and the merged head stay reachable whatever later pushes do (8.17's keep_around_commit)
        await heads.repo.keepAround([sha, heads.source]);
        return { sha, target: heads.target, source: heads.source, closes };
      } catch (e) {
        if (e instanceof MergeConflict) {
          await this.repo.release(mr.id, previous, 'cannot_be_merged');
          throw cannotMerge();
        }
        if (!(e instanceof RefUpdateRejected)) throw e;
        // the target moved between the check and the update: recompute on the new tip
      }
    }
    throw cannotMerge();
  }
}
