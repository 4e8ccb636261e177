import { DomainEvents, ObjectAction } from '../domain-events/domain-events';
import { Injectable } from '@nestjs/common';
import {
  ErrorWithBody,
  Forbidden,
  InvalidAttribute,
  isUniqueViolation,
  NotFound,
  NotModified,
  Rejected,
  ValidationFailed,
} from '../common/errors/domain-errors';
import { checkTitle } from '../common/dto/titles';
import { PageParams, Paginated, pageRequest, paginateAll } from '../common/pagination/pagination';
import { ProjectAbility } from '../common/policy/policy';
import { PolicyService } from '../common/policy/policy.service';
import type { ActivityRecord } from '../domain-events/domain-event-catalogue';
import { parseNewRefName } from '../git/names';
import { Commit, DiffEntry } from '../git/objects';
import { LabelsService } from '../labels/labels.service';
import { IssuableKind, IssuablesService } from '../issuables/issuables.service';
import { Project } from '../projects/project.entity';
import { ProjectResolver } from '../projects/project-resolver.service';
import { SubscriptionsService } from '../subscriptions/subscriptions.service';
import { Transactions, Tx } from '../database/transactions';
import { CreateMergeRequestDto, ListMergeRequestsDto, UpdateMergeRequestDto } from './dto/merge-request.dto';
import { isOpen, isWorkInProgress, MergeRequest } from './merge-request.entity';
import { mergeRequestChangeRules } from './merge-request-changes';
import { MergeRequestGit } from './merge-request-git.service';
import { canAdminMergeRequest, canUpdateMergeRequest, mentionPattern } from './merge-request-policy';
import { MergeRequestViews } from './merge-request-views.service';
import { MergeRequestDetails, MergeRequestsRepository } from './merge-requests.repository';
import { ProjectRef } from '../common/params/refs';
import type { Caller } from '../common/caller/caller';

export interface MergeRequestInProject {
  project: Project;
  abilities: Set<ProjectAbility>;
  mr: MergeRequest;
}

const sameBranch = () => new ErrorWithBody(422, ['You can not use same project/branch for source and target']);
const duplicate = (title: string) => new ErrorWithBody(409, { message: [`Cannot Create: This merge request already exists: ${JSON.stringify([title])}`] });

/** MergeRequest#hook_attrs (8.8): the record's columns, snake_case, plus `work_in_progress`. */
export function mergeRequestHookAttrs(mr: MergeRequest): Record<string, unknown> {
  return {
    id: mr.id,
    target_branch: mr.targetBranch,
    source_branch: mr.sourceBranch,
    source_project_id: mr.sourceProjectId,
    author_id: mr.authorId,
    assignee_id: mr.assigneeId,
    title: mr.title,
    created_at: mr.createdAt,
    updated_at: mr.updatedAt,
    milestone_id: mr.milestoneId,
    state: mr.state,
    merge_status: mr.mergeStatus,
    target_project_id: mr.projectId,
    iid: mr.iid,
    description: mr.description,
    merge_params: mr.mergeParams ?? {},
    merge_when_build_succeeds: mr.mergeWhenBuildSucceeds,
    merge_user_id: mr.mergeUserId,
    merge_commit_sha: mr.mergeCommitSha,
    deleted_at: mr.deletedAt,
    work_in_progress: isWorkInProgress(mr.title),
  };
}

/**
 * Merge requests: per-project iids, lists, create/update/delete, subscriptions, commits and changes.
 * Writes run in one transaction with their system notes; events follow the commit. Merging lives in
 * MergeService.
 */
@Injectable()
export class MergeRequestsService {
  constructor(
    private readonly repo: MergeRequestsRepository,
    private readonly tx: Transactions,
    private readonly resolver: ProjectResolver,
    private readonly policy: PolicyService,
    private readonly labels: LabelsService,
    private readonly subscriptions: SubscriptionsService,
    private readonly git: MergeRequestGit,
    private readonly views: MergeRequestViews,
    private readonly domainEvents: DomainEvents,
    private readonly issuables: IssuablesService,
  ) {}

