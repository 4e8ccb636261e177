import { DomainEvents } from '../domain-events/domain-events';
import { Injectable } from '@nestjs/common';
import { Conflict, MethodNotAllowed, NotAcceptable, Unauthorized } from '../common/errors/domain-errors';
import { RepositoryLocks } from '../database/repository-locks';
import { Transactions } from '../database/transactions';
import { parseRef, parseSha, Sha } from '../git/names';
import { MergeConflict, RefUpdateRejected } from '../git/repository';
import { Issue } from '../issues/issue.entity';
import { Project } from '../projects/project.entity';
import { CommitsService } from '../repo-api/commits.service';
import { PushService } from '../repo-api/push.service';
import { User } from '../users/user.entity';
import { MergeDto } from './dto/merge-request.dto';
import { ClosingIssues } from './closing-issues.service';
import { isOpen, isWorkInProgress, MergeParams, MergeRequest, MergeRequestState } from './merge-request.entity';
import { MergeRequestGit } from './merge-request-git.service';
import { involvedIn } from './merge-request-policy';
import { MergeRequestsRepository } from './merge-requests.repository';
import { MergeRequestsService } from './merge-requests.service';
import { AUTO_MERGE_OFF, CANCELED_AUTO_MERGE } from './merge-request-changes';
import { SourceBranchRemoval } from './source-branch-removal.service';
import { SystemNotesService } from '../notes/system-notes.service';
import { ProjectRef } from '../common/params/refs';

/** How often a merge is recomputed when the target branch moved under it before giving up. */
const MERGE_ATTEMPTS = 3;
const ACTIVE = ['pending', 'running'];

const cannotMerge = () => new MethodNotAllowed('Branch cannot be merged');

/** The source head is no longer the commit the merging user approved: the automatic merge is off. */
export class SourceMoved extends Error {}

/** GitLab's answer to `PUT .../merge` with a `sha` that is not the source head (status first: spec-decisions 32). */
const shaMismatch = (head: string | null) => new Conflict(`SHA does not match HEAD of source branch: ${head ?? ''}`);

/** GitLab's default merge commit message. */
export function defaultMergeMessage(mr: MergeRequest): string {
  return `Merge branch '${mr.sourceBranch}' into '${mr.targetBranch}'\n\n${mr.title}\n\n${mr.description ?? ''}\n\nSee merge request !${mr.iid}`;
}

/**
 * Accepting merge requests without a work tree: `PUT .../merge` (merge now, or merge when the build
 * succeeds), its cancel, and the merge itself — under the target repository's lock, the target
 * moved by compare-and-swap — for the API and for AutomaticMerges, which carries out and calls off
 * the waiting merges. The reactions to pushes are MergeRequestPushReactions'.
 */
@Injectable()
export class MergeService {
  constructor(
    private readonly repo: MergeRequestsRepository,
    private readonly tx: Transactions,
    private readonly locks: RepositoryLocks,
    private readonly requests: MergeRequestsService,
    private readonly mrGit: MergeRequestGit,
    private readonly push: PushService,
    private readonly commits: CommitsService,
    private readonly closing: ClosingIssues,
    private readonly domainEvents: DomainEvents,
    private readonly sourceBranches: SourceBranchRemoval,
    private readonly systemNotes: SystemNotesService,
  ) {}

