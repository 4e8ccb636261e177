import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { DataSource, Repository } from 'typeorm';
import { PageRequest } from '../common/pagination/pagination';
import { nextInternalId } from '../database/internal-ids';
import { JoinedEntity } from '../database/joined-rows';
import { Tx } from '../database/transactions';
import { Milestone } from '../milestones/milestone.entity';
import type { UserSummary } from '../users/users.presenter';
import { UserDirectory } from '../users/user-directory.service';
import { MergeRequest, MergeRequestState, MergeStatus } from './merge-request.entity';

export interface MergeRequestFilters {
  projectId: number;
  iids?: number[];
  state?: string;
  orderBy: 'created_at' | 'updated_at';
  sort: 'ASC' | 'DESC';
}

/** Per merge request: notes by people, award votes, and whether the viewer took part. */
export interface NoteStats {
  userNotes: number;
  upvotes: number;
  downvotes: number;
  commented: boolean;
  mentioned: boolean;
}

/** One merge request of a page with what its presentation needs but labels, read in the page's statement. */
export interface MergeRequestDetails {
  mr: MergeRequest;
  author: UserSummary | null;
  assignee: UserSummary | null;
  milestone: Milestone | null;
  stats: NoteStats;
  /** The viewer's explicit subscription choice, if any. */
  explicit: boolean | null;
}

const OPEN_STATES = ['opened', 'reopened'];
const ORDER: Record<MergeRequestFilters['orderBy'], string> = { created_at: 'mr.created_at', updated_at: 'mr.updated_at' };

/** Every SQL statement of the merge requests area. */
@Injectable()
export class MergeRequestsRepository {
  private readonly mrRow: JoinedEntity<MergeRequest>;
  private readonly milestoneRow: JoinedEntity<Milestone>;

  constructor(
    @InjectRepository(MergeRequest) private readonly repo: Repository<MergeRequest>,
    private readonly users: UserDirectory,
    ds: DataSource,
  ) {
    this.mrRow = new JoinedEntity(ds, MergeRequest, 'mr', 'mr');
    this.milestoneRow = new JoinedEntity(ds, Milestone, 'm', 'm');
  }

  private filtered(f: MergeRequestFilters) {
    const qb = this.repo.createQueryBuilder('mr').where('mr.project_id = :projectId AND mr.deleted_at IS NULL', { projectId: f.projectId });
    if (f.iids !== undefined) qb.andWhere('mr.iid = ANY(:iids)', { iids: f.iids });
    if (f.state === 'opened') qb.andWhere(`mr.state IN ('opened', 'reopened', 'locked')`);
    else if (f.state === 'closed' || f.state === 'merged') qb.andWhere('mr.state = :state', { state: f.state });
    return qb;
  }

  /**
   * A page with everything its presentation needs but labels, in one statement: the page's ids
   * and the total (window count), then for those rows only the merge request, its author,
   * assignee and milestone, note statistics for `viewerId` and mention `pattern`, and the
   * viewer's explicit subscription. Only a page past the end costs a second (count) statement.
   */
  async listDetailed(f: MergeRequestFilters, page: PageRequest, viewerId: number, pattern: string): Promise<[MergeRequestDetails[], number]> {
    const qb = this.filtered(f).select('mr.id', 'id').addSelect('count(*) OVER ()', 'total');
    qb.orderBy(ORDER[f.orderBy], f.sort).addOrderBy('mr.id', f.sort).offset(page.offset).limit(page.perPage);
    const [inner, params] = qb.getQueryAndParameters();
    const v = `$${params.length + 1}`;
    const pat = `$${params.length + 2}`;
    const rows: Record<string, unknown>[] = await this.repo.query(
      `WITH page AS MATERIALIZED (${inner})
       SELECT page.total AS "total", ${this.mrRow.columns}, ${this.users.joinedColumns('a', 'author')},
              ${this.users.joinedColumns('s', 'assignee')}, ${this.milestoneRow.columns},
              ns.user_notes AS "ns.user_notes", ns.up AS "ns.up", ns.down AS "ns.down",
              ns.commented AS "ns.commented", ns.mentioned AS "ns.mentioned",
              (SELECT sub.subscribed FROM subscriptions sub
                WHERE sub.user_id = ${v} AND sub.subscribable_type = 'MergeRequest' AND sub.subscribable_id = mr.id) AS "explicit"
         FROM page JOIN merge_requests mr ON mr.id = page.id
         LEFT JOIN users a ON a.id = mr.author_id
         LEFT JOIN users s ON s.id = mr.assignee_id
         LEFT JOIN milestones m ON m.id = mr.milestone_id
         LEFT JOIN LATERAL (
           SELECT count(*) FILTER (WHERE NOT n.system)::int AS user_notes,
                  count(*) FILTER (WHERE NOT n.system AND btrim(n.body) IN ('+1', ':+1:', ':thumbsup:'))::int AS up,
                  count(*) FILTER (WHERE NOT n.system AND btrim(n.body) IN ('-1', ':-1:', ':thumbsdown:'))::int AS down,
                  coalesce(bool_or(NOT n.system AND n.author_id = ${v}), false) AS commented,
                  coalesce(bool_or(NOT n.system AND n.body ~* ${pat}), false) AS mentioned
             FROM notes n WHERE n.noteable_type = 'MergeRequest' AND n.noteable_id = mr.id) ns ON TRUE
        ORDER BY ${ORDER[f.orderBy]} ${f.sort}, mr.id ${f.sort}`,
      [...(params as unknown[]), viewerId, pattern],
    );
    const items = rows.map((r): MergeRequestDetails => ({
      mr: this.mrRow.from(r) as MergeRequest,
      author: this.users.joined(r, 'author'),
      assignee: this.users.joined(r, 'assignee'),
      milestone: this.milestoneRow.from(r),
      stats: {
        userNotes: r['ns.user_notes'] as number,
        upvotes: r['ns.up'] as number,
        downvotes: r['ns.down'] as number,
        commented: r['ns.commented'] as boolean,
        mentioned: r['ns.mentioned'] as boolean,
      },
      explicit: (r.explicit as boolean | null) ?? null,
    }));
    if (rows.length) return [items, Number(rows[0].total)];
    if (page.offset === 0) return [[], 0];
    return [[], await this.filtered(f).getCount()];
  }