  /**
   * In the change's transaction, after its writes: the `merge_request.changed` domain event (the project hooks)
   * (GitLab 8.8's MergeRequest#hook_attrs of the request as written, as object_attributes).
   */
  async announce(m: Tx, id: number, user: Caller, action: ObjectAction): Promise<void> {
    const mr = await this.repo.lock(m, id);
    if (!mr) return;
    await this.domainEvents.emit(m, 'merge_request.changed', { projectId: mr.projectId, userId: user.id, action, attributes: mergeRequestHookAttrs(mr) });
    if (action === 'merge') await this.domainEvents.emit(m, 'merge_request.merged', { mergeRequestId: mr.id, projectId: mr.projectId, userId: user.id });
  }

  /** `iid`, `state` (opened — reopened included —, closed, merged; anything else: all), `order_by`, `sort`. */
  async list(user: Caller, ref: ProjectRef, dto: ListMergeRequestsDto): Promise<Paginated<MergeRequestDetails>> {
    const { project } = await this.resolver.resolve(user, ref, 'read_merge_request');
    const page = pageRequest(dto);
    const sort = (dto.sort ?? 'desc').toLowerCase();
    if (sort !== 'asc' && sort !== 'desc') throw new InvalidAttribute('sort');
    const [items, total] = await this.repo.listDetailed(
      {
        projectId: project.id,
        iids: dto.iid,
        state: dto.state,
        orderBy: (dto.order_by ?? 'created_at') as 'created_at' | 'updated_at',
        sort: sort === 'asc' ? 'ASC' : 'DESC',
      },
      page,
      user.id,
      mentionPattern(user.username),
    );
    return new Paginated(items, total, page);
  }

  /**
   * The merge request with global id `id` in the project, if the caller may read both:
   * `404 Project Not Found`, 403 when the project's merge requests are off, `404 Merge Request Not
   * Found` for an absent one or one of another project.
   */
  async findReadable(user: Caller, ref: ProjectRef, id: number): Promise<MergeRequestInProject> {
    const { project, abilities } = await this.resolver.resolve(user, ref, 'read_project');
    if (!abilities.has('read_merge_request')) throw new Forbidden();
    const mr = await this.repo.findInProject(project.id, id);
    if (!mr) throw new NotFound('Merge Request');
    return { project, abilities, mr };
  }

  /**
   * The (not deleted) merge requests that `refs` name by project and iid, whoever asks: the caller
   * decides who may see them (read_merge_request of their project). One statement.
   */
  byIids(refs: { projectId: number; iid: number }[]): Promise<MergeRequest[]> {
    return this.repo.byIids(refs);
  }

  async get(user: Caller, ref: ProjectRef, id: number): Promise<MergeRequest> {
    return (await this.findReadable(user, ref, id)).mr;
  }

  /** Whole on the first page unless `per_page` says otherwise (GitLab 8 answered it unpaginated). */
  async commits(user: Caller, ref: ProjectRef, id: number, q: PageParams): Promise<Paginated<Commit>> {
    const { mr } = await this.readableWithCode(user, ref, id);
    return paginateAll(await this.git.commits(mr), q, { whole: true });
  }

  async changes(user: Caller, ref: ProjectRef, id: number): Promise<{ mr: MergeRequest; entries: DiffEntry[]; truncated: boolean }> {
    const { mr } = await this.readableWithCode(user, ref, id);
    return { mr, ...(await this.git.changes(mr)) };
  }

  private async readableWithCode(user: Caller, ref: ProjectRef, id: number): Promise<MergeRequestInProject> {
    const found = await this.findReadable(user, ref, id);
    if (!found.abilities.has('download_code')) throw new Forbidden();
    return found;
  }

