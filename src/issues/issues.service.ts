import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager, In, SelectQueryBuilder } from 'typeorm';
import {
  BadRequest,
  Forbidden,
  InvalidAttribute,
  NotFound,
  NotModified,
  ValidationFailed,
} from '../common/errors/domain-errors';
import { Paginated, pageRequest } from '../common/pagination/pagination';
import { Params, parseId } from '../common/params/params';
import { ProjectAbility } from '../common/policy/policy';
import { PolicyService } from '../common/policy/policy.service';
import { DomainEvents } from '../events/domain-events';
import { EventsService, NewEvent } from '../events/events.service';
import { Label } from '../labels/label.entity';
import { LabelsService } from '../labels/labels.service';
import { Milestone } from '../milestones/milestone.entity';
import { MilestonesService } from '../milestones/milestones.service';
import { addSystemNotes, labelChangeNote, milestoneReference } from '../notes/system-notes';
import { Project } from '../projects/project.entity';
import { projectFullPath } from '../projects/projects.presenter';
import { ProjectsService } from '../projects/projects.service';
import { SubscriptionsService } from '../subscriptions/subscriptions.service';
import { User } from '../users/user.entity';
import { readClearableId, readId, readIntFilter, readTimestamp, readTitle, rejectNul } from './inputs';
import { nextInternalId } from './internal-ids';
import { Issue } from './issue.entity';
import {
  canReadIssue,
  canSetTimestamps,
  canUpdateIssue,
  issueVisibilityCondition,
  needsMembership,
} from './issue-policy';

const ORDER_COLUMNS: Record<string, string> = { created_at: 'i.created_at', updated_at: 'i.updated_at' };

export interface IssueInProject {
  project: Project;
  abilities: Set<ProjectAbility>;
  issue: Issue;
}

/** Per issue: notes written by people (not the system) and whether the viewer is subscribed. */
export interface IssueParticipation {
  userNotesCount: number;
  subscribed: boolean;
}

function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\-]/g, '\\$&');
}

/** `@username` as a whole mention (GitLab's user reference), for PostgreSQL and JavaScript alike. */
function mentionPattern(username: string): string {
  return `(^|[^A-Za-z0-9_])@${escapeRegex(username)}($|[^A-Za-z0-9_.-]|[.]($|[^A-Za-z0-9_-]))`;
}

/**
 * Issues: per-project iids, lists with filters, create/update/delete, move and subscriptions.
 * Every write runs in one transaction (with its system notes); events are recorded after commit.
 */
@Injectable()
export class IssuesService {
  constructor(
    private readonly ds: DataSource,
    private readonly projects: ProjectsService,
    private readonly policy: PolicyService,
    private readonly labels: LabelsService,
    private readonly milestones: MilestonesService,
    private readonly subscriptions: SubscriptionsService,
    private readonly events: EventsService,
    private readonly domainEvents: DomainEvents,
  ) {}

  // ---------------------------------------------------------------- lists

  /** `GET /issues`: issues the caller authored, in projects it can still read. */
  async listAuthored(user: User, p: Params): Promise<Paginated<Issue>> {
    rejectNul(p);
    const readable = this.policy.readableProjectsCondition(user);
    const qb = this.base()
      .andWhere('i.author_id = :authorId', { authorId: user.id })
      .andWhere('p.issues_enabled')
      .andWhere(readable.sql, readable.params);
    return this.page(qb, p, { projectFilters: false });
  }

  /** `GET /projects/:id/issues` with `state`, `labels`, `milestone`, `iid`, `order_by`, `sort`. */
  async listForProject(user: User, ref: string, p: Params): Promise<Paginated<Issue>> {
    rejectNul(p);
    const { project } = await this.projects.authorize(user, ref, 'read_issue');
    const vis = issueVisibilityCondition(user, this.policy);
    const qb = this.base().andWhere('i.project_id = :projectId', { projectId: project.id }).andWhere(vis.sql, vis.params);
    return this.page(qb, p, { projectFilters: true });
  }

  /** `GET /projects/:id/milestones/:milestone_id/issues`. */
  async listForMilestone(user: User, ref: string, rawMilestoneId: string, p: Params): Promise<Paginated<Issue>> {
    rejectNul(p);
    const { project, abilities } = await this.projects.authorize(user, ref, 'read_milestone');
    const milestone = await this.milestones.findInProject(project.id, rawMilestoneId);
    if (!abilities.has('read_issue')) return new Paginated([], 0, pageRequest(p));
    const vis = issueVisibilityCondition(user, this.policy);
    const qb = this.base()
      .andWhere('i.project_id = :projectId', { projectId: project.id })
      .andWhere('i.milestone_id = :milestoneId', { milestoneId: milestone.id })
      .andWhere(vis.sql, vis.params);
    return this.page(qb, p, { projectFilters: false });
  }