  /**
   * `PUT .../merge`, checks in GitLab's order: push right to the target branch (401), open and not
   * WIP (405), then either wait for the build (merge_when_build_succeeds while the head's status is
   * pending or running) or merge now (405 `Branch cannot be merged` on conflicts).
   */
  async merge(user: User, ref: ProjectRef, id: number, dto: MergeDto): Promise<MergeRequest> {
    const { project, abilities, mr } = await this.requests.findReadable(user, ref, id);
    if (!(await this.push.canWriteBranch(project.id, mr.targetBranch, abilities))) throw new Unauthorized();
    if (!isOpen(mr) || isWorkInProgress(mr.title)) throw new MethodNotAllowed();
    const params: MergeParams = {};
    if (dto.merge_commit_message !== undefined && dto.merge_commit_message.trim() !== '') params.merge_commit_message = dto.merge_commit_message;
    if (dto.should_remove_source_branch !== undefined) params.should_remove_source_branch = dto.should_remove_source_branch;
    // `sha`: what the caller reviewed; it must still be the head, and it is what gets merged
    let reviewed: Sha | undefined;
    if (dto.sha !== undefined) {
      const head = (await this.mrGit.heads(mr)).source;
      if (head === null || parseSha(dto.sha.trim()) !== head) throw shaMismatch(head);
      reviewed = head;
    }
    if (dto.merge_when_build_succeeds ?? dto.merged_when_build_succeeds) {
      const heads = await this.mrGit.heads(mr);
      const status = heads.source && mr.sourceProjectId !== null ? await this.commits.combinedStatusOf(mr.sourceProjectId, heads.source) : null;
      if (reviewed !== undefined && heads.source !== reviewed) throw shaMismatch(heads.source);
      if (heads.source && status !== null && ACTIVE.includes(status)) return this.waitForBuild(user, project, mr, heads.source, params);
    }
    try {
      return await this.mergeNow(user, project, mr, params, reviewed);
    } catch (e) {
      // the source moved between the check and the merge: the reviewed sha is no longer the head
      if (e instanceof SourceMoved) throw shaMismatch((await this.mrGit.heads(mr)).source);
      throw e;
    }
  }

  /** `PUT|POST .../cancel_merge_when_build_succeeds`: 401 unless the user may merge or wrote it; 405 when not open; 406 when not set. */
  async cancelMergeWhenBuildSucceeds(user: User, ref: ProjectRef, id: number): Promise<MergeRequest> {
    const { project, abilities, mr } = await this.requests.findReadable(user, ref, id);
    const mayMerge = await this.push.canWriteBranch(project.id, mr.targetBranch, abilities);
    if (!mayMerge && !involvedIn(user, { authorId: mr.authorId, assigneeId: null })) throw new Unauthorized();
    if (!isOpen(mr)) throw new MethodNotAllowed();
    const cancelled = await this.tx.run(async (m) => {
      const current = await this.repo.lock(m, mr.id);
      if (!current || !current.mergeWhenBuildSucceeds) return false;
      await this.repo.update(m, mr.id, AUTO_MERGE_OFF);
      await this.systemNotes.addSystemNotes(m, { projectId: project.id, type: 'MergeRequest', id: mr.id }, user.id, [CANCELED_AUTO_MERGE]);
      return true;
    });
    if (!cancelled) throw new NotAcceptable();
    return this.repo.byId(mr.id);
  }

  /** Sets the automatic merge of exactly `sha`, the source head the user saw (the approved sha). */
  private async waitForBuild(user: User, project: Project, mr: MergeRequest, sha: Sha, params: MergeParams): Promise<MergeRequest> {
    await this.tx.run(async (m) => {
      const current = await this.repo.lock(m, mr.id);
      if (!current || !isOpen(current)) throw new MethodNotAllowed();
      await this.repo.update(m, mr.id, { mergeWhenBuildSucceeds: true, mergeUserId: user.id, mergeParams: params, mergeWhenBuildSucceedsSha: sha });
      await this.systemNotes.addSystemNotes(m, { projectId: project.id, type: 'MergeRequest', id: mr.id }, user.id, [
        `Enabled an automatic merge when the build for ${sha} succeeds`,
      ]);
    });
    return this.repo.byId(mr.id);
  }

  /**
   * Merges now: the merge request is claimed (`locked`, so a concurrent merge gets 405), the merge
   * commit is written without a work tree and the target moved by compare-and-swap — when a push
   * moved the target meanwhile, the merge is recomputed on the new tip (never overwriting it), up to
   * MERGE_ATTEMPTS times. Then: merged, system note and event, the push's after-effects, closed
   * issues, and the source branch removed if asked.
   */
  async mergeNow(user: User, project: Project, mr: MergeRequest, params: MergeParams, approved?: Sha): Promise<MergeRequest> {
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
  private async writeMerge(user: User, project: Project, mr: MergeRequest, params: MergeParams, previous: MergeRequestState, approved?: Sha) {
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