  /**
   * `POST`: from a branch of `:id` into `target_branch` of the same project or, with
   * `target_project_id`, of the project `:id` was forked from. 201; GitLab's 422 bodies for the same
   * branch and a target that is not the fork source, 409 for an open duplicate, 400 for branches that
   * do not exist.
   */
  async create(user: Caller, ref: ProjectRef, dto: CreateMergeRequestDto): Promise<MergeRequest> {
    const { project: source, abilities } = await this.resolver.resolve(user, ref, 'create_merge_request');
    const title = checkTitle(dto.title);
    let target = source;
    let targetAbilities = abilities;
    if (dto.target_project_id !== undefined && dto.target_project_id !== source.id) {
      let found: Project | null = null;
      try {
        found = await this.resolver.find({ id: dto.target_project_id });
      } catch (e) {
        if (!(e instanceof NotFound)) throw e;
      }
      const fa = found ? await this.policy.projectAbilities(user, found) : new Set<ProjectAbility>();
      if (!found || !fa.has('read_project') || source.forkedFromProjectId !== found.id) {
        throw new ErrorWithBody(422, ['Source project is not a fork of target project']);
      }
      if (!fa.has('read_merge_request')) throw new Forbidden();
      target = found;
      targetAbilities = fa;
    }
    const sourceBranch = dto.source_branch.trim();
    const targetBranch = dto.target_branch.trim();
    if (target.id === source.id && sourceBranch === targetBranch) throw sameBranch();
    await this.assertBranch(source.id, sourceBranch, 'source_branch');
    await this.assertBranch(target.id, targetBranch, 'target_branch');
    const labelTitles = dto.labels ?? [];
    this.labels.assertValidTitles(labelTitles);
    const canAdmin = canAdminMergeRequest(targetAbilities);
    const assigneeId = canAdmin ? (dto.assignee_id ?? null) : null;
    const milestoneId = canAdmin ? (dto.milestone_id ?? null) : null;
    if (assigneeId !== null) await this.issuables.assignee(target, assigneeId, 'read_merge_request');
    if (milestoneId !== null) await this.issuables.milestone(target, milestoneId);
    if (dto.description !== undefined && dto.description.includes('\0')) throw new InvalidAttribute('description');

    const key = { sourceProjectId: source.id, sourceBranch, projectId: target.id, targetBranch };
    let mr: MergeRequest;
    try {
      mr = await this.tx.run(async (m) => {
        const existing = await this.repo.findOpenDuplicate(key, 0, m);
        if (existing) throw duplicate(existing.title);
        const created = await this.repo.insert(m, {
          ...key,
          title,
          description: dto.description ?? null,
          authorId: user.id,
          assigneeId,
          milestoneId,
        });
        if (canAdmin && labelTitles.length) {
          await this.labels.replaceLinks(m, 'MergeRequest', created.id, await this.labels.findOrCreate(m, target.id, labelTitles));
        }
        await this.announce(m, created.id, user, 'open');
        return created;
      });
    } catch (e) {
      if (isUniqueViolation(e, 'merge_requests_open_branches_key')) {
        throw duplicate((await this.repo.findOpenDuplicate(key))?.title ?? title);
      }
      throw e;
    }
    // refs/merge-requests/<iid>/head, before the answer: fetchable as soon as the merge request exists
    await this.git.writeHeadRef(mr);
    await this.domainEvents.emitCommitted('activity.recorded', { events: [this.event(mr, user, 'created')] });
    return this.repo.byId(mr.id);
  }

  /**
   * `PUT`: `title`, `description`, `target_branch`, `state_event` (close, reopen; merge is handled by
   * MergeRequestUpdates through MergeService), and for those who administer merge requests `assignee_id`,
   * `milestone_id`, `labels`. `source_branch` → 400. Changes leave system notes.
   */
  async update(user: Caller, ref: ProjectRef, id: number, dto: UpdateMergeRequestDto): Promise<MergeRequest> {
    const { project, abilities, mr } = await this.findReadable(user, ref, id);
    if (!canUpdateMergeRequest(user, abilities, mr)) throw new Forbidden();
    if (dto.source_branch !== undefined) throw new Rejected('Source branch cannot be changed');
    const targetBranch = dto.target_branch?.trim();
    try {
      return await this.issuables.update(user, { project, abilities, record: mr }, dto, {
        ...this.kind,
        ...mergeRequestChangeRules(targetBranch),
        validate: () => this.checkTargetBranch(project, mr, targetBranch),
      });
    } catch (e) {
      if (isUniqueViolation(e, 'merge_requests_open_branches_key')) throw duplicate(mr.title);
      throw e;
    }
  }

