import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { Tx } from '../database/transactions';
import { Label, LabelLink } from './label.entity';

export type LabelTarget = 'Issue' | 'MergeRequest';

/** An SQL condition on the issues (alias `i`) a viewer may count, with its named parameters. */
export interface IssueCondition {
  sql: string;
  params: Record<string, unknown>;
}

/** A label with its issue and merge request counts and the viewer's explicit subscription choice (null: none). */
export interface LabelWithCounts {
  label: Label;
  open: number;
  closed: number;
  openMergeRequests: number;
  subscribed: boolean | null;
}

/** What `withDetails` counts: the issues `issues` admits (none when undefined), open merge requests or none, and whose subscription. */
export interface LabelCounting {
  issues: IssueCondition | undefined;
  mergeRequests: boolean;
  viewerId: number | null;
}

/** Every query on `labels` and `label_links`. Methods that write take the caller's transaction. */
@Injectable()
export class LabelsRepository {
  constructor(@InjectRepository(Label) private readonly labels: Repository<Label>) {}

  private repo(tx?: Tx): Repository<Label> {
    return tx ? tx.getRepository(Label) : this.labels;
  }

  /** The project's label with this title, any case. */
  findByTitle(projectId: number, title: string, tx?: Tx): Promise<Label | null> {
    return this.repo(tx).createQueryBuilder('l').where('l.project_id = :projectId AND lower(l.title) = lower(:title)', { projectId, title }).getOne();
  }

  findInProject(projectId: number, id: number): Promise<Label | null> {
    return this.labels.findOne({ where: { id, projectId } });
  }

  /** The project's labels with these lower-cased titles. */
  byLowerTitles(projectId: number, lowers: string[], tx?: Tx): Promise<Label[]> {
    if (lowers.length === 0) return Promise.resolve([]);
    return this.repo(tx).createQueryBuilder('l').where('l.project_id = :projectId AND lower(l.title) IN (:...lowers)', { projectId, lowers }).getMany();
  }

  insert(tx: Tx, values: Partial<Label>): Promise<Label> {
    const repo = this.repo(tx);
    return repo.save(repo.create(values));
  }

  async update(tx: Tx, id: number, changes: Partial<Label>): Promise<void> {
    await this.repo(tx).update({ id }, changes);
  }

  /** Deletes the label; its links go with it (ON DELETE CASCADE). */
  async delete(tx: Tx, id: number): Promise<void> {
    await this.repo(tx).delete({ id });
  }

  /**
   * Creates the titles the project lacks (any case), with `color`. Concurrent creators of the same
   * title wait on the unique index and then skip it.
   */
  async insertMissing(tx: Tx, projectId: number, titles: string[], color: string): Promise<void> {
    await tx.query(
      `INSERT INTO labels (project_id, title, color)
       SELECT $1, t, $3 FROM unnest($2::text[]) AS t
       ON CONFLICT (project_id, lower(title)) DO NOTHING`,
      [projectId, titles, color],
    );
  }

  /** Labels of each target, title ascending whatever the case (byte order), then id: one query. */
  async labelsOf(type: LabelTarget, ids: number[], tx?: Tx): Promise<Map<number, Label[]>> {
    const out = new Map<number, Label[]>();
    if (ids.length === 0) return out;
    const rows: (Record<string, unknown> & { target_id: number })[] = await (tx ?? this.labels.manager).query(
      `SELECT ll.target_id, l.id, l.project_id, l.title, l.color, l.description, l.template, l.created_at, l.updated_at
         FROM label_links ll JOIN labels l ON l.id = ll.label_id
        WHERE ll.target_type = $1 AND ll.target_id = ANY($2)
        ORDER BY lower(l.title) COLLATE "C" ASC, l.id ASC`,
      [type, [...new Set(ids)]],
    );
    for (const r of rows) {
      const label = Object.assign(new Label(), {
        id: r.id,
        projectId: r.project_id,
        title: r.title,
        color: r.color,
        description: r.description,
        template: r.template,
        createdAt: r.created_at,
        updatedAt: r.updated_at,
      });
      const list = out.get(r.target_id) ?? [];
      list.push(label);
      out.set(r.target_id, list);
    }
    return out;
  }

