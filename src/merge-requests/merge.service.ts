import { Injectable } from '@nestjs/common';
import { apiError, MethodNotAllowed, Unauthorized } from '../common/errors/domain-errors';
import { Logger } from '../common/http/logger';
import { ProjectAbility } from '../common/policy/policy';
import { PolicyService } from '../common/policy/policy.service';
import { CommitStatusChanged, OnDomainEvent, PushReceived } from '../events/domain-events';
import { RepositoryLocks } from '../database/repository-locks';
import { Transactions } from '../database/transactions';
import { EventsService } from '../events/events.service';
import { branchRef, parseRef, parseSha, Sha, ZERO_SHA } from '../git/names';
import { MergeConflict, RefUpdateRejected } from '../git/repository';
import { GitService } from '../git/git.service';
import { Issue } from '../issues/issue.entity';
import { addSystemNotes } from '../notes/system-notes';
import { Project } from '../projects/project.entity';
import { ProjectResolver } from '../projects/project-resolver.service';
import { CommitsService } from '../repository/commits.service';
import { PushService } from '../repository/push.service';
import { User } from '../users/user.entity';
import { UserDirectory } from '../users/user-directory.service';
import { MergeDto, UpdateMergeRequestDto } from './dto/merge-request.dto';
import { ClosingIssues } from './closing-issues.service';
import { isOpen, isWorkInProgress, MergeParams, MergeRequest, MergeRequestState } from './merge-request.entity';
import { MergeRequestGit } from './merge-request-git.service';
import { involvedIn } from './merge-request-policy';
import { MergeRequestsRepository } from './merge-requests.repository';
import { MergeRequestsService } from './merge-requests.service';

/** How often a merge is recomputed when the target branch moved under it before giving up. */
const MERGE_ATTEMPTS = 3;
const ACTIVE = ['pending', 'running'];

const cannotMerge = () => new MethodNotAllowed('Branch cannot be merged');

/** GitLab's system note when an automatic merge is called off (by hand, or because its source moved). */
const CANCELED = 'Canceled the automatic merge';
/** The columns of a merge request that no longer waits to be merged automatically. */
const AUTO_MERGE_OFF = { mergeWhenBuildSucceeds: false, mergeUserId: null, mergeParams: null, mergeWhenBuildSucceedsSha: null } satisfies Partial<MergeRequest>;

/** The source head is no longer the commit the merging user approved: the automatic merge is off. */
class SourceMoved extends Error {}

/** GitLab's answer to `PUT .../merge` with a `sha` that is not the source head (status first: spec-decisions 32). */
const shaMismatch = (head: string | null) => apiError(409, `SHA does not match HEAD of source branch: ${head ?? ''}`);

/** GitLab's default merge commit message. */
export function defaultMergeMessage(mr: MergeRequest): string {
  return `Merge branch '${mr.sourceBranch}' into '${mr.targetBranch}'\n\n${mr.title}\n\n${mr.description ?? ''}\n\nSee merge request !${mr.iid}`;
}

/**
 * Accepting merge requests without a work tree, merge-when-build-succeeds, `merge_status`, and the
 * reactions to pushes (status reset and recheck, issues closed from the default branch) and to
 * commit status outcomes (the waiting merges).
 */
@Injectable()
export class MergeService {
  constructor(
    private readonly repo: MergeRequestsRepository,
    private readonly tx: Transactions,
    private readonly users: UserDirectory,
    private readonly requests: MergeRequestsService,
    private readonly mrGit: MergeRequestGit,
    private readonly git: GitService,
    private readonly projects: ProjectResolver,
    private readonly policy: PolicyService,
    private readonly push: PushService,
    private readonly commits: CommitsService,
    private readonly closing: ClosingIssues,
    private readonly events: EventsService,
    private readonly locks: RepositoryLocks,
    private readonly logger: Logger,
  ) {}

  /** `PUT .../merge_requests/:id`: the update, then `state_event=merge` as PUT .../merge (spec-decisions 7). */
  async update(user: User, ref: string, rawId: string, dto: UpdateMergeRequestDto): Promise<MergeRequest> {
    const { state_event, merge_commit_message, should_remove_source_branch, merge_when_build_succeeds, merged_when_build_succeeds, ...rest } = dto;
    const changes = Object.values(rest).some((v) => v !== undefined) || state_event !== 'merge';
    const updated = changes ? await this.requests.update(user, ref, rawId, { ...rest, state_event: state_event === 'merge' ? undefined : state_event }) : null;
    if (state_event !== 'merge') return updated as MergeRequest;
    return this.merge(user, ref, rawId, { merge_commit_message, should_remove_source_branch, merge_when_build_succeeds, merged_when_build_succeeds });
  }