  /** Merge requests in the shared issuable update: admin_merge_request, their domain events, `updated` only without a state change. */
  private readonly kind: IssuableKind<MergeRequest> = {
    type: 'MergeRequest',
    name: 'Merge Request',
    adminAbility: 'admin_merge_request',
    readAbility: 'read_merge_request',
    records: this.repo,
    labelsBesideTransition: false,
    event: (mr, user, action) => this.event(mr, user, action),
    announce: async (m, current, user, action, reassigned) => {
      await this.announce(m, current.id, user, action);
      if (reassigned) {
        await this.domainEvents.emit(m, 'merge_request.reassigned', {
          mergeRequestId: current.id,
          projectId: current.projectId,
          userId: user.id,
          previousAssigneeId: current.assigneeId,
        });
      }
    },
  };

  /** A new target branch: another than the source (422), existing (400), and no open duplicate of the request (409). */
  private async checkTargetBranch(project: Project, mr: MergeRequest, targetBranch: string | undefined): Promise<void> {
    if (targetBranch === undefined || targetBranch === mr.targetBranch) return;
    if (mr.sourceProjectId === mr.projectId && targetBranch === mr.sourceBranch) throw sameBranch();
    await this.assertBranch(project.id, targetBranch, 'target_branch');
    const dup =
      mr.sourceProjectId === null
        ? null
        : await this.repo.findOpenDuplicate(
            { sourceProjectId: mr.sourceProjectId, sourceBranch: mr.sourceBranch, projectId: mr.projectId, targetBranch },
            mr.id,
          );
    if (dup && isOpen(mr)) throw duplicate(dup.title);
  }

  /** Soft delete (owners and admins): 403 for others, 404 when absent. Returns the record. */
  async remove(user: Caller, ref: ProjectRef, id: number): Promise<MergeRequest> {
    const { abilities, mr } = await this.findReadable(user, ref, id);
    if (!abilities.has('destroy_merge_request')) throw new Forbidden();
    if (!(await this.repo.softDelete(mr.id))) throw new NotFound('Merge Request');
    await this.domainEvents.emitCommitted('activity.recorded', { events: [this.event(mr, user, 'destroyed')] });
    return this.repo.byId(mr.id);
  }

  /** Subscribes (201; 304 when already subscribed, participants included) or unsubscribes (200; 304). */
  async setSubscription(user: Caller, ref: ProjectRef, id: number, subscribed: boolean): Promise<MergeRequest> {
    const { mr } = await this.findReadable(user, ref, id);
    if ((await this.views.subscribed(user, mr)) === subscribed) throw new NotModified();
    await this.subscriptions.set(user.id, 'MergeRequest', mr.id, subscribed);
    return mr;
  }

  /** A note was added (NotesService): the merge request's `updated_at` is now, in the note's transaction. */
  touch(tx: Tx, id: number): Promise<void> {
    return this.repo.touch(tx, id);
  }

  // ---------------------------------------------------------------- helpers

  /** A branch named by a client: a valid name that exists, else 400 with the field. */
  private async assertBranch(projectId: number, name: string, field: 'source_branch' | 'target_branch'): Promise<void> {
    if (parseNewRefName(name) === null) throw new ValidationFailed({ [field]: ['is invalid'] });
    if (!(await this.git.branchExists(projectId, name))) throw new ValidationFailed({ [field]: ['does not exist'] });
  }

  event(mr: MergeRequest, user: Caller, action: ActivityRecord['action']): ActivityRecord {
    return { projectId: mr.projectId, authorId: user.id, action, targetId: mr.id, targetType: 'MergeRequest', targetTitle: mr.title };
  }
}
