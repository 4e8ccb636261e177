import { Injectable } from '@nestjs/common';
import { DomainEvents } from '../domain-events/domain-events';
import { checkTitle } from '../common/dto/titles';
import { BadRequest, Forbidden, NotFound, NotModified } from '../common/errors/domain-errors';
import { Paginated, pageRequest } from '../common/pagination/pagination';
import { ProjectAbility, ProjectAccess, projectAbilities } from '../common/policy/policy';
import { accessFrom } from '../common/policy/policy.service';
import { Transactions, Tx } from '../database/transactions';
import type { ActivityRecord } from '../domain-events/domain-event-catalogue';
import { LabelsService } from '../labels/labels.service';
import { MilestonesService } from '../milestones/milestones.service';
import { Project } from '../projects/project.entity';
import { ProjectResolver } from '../projects/project-resolver.service';
import { projectFullPath } from '../projects/projects.presenter';
import { SubscriptionsService } from '../subscriptions/subscriptions.service';
import { IssuableKind, IssuablesService } from '../issuables/issuables.service';
import { CreateIssueDto, ListIssuesDto, ListProjectIssuesDto, MoveIssueDto, UpdateIssueDto } from './dto/issue.dto';
import { nextInternalId } from '../database/internal-ids';
import { Issue } from './issue.entity';
import { loadParticipation, mentionPattern } from './issue-participation';
import { canReadIssue, canSetTimestamps, canUpdateIssue } from '../common/policy/issue-policy';
import { readableIssuesInProject } from '../common/policy/visibility';
import { issueOrder, issueStates } from './issue-rules';
import { IssueDetails, IssueFilter, IssueReference, IssuesRepository, ReferencedIssue } from './issues.repository';
import { SystemNotesService } from '../notes/system-notes.service';
import { ProjectRef } from '../common/params/refs';
import type { Caller } from '../common/caller/caller';

export type { IssueReference, ReferencedIssue } from './issues.repository';

export interface IssueInProject {
  project: Project;
  access: ProjectAccess;
  abilities: Set<ProjectAbility>;
  issue: Issue;
}

/**
 * Issues: per-project iids, lists with filters, create/update/delete, move and subscriptions.
 * Every write runs in one transaction (with its system notes); events are recorded after commit.
 */
@Injectable()
export class IssuesService {
  constructor(
    private readonly issues: IssuesRepository,
    private readonly tx: Transactions,
    private readonly projects: ProjectResolver,
    private readonly labels: LabelsService,
    private readonly milestones: MilestonesService,
    private readonly subscriptions: SubscriptionsService,
    private readonly domainEvents: DomainEvents,
    private readonly issuables: IssuablesService,
    private readonly systemNotes: SystemNotesService,
  ) {}

  // ---------------------------------------------------------------- lists

  /** `GET /issues`: issues the caller authored, in projects it can still read. */
  async listAuthored(user: Caller, q: ListIssuesDto): Promise<Paginated<IssueDetails>> {
    return this.page(user, q, {
      authorId: user.id,
      inProjectsReadableBy: user,
    });
  }

  /** `GET /projects/:id/issues` with `state`, `labels`, `milestone`, `iid`, `order_by`, `sort`. */
  async listForProject(user: Caller, ref: ProjectRef, q: ListProjectIssuesDto): Promise<Paginated<IssueDetails>> {
    const { project, access } = await this.projects.resolve(user, ref, 'read_issue');
    return this.page(user, q, {
      projectId: project.id,
      conditions: [readableIssuesInProject('i', user, access)],
      milestoneTitle: q.milestone,
      iids: q.iid,
    });
  }