  findInProject(projectId: number, id: number): Promise<MergeRequest | null> {
    return this.repo.createQueryBuilder('mr').where('mr.id = :id AND mr.project_id = :projectId AND mr.deleted_at IS NULL', { id, projectId }).getOne();
  }

  /** The (not deleted) merge requests with these iids in these projects, in one statement. */
  byIids(refs: { projectId: number; iid: number }[]): Promise<MergeRequest[]> {
    if (refs.length === 0) return Promise.resolve([]);
    return this.repo
      .createQueryBuilder('mr')
      .where('(mr.project_id, mr.iid) IN (SELECT * FROM unnest(CAST(:pids AS int[]), CAST(:iids AS int[])))', {
        pids: refs.map((r) => r.projectId),
        iids: refs.map((r) => r.iid),
      })
      .andWhere('mr.deleted_at IS NULL')
      .getMany();
  }

  byId(id: number, m: Tx = this.repo.manager): Promise<MergeRequest> {
    return m.getRepository(MergeRequest).findOneByOrFail({ id });
  }

  /** The open merge request with the same source and target, if any. */
  findOpenDuplicate(
    k: { sourceProjectId: number; sourceBranch: string; projectId: number; targetBranch: string },
    exceptId = 0,
    m: Tx = this.repo.manager,
  ): Promise<MergeRequest | null> {
    return m
      .getRepository(MergeRequest)
      .createQueryBuilder('mr')
      .where(
        `mr.source_project_id = :sourceProjectId AND mr.source_branch = :sourceBranch AND mr.project_id = :projectId
         AND mr.target_branch = :targetBranch AND mr.state IN ('opened', 'reopened', 'locked') AND mr.deleted_at IS NULL AND mr.id <> :exceptId`,
        { ...k, exceptId },
      )
      .getOne();
  }

  /** Inserts with the next iid of the target project (the counter issues use), in the caller's transaction. */
  async insert(m: Tx, values: Partial<MergeRequest> & { projectId: number }): Promise<MergeRequest> {
    const iid = await nextInternalId(m, values.projectId, 'merge_requests');
    const repo = m.getRepository(MergeRequest);
    return repo.save(
      repo.create({
        state: 'opened',
        mergeStatus: 'unchecked',
        mergeWhenBuildSucceeds: false,
        mergeUserId: null,
        mergeParams: null,
        mergeWhenBuildSucceedsSha: null,
        mergeCommitSha: null,
        mergedAt: null,
        deletedAt: null,
        ...values,
        iid,
      }),
    );
  }

  lock(m: Tx, id: number): Promise<MergeRequest | null> {
    return m.getRepository(MergeRequest).createQueryBuilder('mr').setLock('pessimistic_write').where('mr.id = :id AND mr.deleted_at IS NULL', { id }).getOne();
  }

  async update(m: Tx, id: number, changes: Partial<MergeRequest>): Promise<void> {
    if (Object.keys(changes).length) await m.getRepository(MergeRequest).update({ id }, changes);
  }

