import { Injectable } from '@nestjs/common';
import { Logger } from '../common/logging/logger';
import { OnDomainEvent, PushReceived } from '../domain-events/domain-events';
import { GitService } from '../git/git.service';
import { parseSha, ZERO_SHA } from '../git/names';
import { ProjectResolver } from '../projects/project-resolver.service';
import { UserDirectory } from '../users/user-directory.service';
import { AutomaticMerges } from './automatic-merges.service';
import { ClosingIssues } from './closing-issues.service';
import { MergeRequest } from './merge-request.entity';
import { MergeRequestGit } from './merge-request-git.service';
import { MergeRequestsRepository } from './merge-requests.repository';

/**
 * What a push does to merge requests (GitLab's MergeRequests::RefreshService): open ones with a moved
 * source or target branch become `unchecked` and are rechecked, a moved source calls an automatic
 * merge off, a moved source branch moves `refs/merge-requests/<iid>/head`, and commits arriving on the
 * default branch close the issues they name.
 */
@Injectable()
export class MergeRequestPushReactions {
  constructor(
    private readonly repo: MergeRequestsRepository,
    private readonly automatic: AutomaticMerges,
    private readonly mrGit: MergeRequestGit,
    private readonly closing: ClosingIssues,
    private readonly projects: ProjectResolver,
    private readonly users: UserDirectory,
    private readonly git: GitService,
    private readonly logger: Logger,
  ) {}

  /**
   * After a push: open merge requests with a moved source or target branch become `unchecked`, then
   * are rechecked in the background; commits arriving on the default branch close the issues they
   * name (as the pusher, who must be able to see and update them).
   */
  @OnDomainEvent('push.received', { durable: true, queue: 'push.merge-requests' })
  async afterPush(e: PushReceived): Promise<void> {
    const branches = e.updates.filter((u) => u.ref.startsWith('refs/heads/')).map((u) => u.ref.slice('refs/heads/'.length));
    const touched = await this.repo.openTouching(e.projectId, branches);
    await this.automatic.resetAfterPush(e, touched);
    await this.repo.setMergeStatus(
      touched.map((m) => m.id),
      'unchecked',
    );
    try {
      await this.closeFromPush(e);
    } catch (err) {
      this.logger.error('closing issues after a push failed', { project_id: e.projectId, error: err instanceof Error ? err.message : String(err) });
    }
    for (const mr of touched) {
      const sourceMoved = mr.sourceProjectId === e.projectId && branches.includes(mr.sourceBranch);
      if (sourceMoved) await this.writeHeadRef(mr);
      await this.recheck(mr);
    }
  }

  /** `refs/merge-requests/<iid>/head` follows the source branch (8.17's RefreshService: reload_merge_requests, fetch_ref). */
  private async writeHeadRef(mr: MergeRequest): Promise<void> {
    try {
      await this.mrGit.writeHeadRef(mr);
    } catch (err) {
      this.logger.error('writing the merge request ref failed', { merge_request_id: mr.id, error: err instanceof Error ? err.message : String(err) });
    }
  }

  /** Recomputes `merge_status` of an open merge request. */
  private async recheck(mr: MergeRequest): Promise<void> {
    try {
      const ok = await this.mrGit.mergeable(mr);
      await this.repo.setMergeStatus([mr.id], ok ? 'can_be_merged' : 'cannot_be_merged');
    } catch (err) {
      this.logger.error('merge status check failed', { merge_request_id: mr.id, error: err instanceof Error ? err.message : String(err) });
    }
  }

  private async closeFromPush(e: PushReceived): Promise<void> {
    const project = await this.projects.find({ id: e.projectId });
    if (!project.defaultBranch) return;
    const update = e.updates.find((u) => u.ref === `refs/heads/${project.defaultBranch}` && u.newSha !== ZERO_SHA);
    if (!update) return;
    const user = await this.users.byId(e.userId);
    if (!user) return;
    const [from, to] = [parseSha(update.oldSha), parseSha(update.newSha)];
    if (!from || !to) return;
    const { commits } = await this.git.repository(project.id).commitsBetween(from, to);
    if (commits.length === 0) return;
    await this.closing.close(
      user,
      await this.closing.referenced(
        user,
        project,
        commits.map((c) => c.message),
      ),
    );
  }
}