  private base(): SelectQueryBuilder<Issue> {
    return this.ds
      .getRepository(Issue)
      .createQueryBuilder('i')
      .innerJoin(Project, 'p', 'p.id = i.project_id')
      .where('i.deleted_at IS NULL');
  }

  /** Filters, order and one page: a count and a page query, whatever the page size. */
  private async page(qb: SelectQueryBuilder<Issue>, p: Params, opts: { projectFilters: boolean }): Promise<Paginated<Issue>> {
    const page = pageRequest(p);
    const state = p.string('state');
    if (state === 'opened') qb.andWhere(`i.state IN ('opened', 'reopened')`);
    else if (state === 'closed') qb.andWhere(`i.state = 'closed'`);
    const labels = p.stringArray('labels');
    if (labels?.length) {
      // GitLab 8.8: an issue matches when it has at least one of the labels
      qb.andWhere(
        `i.id IN (SELECT ll.target_id FROM label_links ll JOIN labels l ON l.id = ll.label_id
                   WHERE ll.target_type = 'Issue' AND l.project_id = i.project_id AND lower(l.title) IN (:...labelTitles))`,
        { labelTitles: [...new Set(labels.map((l) => l.toLowerCase()))] },
      );
    }
    if (opts.projectFilters) {
      const milestone = p.string('milestone');
      if (milestone !== undefined) {
        qb.andWhere('i.milestone_id IN (SELECT m.id FROM milestones m WHERE m.project_id = i.project_id AND m.title = :milestoneTitle)', {
          milestoneTitle: milestone,
        });
      }
      const iids = readIntFilter(p, 'iid');
      if (iids !== undefined) qb.andWhere('i.iid = ANY(:iids)', { iids });
    }
    const orderBy = p.string('order_by') ?? 'created_at';
    const column = ORDER_COLUMNS[orderBy];
    if (!column) throw new InvalidAttribute('order_by');
    const sort = (p.string('sort') ?? 'desc').toLowerCase();
    if (sort !== 'asc' && sort !== 'desc') throw new InvalidAttribute('sort');
    const dir = sort === 'asc' ? 'ASC' : 'DESC';
    qb.orderBy(column, dir).addOrderBy('i.id', dir).offset(page.offset).limit(page.perPage);
    const [items, total] = await qb.getManyAndCount();
    return new Paginated(items, total, page);
  }

  // ---------------------------------------------------------------- single issues

  /**
   * The issue with global id `rawId` in the project, if the caller may read both: `404 Project Not
   * Found`, 403 when the project's issues are off, `404 Issue Not Found` for an absent issue, one of
   * another project, or a confidential one the caller may not see.
   */
  async findReadable(user: User, ref: string, rawId: string): Promise<IssueInProject> {
    const { project, abilities } = await this.projects.authorize(user, ref, 'read_project');
    if (!abilities.has('read_issue')) throw new Forbidden();
    const id = parseId(rawId);
    const issue =
      id === undefined
        ? null
        : await this.ds.getRepository(Issue).createQueryBuilder('i')
            .where('i.id = :id AND i.project_id = :projectId AND i.deleted_at IS NULL', { id, projectId: project.id })
            .getOne();
    if (!issue) throw new NotFound('Issue');
    const access = needsMembership(user, issue) ? (await this.policy.projectAccess(user, [project])).get(project.id) : undefined;
    if (!canReadIssue(user, abilities, access, issue)) throw new NotFound('Issue');
    return { project, abilities, issue };
  }