  /** `GET /projects/:id/milestones/:milestone_id/issues`. */
  async listForMilestone(user: Caller, ref: ProjectRef, milestoneId: number, q: ListIssuesDto): Promise<Paginated<IssueDetails>> {
    const { project, access, abilities } = await this.projects.resolve(user, ref, 'read_milestone');
    if (abilities.has('read_issue')) {
      // an issue of the project with this milestone proves the milestone is the project's: the
      // milestone is looked up only for an empty page (404 for another project's or no milestone)
      const found = await this.page(user, q, { projectId: project.id, milestoneId, conditions: [readableIssuesInProject('i', user, access)] });
      if (found.items.length) return found;
      await this.milestones.findInProject(project.id, milestoneId);
      return found;
    }
    await this.milestones.findInProject(project.id, milestoneId);
    return new Paginated([], 0, pageRequest(q));
  }

  /** `state`, `labels`, order and one page with its authors, assignees, milestones and note statistics: one statement. */
  private async page(viewer: Caller, q: ListIssuesDto, filter: IssueFilter): Promise<Paginated<IssueDetails>> {
    const order = issueOrder(q);
    const page = pageRequest(q);
    const labels = q.labels?.length ? [...new Set(q.labels.map((l) => l.toLowerCase()))] : undefined;
    const [items, total] = await this.issues.listDetailed(
      { ...filter, states: issueStates(q.state), labels },
      order,
      page,
      viewer.id,
      mentionPattern(viewer.username),
    );
    return new Paginated(items, total, page);
  }

  /**
   * The issues `refs` name (each once, by the rank of its first reference then iid) with what their
   * presentation needs, keeping those `user` may read as a single issue read decides it (the
   * project's read_issue, confidential issues for members, their author and assignee): one
   * statement, whatever the number of references or projects.
   */
  async readableReferenced(user: Caller | undefined, refs: IssueReference[]): Promise<ReferencedIssue[]> {
    const found = await this.issues.referencedDetailed(refs, user?.id ?? null, user ? mentionPattern(user.username) : '$^');
    return found.filter((r) => {
      const access = accessFrom(user, r.project, r.projectMember, r.groupMember);
      const abilities = projectAbilities(user, r.project, access);
      return abilities.has('read_project') && canReadIssue(user, abilities, access, r.issue);
    });
  }

  // ---------------------------------------------------------------- single issues

  /**
   * The issue with global id `id` in the project, if the caller may read both: `404 Project Not
   * Found`, 403 when the project's issues are off, `404 Issue Not Found` for an absent issue, one of
   * another project, or a confidential one the caller may not see (decided from the access the
   * resolver returned: no second membership query).
   */
  async findReadable(user: Caller, ref: ProjectRef, id: number): Promise<IssueInProject> {
    const { project, access, abilities } = await this.projects.resolve(user, ref, 'read_issue');
    const issue = await this.issues.findInProject(project.id, id);
    if (!issue || !canReadIssue(user, abilities, access, issue)) throw new NotFound('Issue');
    return { project, access, abilities, issue };
  }

  async create(user: Caller, ref: ProjectRef, dto: CreateIssueDto): Promise<Issue> {
    const { project, abilities } = await this.projects.resolve(user, ref, 'create_issue');
    const title = checkTitle(dto.title);
    const createdAt = canSetTimestamps(abilities) ? dto.created_at : undefined;
    const labelTitles = dto.labels ?? [];
    this.labels.assertValidTitles(labelTitles);
    // like GitLab's IssuableBaseService#filter_params: only those who may administer issues set
    // the assignee, the milestone and (here) the labels; others' values are dropped
    const canAdmin = abilities.has('admin_issue');
    const assigneeId = canAdmin ? (dto.assignee_id ?? null) : null;
    const milestoneId = canAdmin ? (dto.milestone_id ?? null) : null;
    if (assigneeId !== null) await this.issuables.assignee(project, assigneeId, 'read_issue');
    if (milestoneId !== null) await this.issuables.milestone(project, milestoneId);

    const issue = await this.tx.run(async (tx) => {
      const iid = await nextInternalId(tx, project.id, 'issues');
      const created = await this.issues.insert(tx, {
        iid,
        projectId: project.id,
        title,
        description: dto.description ?? null,
        state: 'opened',
        confidential: dto.confidential ?? false,
        authorId: user.id,
        assigneeId,
        milestoneId,
        movedToId: null,
        position: 0,
        deletedAt: null,
        ...(createdAt ? { createdAt, updatedAt: createdAt } : {}),
      });
      if (canAdmin && labelTitles.length) {
        await this.labels.replaceLinks(tx, 'Issue', created.id, await this.labels.findOrCreate(tx, project.id, labelTitles));
      }
      await this.domainEvents.emit(tx, 'issue.changed', { issueId: created.id, userId: user.id, action: 'open' }); // project hooks
      await this.domainEvents.emit(tx, 'issue.created', { issueId: created.id, projectId: project.id, userId: user.id });
      // in the same transaction: a crash cannot leave an issue without its `created` event
      await this.domainEvents.emit(tx, 'activity.recorded', { events: [this.event(created, user, 'created')] });
      return created;
    });
    return this.issues.byId(issue.id);
  }

