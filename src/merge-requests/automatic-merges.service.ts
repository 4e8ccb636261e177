import { Injectable } from '@nestjs/common';
import { Logger } from '../common/logging/logger';
import { PolicyService } from '../common/policy/policy.service';
import { CommitStatusChanged, OnDomainEvent, PushReceived } from '../domain-events/domain-events';
import { parseSha } from '../git/names';
import { ProjectResolver } from '../projects/project-resolver.service';
import { CommitsService } from '../repo-api/commits.service';
import { PushService } from '../repo-api/push.service';
import { UserDirectory } from '../users/user-directory.service';
import { isWorkInProgress, MergeRequest } from './merge-request.entity';
import { MergeRequestGit } from './merge-request-git.service';
import { MergeRequestsRepository } from './merge-requests.repository';
import { AutomaticMergeSwitch } from './automatic-merge-switch.service';
import { MergeExecution, SourceMoved } from './merge-execution.service';

/**
 * Merge when build succeeds in the background, once set (MergeService sets it and cancels it on
 * request): called off by a push that moves the source, or when what succeeded is not the approved
 * head; carried out when every status of the approved head succeeded, by the merging user if that
 * user could still merge.
 */
@Injectable()
export class AutomaticMerges {
  constructor(
    private readonly repo: MergeRequestsRepository,
    private readonly autoMerge: AutomaticMergeSwitch,
    private readonly merges: MergeExecution,
    private readonly mrGit: MergeRequestGit,
    private readonly commits: CommitsService,
    private readonly users: UserDirectory,
    private readonly projects: ProjectResolver,
    private readonly policy: PolicyService,
    private readonly push: PushService,
    private readonly logger: Logger,
  ) {}

  /**
   * GitLab's `RefreshService#reset_merge_when_build_succeeds`: a push that moves the source branch of
   * a merge request waiting to be merged automatically calls that merge off (flag, merging user and
   * parameters cleared, "Canceled the automatic merge" as the pusher), whatever the transport — smart
   * HTTP, the files API, branch API, a merge, a fork's own push. What was approved was the old head.
   * A push whose new head is the approved sha itself (approved after the push) keeps it.
   */
  async resetAfterPush(e: PushReceived, touched: MergeRequest[]): Promise<void> {
    for (const mr of touched) {
      if (!mr.mergeWhenBuildSucceeds || mr.sourceProjectId !== e.projectId) continue;
      const update = e.updates.find((u) => u.ref === `refs/heads/${mr.sourceBranch}`);
      if (!update || update.newSha === mr.mergeWhenBuildSucceedsSha) continue;
      await this.cancel(mr.id, e.userId, (current) => current.mergeWhenBuildSucceedsSha !== update.newSha);
    }
  }

  /** Clears the automatic merge of `id` (when still set and `still(current)`), with GitLab's note by `userId`. */
  private async cancel(id: number, userId: number | null, still?: (current: MergeRequest) => boolean): Promise<void> {
    await this.autoMerge.off(id, userId, still);
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
          await this.cancel(mr.id, mr.mergeUserId, (c) => c.mergeWhenBuildSucceedsSha === mr.mergeWhenBuildSucceedsSha);
          continue;
        }
        // the merging user must still be one who could ask now: a blocked user's request is not carried out
        const user = await this.users.byId(mr.mergeUserId);
        if (!user || user.state !== 'active') continue;
        const project = await this.projects.find({ id: mr.projectId });
        const abilities = await this.policy.projectAbilities(user, project);
        if (!(await this.push.canMergeIntoBranch(project.id, mr.targetBranch, abilities)) || isWorkInProgress(mr.title)) continue;
        await this.merges.mergeNow(user, project, mr, mr.mergeParams ?? {}, approved);
      } catch (err) {
        if (err instanceof SourceMoved) {
          await this.cancel(mr.id, mr.mergeUserId).catch((e: unknown) =>
            this.logger.error('cancelling an automatic merge failed', { merge_request_id: mr.id, error: e instanceof Error ? e.message : String(e) }),
          );
          continue;
        }
        this.logger.error('automatic merge failed', { merge_request_id: mr.id, error: err instanceof Error ? err.message : String(err) });
      }
    }
  }
}