  async create(user: User, ref: string, p: Params): Promise<Issue> {
    rejectNul(p);
    const { project, abilities } = await this.projects.authorize(user, ref, 'create_issue');
    const title = readTitle(p, { required: true }) as string;
    const description = p.string('description');
    const confidential = p.bool('confidential') ?? false;
    const createdAt = canSetTimestamps(abilities) ? readTimestamp(p, 'created_at') : undefined;
    const labelTitles = p.stringArray('labels') ?? [];
    this.labels.assertValidTitles(labelTitles);
    // like GitLab's IssuableBaseService#filter_params: only those who may administer issues set
    // the assignee, the milestone and (here) the labels; others' values are dropped
    const canAdmin = abilities.has('admin_issue');
    const assigneeId = canAdmin ? readClearableId(p, 'assignee_id') ?? null : null;
    const milestoneId = canAdmin ? readClearableId(p, 'milestone_id') ?? null : null;
    if (assigneeId !== null) await this.assertAssignable(project, assigneeId);
    if (milestoneId !== null) await this.milestoneFor(project, milestoneId);

    const issue = await this.ds.transaction(async (m) => {
      const iid = await nextInternalId(m, project.id, 'issues');
      const repo = m.getRepository(Issue);
      const created = await repo.save(
        repo.create({
          iid,
          projectId: project.id,
          title,
          description: description ?? null,
          state: 'opened',
          confidential,
          authorId: user.id,
          assigneeId,
          milestoneId,
          movedToId: null,
          position: 0,
          deletedAt: null,
          ...(createdAt ? { createdAt, updatedAt: createdAt } : {}),
        }),
      );
      if (canAdmin && labelTitles.length) {
        await this.labels.replaceLinks(m, 'Issue', created.id, await this.labels.findOrCreate(m, project.id, labelTitles));
      }
      return created;
    });
    await this.events.record(this.event(issue, user, 'created'));
    this.domainEvents.emit('issue.changed', { issueId: issue.id, userId: user.id, action: 'open' }); // project hooks
    return this.reload(issue.id);
  }

  /**
   * `PUT`: `title`, `description`, `state_event` (close, reopen), `confidential`; `labels`,
   * `assignee_id`, `milestone_id` for those with admin_issue (dropped for others, as in GitLab);
   * `updated_at` for owners and admins. Changes leave system notes; state and label changes events.
   */
  async update(user: User, ref: string, rawId: string, p: Params): Promise<Issue> {
    rejectNul(p);
    const { project, abilities, issue } = await this.findReadable(user, ref, rawId);
    if (!canUpdateIssue(user, abilities, issue)) throw new Forbidden();
    const title = readTitle(p, { required: false });
    const description = p.string('description');
    const confidential = p.bool('confidential');
    const stateEvent = p.string('state_event');
    if (stateEvent !== undefined && stateEvent !== 'close' && stateEvent !== 'reopen') throw new InvalidAttribute('state_event');
    const updatedAt = canSetTimestamps(abilities) ? readTimestamp(p, 'updated_at') : undefined;
    const labelTitles = p.stringArray('labels');
    if (labelTitles) this.labels.assertValidTitles(labelTitles);
    const canAdmin = abilities.has('admin_issue');
    const assigneeId = canAdmin ? readClearableId(p, 'assignee_id') : undefined;
    const milestoneId = canAdmin ? readClearableId(p, 'milestone_id') : undefined;
    const assignee = assigneeId ? await this.assertAssignable(project, assigneeId) : null;
    const milestone = milestoneId ? await this.milestoneFor(project, milestoneId) : null;

    const events: NewEvent[] = [];
    const updated = await this.ds.transaction(async (m) => {
      const current = await this.lock(m, issue.id);
      const changes: Partial<Issue> = {};
      const notes: string[] = [];
      if (title !== undefined && title !== current.title) {
        changes.title = title;
        notes.push(`Changed title: **${current.title}** → **${title}**`);
      }
      if (description !== undefined && description !== (current.description ?? '')) changes.description = description;
      if (confidential !== undefined && confidential !== current.confidential) {
        changes.confidential = confidential;
        notes.push(confidential ? 'Made the issue confidential' : 'Made the issue visible to everyone');
      }
      if (assigneeId !== undefined && assigneeId !== current.assigneeId) {
        changes.assigneeId = assigneeId;
        notes.push(assignee ? `Reassigned to @${assignee.username}` : 'Assignee removed');
      }
      if (milestoneId !== undefined && milestoneId !== current.milestoneId) {
        changes.milestoneId = milestoneId;
        notes.push(milestone ? `Milestone changed to ${milestoneReference(milestone)}` : 'Milestone removed');
      }
      let transition: 'closed' | 'reopened' | undefined;
      if (stateEvent === 'close' && current.state !== 'closed') transition = 'closed';
      if (stateEvent === 'reopen' && current.state === 'closed') transition = 'reopened';
      if (transition) {
        changes.state = transition === 'closed' ? 'closed' : 'opened';
        notes.push(`Status changed to ${transition}`);
      }
      let labelsChanged = false;
      if (canAdmin && labelTitles !== undefined) {
        const wanted = await this.labels.findOrCreate(m, project.id, labelTitles);
        const { added, removed } = await this.labels.replaceLinks(m, 'Issue', current.id, wanted);
        const note = labelChangeNote(added, removed);
        if (note) {
          labelsChanged = true;
          notes.push(note);
        }
      }
      if (Object.keys(changes).length || labelsChanged || updatedAt) {
        changes.updatedAt = updatedAt ?? new Date();
        await m.getRepository(Issue).update({ id: current.id }, changes);
      }
      await addSystemNotes(m, { projectId: project.id, type: 'Issue', id: current.id }, user.id, notes);
      const after = { ...current, ...changes } as Issue;
      if (transition) events.push(this.event(after, user, transition));
      if (labelsChanged) events.push(this.event(after, user, 'updated'));
      return after;
    });
    await this.events.record(...events);
    this.domainEvents.emit('issue.changed', { issueId: updated.id, userId: user.id, action: events.some((e) => e.action === 'closed') ? 'close' : events.some((e) => e.action === 'reopened') ? 'reopen' : 'update' }); // project hooks
    return this.reload(updated.id);
  }