  /**
   * `PUT`: `title`, `description`, `state_event` (close, reopen), `confidential`; `labels`,
   * `assignee_id`, `milestone_id` for those with admin_issue (dropped for others, as in GitLab);
   * `updated_at` for owners and admins. Changes leave system notes; state and label changes events.
   */
  async update(user: Caller, ref: ProjectRef, id: number, dto: UpdateIssueDto): Promise<Issue> {
    const { project, abilities, issue } = await this.findReadable(user, ref, id);
    if (!canUpdateIssue(user, abilities, issue)) throw new Forbidden();
    const updatedAt = canSetTimestamps(abilities) ? dto.updated_at : undefined;
    return this.issuables.update(
      user,
      { project, abilities, record: issue },
      { ...dto, updated_at: updatedAt },
      {
        ...this.kind,
        attributes: (current, changes, notes) => {
          if (dto.confidential !== undefined && dto.confidential !== current.confidential) {
            changes.confidential = dto.confidential;
            notes.push(dto.confidential ? 'Made the issue confidential' : 'Made the issue visible to everyone');
          }
        },
      },
    );
  }

  /** Issues in the shared issuable update: admin_issue, their domain events, `updated` beside a state change. */
  private readonly kind: IssuableKind<Issue> = {
    type: 'Issue',
    name: 'Issue',
    adminAbility: 'admin_issue',
    readAbility: 'read_issue',
    records: this.issues,
    labelsBesideTransition: true,
    event: (issue, user, action) => this.event(issue, user, action),
    announce: async (tx, current, user, action, reassigned) => {
      const ids = { issueId: current.id, projectId: current.projectId, userId: user.id };
      await this.domainEvents.emit(tx, 'issue.changed', { issueId: current.id, userId: user.id, action }); // project hooks
      if (action === 'close') await this.domainEvents.emit(tx, 'issue.closed', ids);
      if (action === 'reopen') await this.domainEvents.emit(tx, 'issue.reopened', ids);
      if (reassigned) await this.domainEvents.emit(tx, 'issue.reassigned', { ...ids, previousAssigneeId: current.assigneeId });
    },
  };

  /** Soft delete (owners and admins): 403 for others, `404 Issue Not Found` when absent. Returns the record. */
  async remove(user: Caller, ref: ProjectRef, id: number): Promise<Issue> {
    const { abilities, issue } = await this.findReadable(user, ref, id);
    if (!abilities.has('destroy_issue')) throw new Forbidden();
    if (!(await this.issues.softDelete(issue.id))) throw new NotFound('Issue');
    await this.domainEvents.emitCommitted('activity.recorded', { events: [this.event(issue, user, 'destroyed')] });
    return this.issues.byId(issue.id);
  }

