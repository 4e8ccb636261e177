import { Injectable } from '@nestjs/common';
import { Conflict, MethodNotAllowed, NotAcceptable, Unauthorized } from '../common/errors/domain-errors';
import { Transactions } from '../database/transactions';
import { parseSha, Sha } from '../git/names';
import { Project } from '../projects/project.entity';
import { CommitsService } from '../repo-api/commits.service';
import { PushService } from '../repo-api/push.service';
import { MergeDto } from './dto/merge-request.dto';
import { isOpen, isWorkInProgress, MergeParams, MergeRequest } from './merge-request.entity';
import { MergeRequestGit } from './merge-request-git.service';
import { involvedIn } from './merge-request-policy';
import { MergeRequestsRepository } from './merge-requests.repository';
import { MergeRequestsService } from './merge-requests.service';
import { AutomaticMergeSwitch } from './automatic-merge-switch.service';
import { MergeExecution, SourceMoved } from './merge-execution.service';
import { SystemNotesService } from '../notes/system-notes.service';
import { ProjectRef } from '../common/params/refs';
import type { Caller } from '../common/caller/caller';

const ACTIVE = ['pending', 'running'];

/** GitLab's answer to `PUT .../merge` with a `sha` that is not the source head (status first: spec-decisions 32). */
const shaMismatch = (head: string | null) => new Conflict(`SHA does not match HEAD of source branch: ${head ?? ''}`);

/**
 * Accepting merge requests: `PUT .../merge` (merge now through MergeExecution, or merge when the build
 * succeeds) and its cancel (AutomaticMergeSwitch). AutomaticMerges carries out and calls off the
 * waiting merges; the reactions to pushes are MergeRequestPushReactions'.
 */
@Injectable()
export class MergeService {
  constructor(
    private readonly repo: MergeRequestsRepository,
    private readonly tx: Transactions,
    private readonly requests: MergeRequestsService,
    private readonly mrGit: MergeRequestGit,
    private readonly push: PushService,
    private readonly commits: CommitsService,
    private readonly systemNotes: SystemNotesService,
    private readonly execution: MergeExecution,
    private readonly automatic: AutomaticMergeSwitch,
  ) {}

  /**
   * `PUT .../merge`, checks in GitLab's order: push right to the target branch (401), open and not
   * WIP (405), then either wait for the build (merge_when_build_succeeds while the head's status is
   * pending or running) or merge now (405 `Branch cannot be merged` on conflicts).
   */
  async merge(user: Caller, ref: ProjectRef, id: number, dto: MergeDto): Promise<MergeRequest> {
    const { project, abilities, mr } = await this.requests.findReadable(user, ref, id);
    if (!(await this.push.canMergeIntoBranch(project.id, mr.targetBranch, abilities))) throw new Unauthorized();
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
      return await this.execution.mergeNow(user, project, mr, params, reviewed);
    } catch (e) {
      // the source moved between the check and the merge: the reviewed sha is no longer the head
      if (e instanceof SourceMoved) throw shaMismatch((await this.mrGit.heads(mr)).source);
      throw e;
    }
  }

  /** `PUT|POST .../cancel_merge_when_build_succeeds`: 401 unless the user may merge or wrote it; 405 when not open; 406 when not set. */
  async cancelMergeWhenBuildSucceeds(user: Caller, ref: ProjectRef, id: number): Promise<MergeRequest> {
    const { project, abilities, mr } = await this.requests.findReadable(user, ref, id);
    const mayMerge = await this.push.canMergeIntoBranch(project.id, mr.targetBranch, abilities);
    if (!mayMerge && !involvedIn(user, { authorId: mr.authorId, assigneeId: null })) throw new Unauthorized();
    if (!isOpen(mr)) throw new MethodNotAllowed();
    if (!(await this.automatic.off(mr.id, user.id))) throw new NotAcceptable();
    return this.repo.byId(mr.id);
  }

  /** Sets the automatic merge of exactly `sha`, the source head the user saw (the approved sha). */
  private async waitForBuild(user: Caller, project: Project, mr: MergeRequest, sha: Sha, params: MergeParams): Promise<MergeRequest> {
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
}
