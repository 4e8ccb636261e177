import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { In, Repository } from 'typeorm';
import { PageRequest } from '../common/pagination/pagination';
import { Tx } from '../database/transactions';
import { Milestone } from './milestone.entity';
import { manyWithTotal } from '../database/joined-rows';

/** Every query on `milestones`. Methods that write take the caller's transaction. */
@Injectable()
export class MilestonesRepository {
  constructor(@InjectRepository(Milestone) private readonly milestones: Repository<Milestone>) {}

  private repo(tx?: Tx): Repository<Milestone> {
    return tx ? tx.getRepository(Milestone) : this.milestones;
  }

  /** A page of a project's milestones, id descending, with the total. */
  list(projectId: number, filter: { iids?: number[]; state?: string }, page: PageRequest): Promise<[Milestone[], number]> {
    const qb = this.milestones.createQueryBuilder('m').where('m.project_id = :projectId', { projectId });
    if (filter.iids !== undefined) qb.andWhere('m.iid = ANY(:iids)', { iids: filter.iids });
    if (filter.state !== undefined) qb.andWhere('m.state = :state', { state: filter.state });
    return manyWithTotal(qb.orderBy('m.id', 'DESC').offset(page.offset).limit(page.perPage));
  }

  findInProject(projectId: number, id: number, tx?: Tx): Promise<Milestone | null> {
    return this.repo(tx).findOne({ where: { id, projectId } });
  }

  /** Milestones by id: one query. */
  async byIds(ids: number[]): Promise<Map<number, Milestone>> {
    const unique = [...new Set(ids)];
    if (unique.length === 0) return new Map();
    const rows = await this.milestones.findBy({ id: In(unique) });
    return new Map(rows.map((r) => [r.id, r]));
  }

  /** The row, locked for update until the transaction ends. */
  lock(tx: Tx, id: number): Promise<Milestone> {
    return this.repo(tx).createQueryBuilder('m').setLock('pessimistic_write').where('m.id = :id', { id }).getOneOrFail();
  }

  insert(tx: Tx, values: Partial<Milestone>): Promise<Milestone> {
    const repo = this.repo(tx);
    return repo.save(repo.create(values));
  }

  async update(tx: Tx, id: number, changes: Partial<Milestone>): Promise<Milestone> {
    const repo = this.repo(tx);
    if (Object.keys(changes).length) await repo.update({ id }, changes);
    return repo.findOneByOrFail({ id });
  }

  /** Whether another milestone of the project has this title. */
  async titleTaken(tx: Tx, projectId: number, title: string, exceptId = 0): Promise<boolean> {
    const rows: unknown[] = await tx.query(`SELECT 1 FROM milestones WHERE project_id = $1 AND title = $2 AND id <> $3`, [projectId, title, exceptId]);
    return rows.length > 0;
  }
}
