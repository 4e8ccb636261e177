import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager, In } from 'typeorm';
import { InvalidAttribute, isUniqueViolation, NotFound, ValidationFailed } from '../common/errors/domain-errors';
import { Paginated, pageRequest } from '../common/pagination/pagination';
import { Params, parseId } from '../common/params/params';
import { EventsService, NewEvent } from '../events/events.service';
import { readDate, readIntFilter, readTitle, rejectNul } from '../issues/inputs';
import { nextInternalId } from '../issues/internal-ids';
import { ProjectsService } from '../projects/projects.service';
import { User } from '../users/user.entity';
import { Milestone, MilestoneState } from './milestone.entity';

const titleTaken = () => new ValidationFailed({ title: ['has already been taken'] });

/** Project milestones: per-project iid, active/closed, optional due date. No DELETE (GitLab has none). */
@Injectable()
export class MilestonesService {
  constructor(
    private readonly ds: DataSource,
    private readonly projects: ProjectsService,
    private readonly events: EventsService,
  ) {}

  /** `iid` (one or several) and `state` (active, closed; anything else: all) filters; id descending. */
  async list(user: User, ref: string, p: Params): Promise<Paginated<Milestone>> {
    rejectNul(p);
    const { project } = await this.projects.authorize(user, ref, 'read_milestone');
    const page = pageRequest(p);
    const qb = this.ds.getRepository(Milestone).createQueryBuilder('m').where('m.project_id = :projectId', { projectId: project.id });
    const iids = readIntFilter(p, 'iid');
    if (iids !== undefined) qb.andWhere('m.iid = ANY(:iids)', { iids });
    const state = p.string('state');
    if (state === 'active' || state === 'closed') qb.andWhere('m.state = :state', { state });
    qb.orderBy('m.id', 'DESC').offset(page.offset).limit(page.perPage);
    const [items, total] = await qb.getManyAndCount();
    return new Paginated(items, total, page);
  }

  async get(user: User, ref: string, rawId: string): Promise<Milestone> {
    const { project } = await this.projects.authorize(user, ref, 'read_milestone');
    return this.findInProject(project.id, rawId);
  }

  /** The milestone with global id `rawId` if it belongs to the project, else `404 Milestone Not Found`. */
  async findInProject(projectId: number, rawId: string | number, m: EntityManager = this.ds.manager): Promise<Milestone> {
    const id = typeof rawId === 'number' ? rawId : parseId(rawId);
    const milestone = id === undefined ? null : await m.getRepository(Milestone).findOne({ where: { id, projectId } });
    if (!milestone) throw new NotFound('Milestone');
    return milestone;
  }

  /** Milestones by id: one query. */
  async byIds(ids: number[]): Promise<Map<number, Milestone>> {
    const unique = [...new Set(ids)];
    if (unique.length === 0) return new Map();
    const rows = await this.ds.getRepository(Milestone).findBy({ id: In(unique) });
    return new Map(rows.map((r) => [r.id, r]));
  }

  async create(user: User, ref: string, p: Params): Promise<Milestone> {
    rejectNul(p);
    const { project } = await this.projects.authorize(user, ref, 'admin_milestone');
    const title = readTitle(p, { required: true }) as string;
    const description = p.string('description');
    const dueDate = readDate(p, 'due_date');
    let milestone: Milestone;
    try {
      milestone = await this.ds.transaction(async (m) => {
        await this.assertTitleFree(m, project.id, title);
        const iid = await nextInternalId(m, project.id, 'milestones');
        const repo = m.getRepository(Milestone);
        return repo.save(
          repo.create({ iid, projectId: project.id, title, description: description ?? null, state: 'active', dueDate: dueDate ?? null }),
        );
      });
    } catch (e) {
      if (isUniqueViolation(e, 'milestones_project_title_key')) throw titleTaken();
      throw e;
    }
    await this.events.record(this.event(milestone, user, 'created'));
    return milestone;
  }

  /** `title`, `description`, `due_date` (null or blank clears it), `state_event` (close, activate). */
  async update(user: User, ref: string, rawId: string, p: Params): Promise<Milestone> {
    rejectNul(p);
    const { project } = await this.projects.authorize(user, ref, 'admin_milestone');
    const current = await this.findInProject(project.id, rawId);
    const title = readTitle(p, { required: false });
    const description = p.string('description');
    const dueDate = readDate(p, 'due_date');
    const stateEvent = p.string('state_event');
    let nextState: MilestoneState | undefined;
    if (stateEvent !== undefined) {
      if (stateEvent === 'close') nextState = 'closed';
      else if (stateEvent === 'activate') nextState = 'active';
      else throw new InvalidAttribute('state_event');
    }
    const changes: Partial<Milestone> = {};
    if (title !== undefined && title !== current.title) changes.title = title;
    if (description !== undefined) changes.description = description;
    if (dueDate !== undefined) changes.dueDate = dueDate;
    let transition: 'closed' | 'reopened' | undefined;
    let milestone: Milestone;
    try {
      milestone = await this.ds.transaction(async (m) => {
        const repo = m.getRepository(Milestone);
        const locked = await repo
          .createQueryBuilder('m')
          .setLock('pessimistic_write')
          .where('m.id = :id', { id: current.id })
          .getOneOrFail();
        if (nextState !== undefined && nextState !== locked.state) {
          changes.state = nextState;
          transition = nextState === 'closed' ? 'closed' : 'reopened';
        }
        if (changes.title !== undefined) await this.assertTitleFree(m, project.id, changes.title, locked.id);
        if (Object.keys(changes).length) await repo.update({ id: locked.id }, changes);
        return repo.findOneByOrFail({ id: locked.id });
      });
    } catch (e) {
      if (isUniqueViolation(e, 'milestones_project_title_key')) throw titleTaken();
      throw e;
    }
    if (transition) await this.events.record(this.event(milestone, user, transition));
    return milestone;
  }

  private async assertTitleFree(m: EntityManager, projectId: number, title: string, exceptId?: number): Promise<void> {
    const rows: unknown[] = await m.query(`SELECT 1 FROM milestones WHERE project_id = $1 AND title = $2 AND id <> $3`, [
      projectId,
      title,
      exceptId ?? 0,
    ]);
    if (rows.length) throw titleTaken();
  }

  private event(m: Milestone, user: User, action: NewEvent['action']): NewEvent {
    return { projectId: m.projectId, authorId: user.id, action, targetId: m.id, targetType: 'Milestone', targetTitle: m.title };
  }
}