  /**
   * `PUT .../merge`, checks in GitLab's order: push right to the target branch (401), open and not
   * WIP (405), then either wait for the build (merge_when_build_succeeds while the head's status is
   * pending or running) or merge now (405 `Branch cannot be merged` on conflicts).
   */
  async merge(user: User, ref: string, rawId: string, dto: MergeDto): Promise<MergeRequest> {
    const { project, abilities, mr } = await this.requests.findReadable(user, ref, rawId);
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
  async cancelMergeWhenBuildSucceeds(user: User, ref: string, rawId: string): Promise<MergeRequest> {
    const { project, abilities, mr } = await this.requests.findReadable(user, ref, rawId);
    const mayMerge = await this.push.canWriteBranch(project.id, mr.targetBranch, abilities);
    if (!mayMerge && !involvedIn(user, { authorId: mr.authorId, assigneeId: null })) throw new Unauthorized();
    if (!isOpen(mr)) throw new MethodNotAllowed();
    const cancelled = await this.tx.run(async (m) => {
      const current = await this.repo.lock(m, mr.id);
      if (!current || !current.mergeWhenBuildSucceeds) return false;
      await this.repo.update(m, mr.id, AUTO_MERGE_OFF);
      await addSystemNotes(m, { projectId: project.id, type: 'MergeRequest', id: mr.id }, user.id, [CANCELED]);
      return true;
    });
    if (!cancelled) throw apiError(406, '406 Not Acceptable');
    return this.repo.byId(mr.id);
  }

  /** Sets the automatic merge of exactly `sha`, the source head the user saw (the approved sha). */
  private async waitForBuild(user: User, project: Project, mr: MergeRequest, sha: Sha, params: MergeParams): Promise<MergeRequest> {
    await this.tx.run(async (m) => {
      const current = await this.repo.lock(m, mr.id);
      if (!current || !isOpen(current)) throw new MethodNotAllowed();
      await this.repo.update(m, mr.id, { mergeWhenBuildSucceeds: true, mergeUserId: user.id, mergeParams: params, mergeWhenBuildSucceedsSha: sha });
      await addSystemNotes(m, { projectId: project.id, type: 'MergeRequest', id: mr.id }, user.id, [
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
  private async mergeNow(user: User, project: Project, mr: MergeRequest, params: MergeParams, approved?: Sha): Promise<MergeRequest> {
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
        mergeCommitSha: merged!.sha,
        mergedAt: new Date(),
        mergeWhenBuildSucceeds: false,
        mergeUserId: user.id,
        mergeParams: null,
        mergeWhenBuildSucceedsSha: null,
        updatedAt: new Date(),
      });
      await addSystemNotes(m, { projectId: project.id, type: 'MergeRequest', id: mr.id }, user.id, ['Status changed to merged']);
      await this.requests.announce(m, mr.id, user, 'merge');
    });
    await this.events.record(this.requests.event(mr, user, 'merged'));
    await this.closing.close(user, merged.closes);
    if (params.should_remove_source_branch) await this.removeSourceBranch(user, mr, merged.source);
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

  /** Deletes the merged source branch, unless it is its project's default or a protected branch, or the user may not push there. */
  private async removeSourceBranch(user: User, mr: MergeRequest, sha: Sha): Promise<void> {
    const branch = parseRef(mr.sourceBranch);
    if (mr.sourceProjectId === null || branch === null) return;
    try {
      const source = await this.projects.find(mr.sourceProjectId);
      const abilities: Set<ProjectAbility> = await this.policy.projectAbilities(user, source);
      if (source.defaultBranch === mr.sourceBranch) return;
      if (PushService.matches(await this.push.protectedBranches(source.id), mr.sourceBranch)) return;
      if (!(await this.push.canWriteBranch(source.id, mr.sourceBranch, abilities))) return;
      await this.locks.run(source.id, () => this.git.repository(source.id).updateRef(branchRef(branch), ZERO_SHA, sha));
      await this.push.afterPush(source, user, [{ oldSha: sha, newSha: ZERO_SHA, ref: `refs/heads/${mr.sourceBranch}` }], 'api');
    } catch (e) {
      // a push to the source branch after the merge keeps it (the CAS fails): nothing is lost
      if (!(e instanceof RefUpdateRejected)) throw e;
    }
  }

  // ---------------------------------------------------------------- reactions

  /**
   * After a push: open merge requests with a moved source or target branch become `unchecked`, then
   * are rechecked in the background; commits arriving on the default branch close the issues they
   * name (as the pusher, who must be able to see and update them).
   */
  @OnDomainEvent('push.received', { durable: true, queue: 'push.merge-requests' })
  async afterPush(e: PushReceived): Promise<void> {
    const branches = e.updates.filter((u) => u.ref.startsWith('refs/heads/')).map((u) => u.ref.slice('refs/heads/'.length));
    const touched = await this.repo.openTouching(e.projectId, branches);
    await this.resetMergeWhenBuildSucceeds(e, touched);
    await this.repo.setMergeStatus(
      touched.map((m) => m.id),
      'unchecked',
    );
    try {
      await this.closeFromPush(e);
    } catch (err) {
      this.logger.error('closing issues after a push failed', { project_id: e.projectId, error: err instanceof Error ? err.message : String(err) });
    }
    for (const mr of touched) await this.recheck(mr);
  }

  /**
   * GitLab's `RefreshService#reset_merge_when_build_succeeds`: a push that moves the source branch of
   * a merge request waiting to be merged automatically calls that merge off (flag, merging user and
   * parameters cleared, "Canceled the automatic merge" as the pusher), whatever the transport — smart
   * HTTP, the files API, branch API, a merge, a fork's own push. What was approved was the old head.
   * A push whose new head is the approved sha itself (approved after the push) keeps it.
   */
  private async resetMergeWhenBuildSucceeds(e: PushReceived, touched: MergeRequest[]): Promise<void> {
    for (const mr of touched) {
      if (!mr.mergeWhenBuildSucceeds || mr.sourceProjectId !== e.projectId) continue;
      const update = e.updates.find((u) => u.ref === `refs/heads/${mr.sourceBranch}`);
      if (!update || update.newSha === mr.mergeWhenBuildSucceedsSha) continue;
      await this.cancelAutomaticMerge(mr.id, e.userId, (current) => current.mergeWhenBuildSucceedsSha !== update.newSha);
    }
  }

  /** Clears the automatic merge of `id` (when still set and `still(current)`), with GitLab's note by `userId`. */
  private async cancelAutomaticMerge(id: number, userId: number | null, still: (current: MergeRequest) => boolean = () => true): Promise<void> {
    await this.tx.run(async (m) => {
      const current = await this.repo.lock(m, id);
      if (!current || !current.mergeWhenBuildSucceeds || !still(current)) return;
      await this.repo.update(m, id, { ...AUTO_MERGE_OFF, updatedAt: new Date() });
      if (userId !== null) await addSystemNotes(m, { projectId: current.projectId, type: 'MergeRequest', id }, userId, [CANCELED]);
    });
  }

  /** Recomputes `merge_status` of an open merge request. */
  async recheck(mr: MergeRequest): Promise<void> {
    try {
      const ok = await this.mrGit.mergeable(mr);
      await this.repo.setMergeStatus([mr.id], ok ? 'can_be_merged' : 'cannot_be_merged');
    } catch (err) {
      this.logger.error('merge status check failed', { merge_request_id: mr.id, error: err instanceof Error ? err.message : String(err) });
    }
  }

  private async closeFromPush(e: PushReceived): Promise<void> {
    const project = await this.projects.find(e.projectId);
    if (!project.defaultBranch) return;
    const update = e.updates.find((u) => u.ref === `refs/heads/${project.defaultBranch}` && u.newSha !== ZERO_SHA);
    if (!update) return;
    const user = await this.users.byId(e.userId);
    if (!user) return;
    const [from, to] = [parseSha(update.oldSha), parseSha(update.newSha)];
    if (!from || !to) return;
    const { commits } = await this.git.repository(project.id).commitsBetween(from, to);
    if (commits.length === 0) return;
    await this.closing.close(user, await this.closing.referenced(user, project, commits.map((c) => c.message)));
  }

  /**
   * A commit's CI outcome changed (a commit status was posted, or a pipeline's build finished): open
   * merge requests of that project waiting for the build of exactly that source head are merged with
   * their stored parameters by their merging user, when every status of the head succeeded. A failed
   * build leaves them open (and waiting).
   */
  @OnDomainEvent('commit_status.changed')
  async afterCommitStatus(e: CommitStatusChanged): Promise<void> {
    if (e.status !== 'success') return;
    const waiting = await this.repo.waitingForBuild(e.projectId);
    if (waiting.length === 0) return;
    // every status of the head counts (CI builds and external statuses alike), whoever reported
    if ((await this.commits.combinedStatusOf(e.projectId, e.sha)) !== 'success') return;
    for (const mr of waiting) {
      try {
        const heads = await this.mrGit.heads(mr);
        const approved = parseSha(mr.mergeWhenBuildSucceedsSha);
        if (e.sha !== approved && e.sha !== heads.source) continue;
        // the build that succeeded must be of the approved commit, and that commit still the source head
        if (approved === null || heads.source !== approved || mr.mergeUserId === null) {
          await this.cancelAutomaticMerge(mr.id, mr.mergeUserId, (c) => c.mergeWhenBuildSucceedsSha === mr.mergeWhenBuildSucceedsSha);
          continue;
        }
        // the merging user must still be one who could ask now: a blocked user's request is not carried out
        const user = await this.users.byId(mr.mergeUserId);
        if (!user || user.state !== 'active') continue;
        const project = await this.projects.find(mr.projectId);
        const abilities = await this.policy.projectAbilities(user, project);
        if (!(await this.push.canWriteBranch(project.id, mr.targetBranch, abilities)) || isWorkInProgress(mr.title)) continue;
        await this.mergeNow(user, project, mr, mr.mergeParams ?? {}, approved);
      } catch (err) {
        if (err instanceof SourceMoved) {
          await this.cancelAutomaticMerge(mr.id, mr.mergeUserId).catch((e: unknown) =>
            this.logger.error('cancelling an automatic merge failed', { merge_request_id: mr.id, error: e instanceof Error ? e.message : String(e) }),
          );
          continue;
        }
        this.logger.error('automatic merge failed', { merge_request_id: mr.id, error: err instanceof Error ? err.message : String(err) });
      }
    }
  }
}
