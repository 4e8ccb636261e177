import { DomainEvents } from '../domain-events/domain-events';
import { Injectable } from '@nestjs/common';
import { checkTitle } from '../common/dto/titles';
import { InvalidAttribute, isUniqueViolation, NotFound, ValidationFailed } from '../common/errors/domain-errors';
import { Paginated, pageRequest } from '../common/pagination/pagination';
import { Transactions, Tx } from '../database/transactions';
import type { ActivityRecord } from '../domain-events/domain-event-catalogue';
import { nextInternalId } from '../database/internal-ids';
import { ProjectResolver } from '../projects/project-resolver.service';
import { CreateMilestoneDto, ListMilestonesDto, UpdateMilestoneDto } from './dto/milestone.dto';
import { Milestone, MilestoneState } from './milestone.entity';
import { MilestonesRepository } from './milestones.repository';
import { ProjectRef } from '../common/params/refs';
import type { Caller } from '../common/caller/caller';

const titleTaken = () => new ValidationFailed({ title: ['has already been taken'] });

/** Project milestones: per-project iid, active/closed, optional due date. No DELETE (GitLab has none). */
@Injectable()
export class MilestonesService {
  constructor(
    private readonly milestones: MilestonesRepository,
    private readonly tx: Transactions,
    private readonly projects: ProjectResolver,
    private readonly domainEvents: DomainEvents,
  ) {}

  /** `iid` (one or several) and `state` (active, closed; anything else: all) filters; id descending. */
  async list(user: Caller, ref: ProjectRef, q: ListMilestonesDto): Promise<Paginated<Milestone>> {
    const { project } = await this.projects.resolve(user, ref, 'read_milestone');
    const page = pageRequest(q);
    const state = q.state === 'active' || q.state === 'closed' ? q.state : undefined;
    const [items, total] = await this.milestones.list(project.id, { iids: q.iid, state }, page);
    return new Paginated(items, total, page);
  }

  async get(user: Caller, ref: ProjectRef, id: number): Promise<Milestone> {
    const { project } = await this.projects.resolve(user, ref, 'read_milestone');
    return this.findInProject(project.id, id);
  }

  /** The milestone with global id `id` if it belongs to the project, else `404 Milestone Not Found`. */
  async findInProject(projectId: number, id: number, tx?: Tx): Promise<Milestone> {
    const milestone = await this.milestones.findInProject(projectId, id, tx);
    if (!milestone) throw new NotFound('Milestone');
    return milestone;
  }

  /** Milestones by id: one query. */
  byIds(ids: number[]): Promise<Map<number, Milestone>> {
    return this.milestones.byIds(ids);
  }

  async create(user: Caller, ref: ProjectRef, dto: CreateMilestoneDto): Promise<Milestone> {
    const { project } = await this.projects.resolve(user, ref, 'admin_milestone');
    const title = checkTitle(dto.title);
    let milestone: Milestone;
    try {
      milestone = await this.tx.run(async (tx) => {
        if (await this.milestones.titleTaken(tx, project.id, title)) throw titleTaken();
        const iid = await nextInternalId(tx, project.id, 'milestones');
        return this.milestones.insert(tx, {
          iid,
          projectId: project.id,
          title,
          description: dto.description ?? null,
          state: 'active',
          dueDate: dto.due_date ?? null,
        });
      });
    } catch (e) {
      if (isUniqueViolation(e, 'milestones_project_title_key')) throw titleTaken();
      throw e;
    }
    await this.domainEvents.emitCommitted('activity.recorded', { events: [this.event(milestone, user, 'created')] });
    return milestone;
  }

  /** `title`, `description`, `due_date` (null or blank clears it), `state_event` (close, activate). */
  async update(user: Caller, ref: ProjectRef, id: number, dto: UpdateMilestoneDto): Promise<Milestone> {
    const { project } = await this.projects.resolve(user, ref, 'admin_milestone');
    const current = await this.findInProject(project.id, id);
    const title = checkTitle(dto.title);
    let nextState: MilestoneState | undefined;
    if (dto.state_event !== undefined) {
      if (dto.state_event === 'close') nextState = 'closed';
      else if (dto.state_event === 'activate') nextState = 'active';
      else throw new InvalidAttribute('state_event');
    }
    const changes: Partial<Milestone> = {};
    if (title !== undefined && title !== current.title) changes.title = title;
    if (dto.description !== undefined) changes.description = dto.description;
    if (dto.due_date !== undefined) changes.dueDate = dto.due_date;
    let transition: 'closed' | 'reopened' | undefined;
    let milestone: Milestone;
    try {
      milestone = await this.tx.run(async (tx) => {
        const locked = await this.milestones.lock(tx, current.id);
        if (nextState !== undefined && nextState !== locked.state) {
          changes.state = nextState;
          transition = nextState === 'closed' ? 'closed' : 'reopened';
        }
        if (changes.title !== undefined && (await this.milestones.titleTaken(tx, project.id, changes.title, locked.id))) {
          throw titleTaken();
        }
        return this.milestones.update(tx, locked.id, changes);
      });
    } catch (e) {
      if (isUniqueViolation(e, 'milestones_project_title_key')) throw titleTaken();
      throw e;
    }
    if (transition) await this.domainEvents.emitCommitted('activity.recorded', { events: [this.event(milestone, user, transition)] });
    return milestone;
  }

  private event(m: Milestone, user: Caller, action: ActivityRecord['action']): ActivityRecord {
    return { projectId: m.projectId, authorId: user.id, action, targetId: m.id, targetType: 'Milestone', targetTitle: m.title };
  }
}