  /** Soft delete (owners and admins): 403 for others, `404 Issue Not Found` when absent. Returns the record. */
  async remove(user: User, ref: string, rawId: string): Promise<Issue> {
    const { abilities, issue } = await this.findReadable(user, ref, rawId);
    if (!abilities.has('destroy_issue')) throw new Forbidden();
    const done = await this.ds
      .getRepository(Issue)
      .createQueryBuilder()
      .update()
      .set({ deletedAt: () => 'now()' })
      .where('id = :id AND deleted_at IS NULL', { id: issue.id })
      .execute();
    if (!done.affected) throw new NotFound('Issue');
    await this.events.record(this.event(issue, user, 'destroyed'));
    return this.ds.getRepository(Issue).findOneByOrFail({ id: issue.id });
  }

  /**
   * Moves the issue to `to_project_id`: a new issue there (next iid, same author, assignee, text,
   * state and creation time, the target's labels of the same names, the notes copied), the original
   * closed with a `Moved to` system note and linked to the new one. 400 for the same project, for
   * missing admin_issue on either side, or an issue already moved; 404 for an unreadable target.
   */
  async move(user: User, ref: string, rawId: string, p: Params): Promise<Issue> {
    const { project: source, abilities, issue } = await this.findReadable(user, ref, rawId);
    const targetId = readId(p, 'to_project_id', { required: true }) as number;
    const target = await this.projects.findByRef(targetId);
    const targetAbilities = await this.policy.projectAbilities(user, target);
    if (!targetAbilities.has('read_project')) throw new NotFound('Project');
    if (target.id === source.id) throw new BadRequest('Cannot move issue to project it originates from!');
    if (!abilities.has('admin_issue') || !targetAbilities.has('admin_issue')) {
      throw new BadRequest('Cannot move issue due to insufficient permissions!');
    }
    const events: NewEvent[] = [];
    const moved = await this.ds.transaction(async (m) => {
      const old = await this.lock(m, issue.id);
      if (old.movedToId !== null) throw new BadRequest('Cannot move issue which was already moved!');
      const iid = await nextInternalId(m, target.id, 'issues');
      const repo = m.getRepository(Issue);
      const created = await repo.save(
        repo.create({
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
        }),
      );
      const oldLabels = (await this.labels.labelsOf('Issue', [old.id], m)).get(old.id) ?? [];
      const sameNamed = await this.labels.findExisting(m, target.id, oldLabels.map((l: Label) => l.title));
      await this.labels.replaceLinks(m, 'Issue', created.id, sameNamed);
      await m.query(
        `INSERT INTO notes (project_id, noteable_type, noteable_id, author_id, body, system, attachment, created_at, updated_at)
         SELECT $1, 'Issue', $2, author_id, body, system, attachment, created_at, updated_at
           FROM notes WHERE noteable_type = 'Issue' AND noteable_id = $3 ORDER BY id`,
        [target.id, created.id, old.id],
      );
      await addSystemNotes(m, { projectId: target.id, type: 'Issue', id: created.id }, user.id, [
        `Moved from ${projectFullPath(source)}#${old.iid}`,
      ]);
      await addSystemNotes(m, { projectId: source.id, type: 'Issue', id: old.id }, user.id, [
        `Moved to ${projectFullPath(target)}#${created.iid}`,
      ]);
      await repo.update({ id: old.id }, { state: 'closed', movedToId: created.id, updatedAt: new Date() });
      events.push(this.event(created, user, 'created'));
      if (old.state !== 'closed') events.push(this.event(old, user, 'closed'));
      return created;
    });
    await this.events.record(...events);
    return this.reload(moved.id);
  }