  /**
   * Moves the issue to `to_project_id`: a new issue there (next iid, same author, assignee, text,
   * state and creation time, the target's labels of the same names, the notes copied), the original
   * closed with a `Moved to` system note and linked to the new one. 400 for the same project, for
   * missing admin_issue on either side, or an issue already moved; 404 for an unreadable target.
   */
  async move(user: Caller, ref: ProjectRef, id: number, dto: MoveIssueDto): Promise<Issue> {
    const { project: source, abilities, issue } = await this.findReadable(user, ref, id);
    const { project: target, abilities: targetAbilities } = await this.projects.resolve(user, { id: dto.to_project_id }, 'read_project');
    if (target.id === source.id) throw new BadRequest('Cannot move issue to project it originates from!');
    if (!abilities.has('admin_issue') || !targetAbilities.has('admin_issue')) {
      throw new BadRequest('Cannot move issue due to insufficient permissions!');
    }
    const events: ActivityRecord[] = [];
    const moved = await this.tx.run(async (tx) => {
      const old = await this.issues.lock(tx, issue.id);
      if (!old) throw new NotFound('Issue');
      if (old.movedToId !== null) throw new BadRequest('Cannot move issue which was already moved!');
      const iid = await nextInternalId(tx, target.id, 'issues');
      const created = await this.issues.insert(tx, {
        iid,
        projectId: target.id,
        title: old.title,
        description: old.description,
        state: old.state === 'closed' ? 'closed' : 'opened',
        confidential: old.confidential,
        authorId: old.authorId,
        assigneeId: old.assigneeId,
        milestoneId: null,
        movedToId: null,
        position: 0,
        deletedAt: null,
        createdAt: old.createdAt,
      });
      const oldLabels = (await this.labels.labelsOf('Issue', [old.id], tx)).get(old.id) ?? [];
      const sameNamed = await this.labels.findExisting(
        tx,
        target.id,
        oldLabels.map((l) => l.title),
      );
      await this.labels.replaceLinks(tx, 'Issue', created.id, sameNamed);
      const where = (p: Project) => ({ id: p.id, namespace: p.namespace.path, path: p.path });
      await this.systemNotes.copyIssueNotes(tx, old.id, created.id, where(source), where(target));
      await this.systemNotes.addSystemNotes(tx, { projectId: target.id, type: 'Issue', id: created.id }, user.id, [
        `Moved from ${projectFullPath(source)}#${old.iid}`,
      ]);
      await this.systemNotes.addSystemNotes(tx, { projectId: source.id, type: 'Issue', id: old.id }, user.id, [
        `Moved to ${projectFullPath(target)}#${created.iid}`,
      ]);
      await this.issues.update(tx, old.id, { state: 'closed', movedToId: created.id, updatedAt: new Date() });
      events.push(this.event(created, user, 'created'));
      if (old.state !== 'closed') events.push(this.event(old, user, 'closed'));
      return created;
    });
    await this.domainEvents.emitCommitted('activity.recorded', { events: events });
    return this.issues.byId(moved.id);
  }

  /** Subscribes (201, 304 when already subscribed) or unsubscribes (200, 304 when not subscribed). */
  async setSubscription(user: Caller, ref: ProjectRef, id: number, subscribed: boolean): Promise<Issue> {
    const { issue } = await this.findReadable(user, ref, id);
    const current = (await loadParticipation(this.issues, this.subscriptions, user, [issue])).get(issue.id)?.subscribed ?? false;
    if (current === subscribed) throw new NotModified();
    await this.subscriptions.set(user.id, 'Issue', issue.id, subscribed);
    return issue;
  }

  /** The (not deleted) issue with global id `id`, whoever asks: for reactions that hold only its id (cross-references). */
  find(id: number): Promise<Issue | null> {
    return this.issues.find(id);
  }

  /** A note was added (NotesService): the issue's `updated_at` is now, in the note's transaction. */
  touch(tx: Tx, id: number): Promise<void> {
    return this.issues.touch(tx, id);
  }

  // ---------------------------------------------------------------- helpers

  private event(issue: Issue, user: Caller, action: ActivityRecord['action']): ActivityRecord {
    return { projectId: issue.projectId, authorId: user.id, action, targetId: issue.id, targetType: 'Issue', targetTitle: issue.title };
  }
}
