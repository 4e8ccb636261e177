import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository, SelectQueryBuilder } from 'typeorm';
import { PageRequest } from '../common/pagination/pagination';
import { Tx } from '../database/transactions';
import { Project } from '../projects/project.entity';
import { Issue } from './issue.entity';
import { IssueOrder } from './issue-rules';

/** An SQL condition with its named parameters. */
export interface Condition {
  sql: string;
  params: Record<string, unknown>;
}

/** Which issues a list shows: every field optional, ANDed. */
export interface IssueFilter {
  projectId?: number;
  authorId?: number;
  milestoneId?: number;
  /** Conditions on the issue's project (alias `p`: readable projects, issue tracker on); they join it. */
  projectConditions?: Condition[];
  /** Conditions on the issue (alias `i`: confidential issues the viewer may see). */
  conditions?: Condition[];
  states?: string[];
  /** At least one of these labels (lower-cased titles). */
  labels?: string[];
  /** A milestone of the issue's project with this title. */
  milestoneTitle?: string;
  iids?: number[];
}

/** Per issue: non-system notes and whether `viewerId` commented or was mentioned (`pattern`, a PostgreSQL regex). */
export interface IssueNoteStats {
  id: number;
  user_notes: number;
  commented: boolean;
  mentioned: boolean;
}

const ORDER_COLUMNS = { created_at: 'i.created_at', updated_at: 'i.updated_at' } as const;

/** Every query on `issues` (and the issue rows of `notes` that moves and participation read). */
@Injectable()
export class IssuesRepository {
  constructor(@InjectRepository(Issue) private readonly issues: Repository<Issue>) {}

  private repo(tx?: Tx): Repository<Issue> {
    return tx ? tx.getRepository(Issue) : this.issues;
  }

  /** A page of issues matching `filter`, in `order` (then id), with the total: a count and a page query. */
  list(filter: IssueFilter, order: IssueOrder, page: PageRequest): Promise<[Issue[], number]> {
    const qb = this.issues.createQueryBuilder('i').where('i.deleted_at IS NULL');
    if (filter.projectConditions?.length) qb.innerJoin(Project, 'p', 'p.id = i.project_id');
    this.filter(qb, filter);
    return qb
      .orderBy(ORDER_COLUMNS[order.column], order.direction)
      .addOrderBy('i.id', order.direction)
      .offset(page.offset)
      .limit(page.perPage)
      .getManyAndCount();
  }

  private filter(qb: SelectQueryBuilder<Issue>, f: IssueFilter): void {
    if (f.projectId !== undefined) qb.andWhere('i.project_id = :projectId', { projectId: f.projectId });
    if (f.authorId !== undefined) qb.andWhere('i.author_id = :authorId', { authorId: f.authorId });
    if (f.milestoneId !== undefined) qb.andWhere('i.milestone_id = :milestoneId', { milestoneId: f.milestoneId });
    for (const c of [...(f.projectConditions ?? []), ...(f.conditions ?? [])]) qb.andWhere(c.sql, c.params);
    if (f.states) qb.andWhere('i.state IN (:...states)', { states: f.states });
    if (f.labels?.length) {
      // GitLab 8.8: an issue matches when it has at least one of the labels
      qb.andWhere(
        `i.id IN (SELECT ll.target_id FROM label_links ll JOIN labels l ON l.id = ll.label_id
                   WHERE ll.target_type = 'Issue' AND l.project_id = i.project_id AND lower(l.title) IN (:...labelTitles))`,
        { labelTitles: f.labels },
      );
    }
    if (f.milestoneTitle !== undefined) {
      qb.andWhere('i.milestone_id IN (SELECT m.id FROM milestones m WHERE m.project_id = i.project_id AND m.title = :milestoneTitle)', {
        milestoneTitle: f.milestoneTitle,
      });
    }
    if (f.iids !== undefined) qb.andWhere('i.iid = ANY(:iids)', { iids: f.iids });
  }

  /** The (not deleted) issue with this global id, if it belongs to the project. */
  findInProject(projectId: number, id: number): Promise<Issue | null> {
    return this.issues
      .createQueryBuilder('i')
      .where('i.id = :id AND i.project_id = :projectId AND i.deleted_at IS NULL', { id, projectId })
      .getOne();
  }

  /** The (not deleted) row, locked for update until the transaction ends. */
  lock(tx: Tx, id: number): Promise<Issue | null> {
    return this.repo(tx).createQueryBuilder('i').setLock('pessimistic_write').where('i.id = :id AND i.deleted_at IS NULL', { id }).getOne();
  }

  byId(id: number): Promise<Issue> {
    return this.issues.findOneByOrFail({ id });
  }

  insert(tx: Tx, values: Partial<Issue>): Promise<Issue> {
    const repo = this.repo(tx);
    return repo.save(repo.create(values));
  }

  async update(tx: Tx, id: number, changes: Partial<Issue>): Promise<void> {
    await this.repo(tx).update({ id }, changes);
  }

  /** Soft delete; false when it was already gone. */
  async softDelete(id: number): Promise<boolean> {
    const done = await this.issues
      .createQueryBuilder()
      .update()
      .set({ deletedAt: () => 'now()' })
      .where('id = :id AND deleted_at IS NULL', { id })
      .execute();
    return !!done.affected;
  }

  /** Copies every note of issue `fromId` (system ones too, with their authors and times) onto `toId` in project `projectId`. */
  async copyNotes(tx: Tx, fromId: number, toId: number, projectId: number): Promise<void> {
    await tx.query(
      `INSERT INTO notes (project_id, noteable_type, noteable_id, author_id, body, system, attachment, created_at, updated_at)
       SELECT $1, 'Issue', $2, author_id, body, system, attachment, created_at, updated_at
         FROM notes WHERE noteable_type = 'Issue' AND noteable_id = $3 ORDER BY id`,
      [projectId, toId, fromId],
    );
  }

  /** Note statistics of each issue for `viewerId` (0 for none) and a mention `pattern`: one grouped query. */
  noteStats(ids: number[], viewerId: number, pattern: string): Promise<IssueNoteStats[]> {
    return this.issues.query(
      `SELECT noteable_id AS id,
              count(*) FILTER (WHERE NOT system)::int AS user_notes,
              coalesce(bool_or(NOT system AND author_id = $2), false) AS commented,
              coalesce(bool_or(NOT system AND body ~* $3), false) AS mentioned
         FROM notes WHERE noteable_type = 'Issue' AND noteable_id = ANY($1)
        GROUP BY noteable_id`,
      [ids, viewerId, pattern],
    );
  }
}