  async unlink(tx: Tx, type: LabelTarget, targetId: number, labelIds: number[]): Promise<void> {
    await tx
      .getRepository(LabelLink)
      .createQueryBuilder()
      .delete()
      .where('target_type = :type AND target_id = :targetId AND label_id IN (:...labelIds)', { type, targetId, labelIds })
      .execute();
  }

  async link(tx: Tx, type: LabelTarget, targetId: number, labelIds: number[]): Promise<void> {
    await tx
      .getRepository(LabelLink)
      .createQueryBuilder()
      .insert()
      .values(labelIds.map((labelId) => ({ labelId, targetType: type, targetId })))
      .orIgnore()
      .execute();
  }

  /**
   * The project's labels (or the labels with these ids), title ascending whatever the case (byte
   * order), then id, each with its open and closed issue counts (of the issues `count.issues`
   * admits), its open merge request count (opened, reopened or locked — being merged — as the
   * merge request list's `state=opened`; deleted ones not) and `count.viewerId`'s explicit
   * subscription choice: one statement.
   */
  async withDetails(which: { projectId: number } | { ids: number[] }, count: LabelCounting): Promise<LabelWithCounts[]> {
    if ('ids' in which && which.ids.length === 0) return [];
    const scope =
      'projectId' in which
        ? { sql: 'project_id = :projectId', params: { projectId: which.projectId } }
        : { sql: 'id IN (:...ids)', params: { ids: which.ids } };
    const visible = count.issues ?? { sql: 'FALSE', params: {} };
    const { entities, raw } = await this.labels
      .createQueryBuilder('l')
      .leftJoin(
        (sq) =>
          sq
            .select('ll.label_id', 'label_id')
            .addSelect(`count(*) FILTER (WHERE i.state IN ('opened', 'reopened'))::int`, 'open')
            .addSelect(`count(*) FILTER (WHERE i.state = 'closed')::int`, 'closed')
            .from(LabelLink, 'll')
            .innerJoin('issues', 'i', `i.id = ll.target_id AND ll.target_type = 'Issue'`)
            .where(`ll.label_id IN (SELECT id FROM labels WHERE ${scope.sql})`, scope.params)
            .andWhere('i.deleted_at IS NULL')
            .andWhere(visible.sql, visible.params)
            .groupBy('ll.label_id'),
        'c',
        'c.label_id = l.id',
      )
      .leftJoin(
        (sq) =>
          sq
            .select('ml.label_id', 'label_id')
            .addSelect('count(*)::int', 'open')
            .from(LabelLink, 'ml')
            .innerJoin('merge_requests', 'mr', `mr.id = ml.target_id AND ml.target_type = 'MergeRequest'`)
            .where(`ml.label_id IN (SELECT id FROM labels WHERE ${scope.sql})`, scope.params)
            .andWhere(`mr.state IN ('opened', 'reopened', 'locked')`) // locked: being merged, shown as opened
            .andWhere('mr.deleted_at IS NULL')
            .andWhere(count.mergeRequests ? 'TRUE' : 'FALSE')
            .groupBy('ml.label_id'),
        'm',
        'm.label_id = l.id',
      )
      .addSelect('coalesce(c.open, 0)', 'open_count')
      .addSelect('coalesce(c.closed, 0)', 'closed_count')
      .addSelect('coalesce(m.open, 0)', 'open_mr_count')
      .addSelect(
        `(SELECT s.subscribed FROM subscriptions s
           WHERE s.user_id = :viewerId AND s.subscribable_type = 'Label' AND s.subscribable_id = l.id)`,
        'subscribed',
      )
      .where(`l.${scope.sql}`, { ...scope.params, viewerId: count.viewerId })
      .orderBy('lower(l.title) COLLATE "C"', 'ASC')
      .addOrderBy('l.id', 'ASC')
      .getRawAndEntities<{ l_id: number; open_count: number; closed_count: number; open_mr_count: number; subscribed: boolean | null }>();
    const byId = new Map(raw.map((r) => [Number(r.l_id), r]));
    return entities.map((label) => {
      const r = byId.get(label.id)!;
      return { label, open: Number(r.open_count), closed: Number(r.closed_count), openMergeRequests: Number(r.open_mr_count), subscribed: r.subscribed };
    });
  }
}