  /** Soft delete; false when it was already gone. */
  async softDelete(id: number): Promise<boolean> {
    const r = await this.repo
      .createQueryBuilder()
      .update()
      .set({ deletedAt: () => 'now()' })
      .where('id = :id AND deleted_at IS NULL', { id })
      .execute();
    return !!r.affected;
  }

  /**
   * Takes an open merge request for merging: `opened`/`reopened` → `locked` in one statement, so of
   * two concurrent merges exactly one gets it. Returns the state to go back to, or null.
   */
  async claimForMerge(id: number): Promise<MergeRequestState | null> {
    const result: [{ state: MergeRequestState }[], number] = await this.repo.query(
      `UPDATE merge_requests mr SET state = 'locked'
         FROM (SELECT id, state FROM merge_requests WHERE id = $1 AND deleted_at IS NULL FOR UPDATE) old
        WHERE mr.id = old.id AND old.state = ANY($2)
      RETURNING old.state`,
      [id, OPEN_STATES],
    );
    // TypeORM answers an UPDATE with [rows, rowCount]
    return result[0][0]?.state ?? null;
  }

  /** Gives a claimed merge request back (the merge did not happen). */
  async release(id: number, state: MergeRequestState, mergeStatus?: MergeStatus): Promise<void> {
    await this.repo.query(`UPDATE merge_requests SET state = $2, merge_status = coalesce($3, merge_status) WHERE id = $1 AND state = 'locked'`, [
      id,
      state,
      mergeStatus ?? null,
    ]);
  }

  async setMergeStatus(ids: number[], status: MergeStatus, onlyIfOpen = true): Promise<void> {
    if (ids.length === 0) return;
    await this.repo.query(
      `UPDATE merge_requests SET merge_status = $2 WHERE id = ANY($1) AND deleted_at IS NULL ${onlyIfOpen ? `AND state IN ('opened', 'reopened')` : ''}`,
      [ids, status],
    );
  }

  /** Open merge requests whose source or target is one of `branches` of `projectId`. */
  openTouching(projectId: number, branches: string[]): Promise<MergeRequest[]> {
    if (branches.length === 0) return Promise.resolve([]);
    return this.repo
      .createQueryBuilder('mr')
      .where(`mr.state IN ('opened', 'reopened') AND mr.deleted_at IS NULL`)
      .andWhere(
        '((mr.source_project_id = :projectId AND mr.source_branch IN (:...branches)) OR (mr.project_id = :projectId AND mr.target_branch IN (:...branches)))',
        { projectId, branches },
      )
      .getMany();
  }

  /** Open merge requests from `sourceProjectId` waiting to be merged when their build succeeds. */
  waitingForBuild(sourceProjectId: number): Promise<MergeRequest[]> {
    return this.repo
      .createQueryBuilder('mr')
      .where(`mr.source_project_id = :sourceProjectId AND mr.merge_when_build_succeeds AND mr.state IN ('opened', 'reopened') AND mr.deleted_at IS NULL`, {
        sourceProjectId,
      })
      .getMany();
  }

  /**
   * Note statistics of merge requests: one statement for any number of them. Award notes are bodies
   * of just `+1` / `-1` (or their emoji spellings).
   */
  async noteStats(ids: number[], viewerId: number, mentionPattern: string): Promise<Map<number, NoteStats>> {
    const out = new Map<number, NoteStats>();
    if (ids.length === 0) return out;
    const rows: { id: number; user_notes: number; up: number; down: number; commented: boolean; mentioned: boolean }[] = await this.repo.query(
      `SELECT noteable_id AS id,
              count(*) FILTER (WHERE NOT system)::int AS user_notes,
              count(*) FILTER (WHERE NOT system AND btrim(body) IN ('+1', ':+1:', ':thumbsup:'))::int AS up,
              count(*) FILTER (WHERE NOT system AND btrim(body) IN ('-1', ':-1:', ':thumbsdown:'))::int AS down,
              coalesce(bool_or(NOT system AND author_id = $2), false) AS commented,
              coalesce(bool_or(NOT system AND body ~* $3), false) AS mentioned
         FROM notes WHERE noteable_type = 'MergeRequest' AND noteable_id = ANY($1)
        GROUP BY noteable_id`,
      [ids, viewerId, mentionPattern],
    );
    for (const r of rows) {
      out.set(r.id, { userNotes: r.user_notes, upvotes: r.up, downvotes: r.down, commented: r.commented, mentioned: r.mentioned });
    }
    return out;
  }

  /** Sets `updated_at` to now, in the caller's transaction: a note on it touches it (GitLab's `belongs_to :noteable, touch: true`). */
  async touch(tx: Tx, id: number): Promise<void> {
    await tx.query(`UPDATE merge_requests SET updated_at = now() WHERE id = $1`, [id]);
  }
}