  /** Subscribes (201, 304 when already subscribed) or unsubscribes (200, 304 when not subscribed). */
  async setSubscription(user: User, ref: string, rawId: string, subscribed: boolean): Promise<Issue> {
    const { issue } = await this.findReadable(user, ref, rawId);
    const current = (await this.participation(user, [issue])).get(issue.id)?.subscribed ?? false;
    if (current === subscribed) throw new NotModified();
    await this.subscriptions.set(user.id, 'Issue', issue.id, subscribed);
    return issue;
  }

  // ---------------------------------------------------------------- data for presenters

  /**
   * For each issue: its non-system note count and whether `viewer` is subscribed — an explicit
   * choice if there is one, else whether the viewer participates (author, assignee, commenter, or
   * mentioned in the description or a note). Two queries whatever the number of issues.
   */
  async participation(viewer: User | undefined, issues: Issue[]): Promise<Map<number, IssueParticipation>> {
    const out = new Map<number, IssueParticipation>();
    if (issues.length === 0) return out;
    const ids = issues.map((i) => i.id);
    const pattern = viewer ? mentionPattern(viewer.username) : '$^';
    const [stats, explicit] = await Promise.all([
      this.ds.query(
        `SELECT noteable_id AS id,
                count(*) FILTER (WHERE NOT system)::int AS user_notes,
                coalesce(bool_or(NOT system AND author_id = $2), false) AS commented,
                coalesce(bool_or(NOT system AND body ~* $3), false) AS mentioned
           FROM notes WHERE noteable_type = 'Issue' AND noteable_id = ANY($1)
          GROUP BY noteable_id`,
        [ids, viewer?.id ?? 0, pattern],
      ) as Promise<{ id: number; user_notes: number; commented: boolean; mentioned: boolean }[]>,
      this.subscriptions.explicit(viewer?.id, 'Issue', ids),
    ]);
    const byIssue = new Map(stats.map((s) => [s.id, s]));
    const mention = new RegExp(pattern, 'i');
    for (const i of issues) {
      const s = byIssue.get(i.id);
      const participant =
        !!viewer &&
        (i.authorId === viewer.id ||
          i.assigneeId === viewer.id ||
          !!s?.commented ||
          !!s?.mentioned ||
          (!!i.description && mention.test(i.description)));
      out.set(i.id, { userNotesCount: s?.user_notes ?? 0, subscribed: explicit.get(i.id) ?? participant });
    }
    return out;
  }

  /** Users by id (authors, assignees): one query. */
  async users(ids: (number | null)[]): Promise<Map<number, User>> {
    const unique = [...new Set(ids.filter((id): id is number => id !== null))];
    if (unique.length === 0) return new Map();
    const users = await this.ds.getRepository(User).findBy({ id: In(unique) });
    return new Map(users.map((u) => [u.id, u]));
  }

  // ---------------------------------------------------------------- helpers

  private async lock(m: EntityManager, id: number): Promise<Issue> {
    const issue = await m
      .getRepository(Issue)
      .createQueryBuilder('i')
      .setLock('pessimistic_write')
      .where('i.id = :id AND i.deleted_at IS NULL', { id })
      .getOne();
    if (!issue) throw new NotFound('Issue');
    return issue;
  }

  private reload(id: number): Promise<Issue> {
    return this.ds.getRepository(Issue).findOneByOrFail({ id });
  }

  /** An assignee must exist and be able to see the project's issues. */
  private async assertAssignable(project: Project, userId: number): Promise<User> {
    const user = await this.ds.getRepository(User).findOne({ where: { id: userId } });
    if (!user || !(await this.policy.projectAbilities(user, project)).has('read_issue')) {
      throw new ValidationFailed({ assignee_id: ['is invalid'] });
    }
    return user;
  }

  /** A milestone must belong to the issue's project. */
  private async milestoneFor(project: Project, milestoneId: number): Promise<Milestone> {
    try {
      return await this.milestones.findInProject(project.id, milestoneId);
    } catch (e) {
      if (e instanceof NotFound) throw new ValidationFailed({ milestone_id: ['is invalid'] });
      throw e;
    }
  }

  private event(issue: Issue, user: User, action: NewEvent['action']): NewEvent {
    return { projectId: issue.projectId, authorId: user.id, action, targetId: issue.id, targetType: 'Issue', targetTitle: issue.title };
  }
}

