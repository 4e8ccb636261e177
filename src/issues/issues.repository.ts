import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { DataSource, Repository, SelectQueryBuilder } from 'typeorm';
import { PageRequest } from '../common/pagination/pagination';
import { PolicyUser } from '../common/policy/policy';
import { readableProjects } from '../common/policy/visibility';
import { JoinedEntity } from '../database/joined-rows';
import { Tx } from '../database/transactions';
import { Milestone } from '../milestones/milestone.entity';
import type { UserSummary } from '../users/users.presenter';
import { UserDirectory } from '../users/user-directory.service';
import { Namespace } from '../namespaces/namespace.entity';
import { Project } from '../projects/project.entity';
import type { MembershipLevels as Membership } from '../common/policy/policy.service';
import { Issue } from './issue.entity';
import { IssueOrder } from './issue-rules';

/** Which issues a list shows: every field optional, ANDed. */
export interface IssueFilter {
  projectId?: number;
  authorId?: number;
  milestoneId?: number;
  /** Only issues of projects with the issue tracker on that this caller may read (joins the project). */
  inProjectsReadableBy?: PolicyUser;
  /** Conditions on the issue (alias `i`: confidential issues the viewer may see, issue-policy.ts). */
  conditions?: { sql: string; params: Record<string, unknown> }[];
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

/** One issue of a page with what its presentation needs, read in the page's statement. */
export interface IssueDetails {
  issue: Issue;
  author: UserSummary | null;
  assignee: UserSummary | null;
  milestone: Milestone | null;
  stats: IssueNoteStats;
  /** The viewer's explicit subscription choice, if any. */
  explicit: boolean | null;
}

/** An issue named by its iid in a project given by id, or by namespace and path (any case); `rank` orders the answer. */
export type IssueReference = { rank: number; iid: number } & ({ projectId: number } | { namespace: string; path: string });

/** A referenced issue with its details, label titles, project (with its namespace) and the viewer's memberships there. */
export interface ReferencedIssue extends IssueDetails {
  labels: string[];
  project: Project;
  projectMember: Membership | null;
  groupMember: Membership | null;
}

const ORDER_COLUMNS = { created_at: 'i.created_at', updated_at: 'i.updated_at' } as const;

/** Every query on `issues` (and the issue rows of `notes` that moves and participation read). */
@Injectable()
export class IssuesRepository {
  private readonly issueRow: JoinedEntity<Issue>;
  private readonly milestoneRow: JoinedEntity<Milestone>;
  private readonly projectRow: JoinedEntity<Project>;
  private readonly namespaceRow: JoinedEntity<Namespace>;

  constructor(
    @InjectRepository(Issue) private readonly issues: Repository<Issue>,
    private readonly users: UserDirectory,
    ds: DataSource,
  ) {
    this.issueRow = new JoinedEntity(ds, Issue, 'i', 'i');
    this.milestoneRow = new JoinedEntity(ds, Milestone, 'm', 'm');
    this.projectRow = new JoinedEntity(ds, Project, 'p', 'p');
    this.namespaceRow = new JoinedEntity(ds, Namespace, 'pn', 'pn');
  }

  private repo(tx?: Tx): Repository<Issue> {
    return tx ? tx.getRepository(Issue) : this.issues;
  }

  /**
   * A page of issues matching `filter` with everything their presentation needs but labels, in one
   * statement: the page's ids and the total (a window count, one pass over the matching rows), then
   * for those rows only the issue, its author, assignee and milestone, its note statistics for
   * `viewerId` and mention `pattern` (a PostgreSQL regex), and the viewer's explicit subscription.
   * Only a page past the end costs a second (count) statement.
   */
  async listDetailed(filter: IssueFilter, order: IssueOrder, page: PageRequest, viewerId: number, pattern: string): Promise<[IssueDetails[], number]> {
    const qb = this.issues.createQueryBuilder('i').select('i.id', 'id').addSelect('count(*) OVER ()', 'total').where('i.deleted_at IS NULL');
    if (filter.inProjectsReadableBy) qb.innerJoin(Project, 'p', 'p.id = i.project_id');
    this.filter(qb, filter);
    const column = ORDER_COLUMNS[order.column];
    qb.orderBy(column, order.direction).addOrderBy('i.id', order.direction).offset(page.offset).limit(page.perPage);
    const [inner, params] = qb.getQueryAndParameters();
    const d = this.detailsSql(`$${params.length + 1}`, `$${params.length + 2}`);
    const rows: Record<string, unknown>[] = await this.issues.query(
      `WITH page AS MATERIALIZED (${inner})
       SELECT page.total AS "total", ${d.columns}
         FROM page JOIN issues i ON i.id = page.id
         ${d.joins}
        ORDER BY ${column} ${order.direction}, i.id ${order.direction}`,
      [...(params as unknown[]), viewerId, pattern],
    );
    const items = rows.map((r) => this.details(r));
    if (rows.length) return [items, Number(rows[0].total)];
    if (page.offset === 0) return [[], 0];
    const count = this.issues.createQueryBuilder('i').where('i.deleted_at IS NULL');
    if (filter.inProjectsReadableBy) count.innerJoin(Project, 'p', 'p.id = i.project_id');
    this.filter(count, filter);
    return [[], await count.getCount()];
  }

  /**
   * The select list and joins that read, for the issue `i`, everything its presentation needs but
   * labels: author, assignee, milestone, note statistics for the viewer (`v`, an SQL expression
   * such as `$3`) and mention pattern (`pat`), and the viewer's explicit subscription.
   */
  private detailsSql(v: string, pat: string): { columns: string; joins: string } {
    return {
      columns: `${this.issueRow.columns}, ${this.users.joinedColumns('a', 'author')},
              ${this.users.joinedColumns('s', 'assignee')}, ${this.milestoneRow.columns},
              ns.user_notes AS "ns.user_notes", ns.commented AS "ns.commented", ns.mentioned AS "ns.mentioned",
              (SELECT sub.subscribed FROM subscriptions sub
                WHERE sub.user_id = ${v} AND sub.subscribable_type = 'Issue' AND sub.subscribable_id = i.id) AS "explicit"`,
      joins: `LEFT JOIN users a ON a.id = i.author_id
         LEFT JOIN users s ON s.id = i.assignee_id
         LEFT JOIN milestones m ON m.id = i.milestone_id
         LEFT JOIN LATERAL (
           SELECT count(*) FILTER (WHERE NOT n.system)::int AS user_notes,
                  coalesce(bool_or(NOT n.system AND n.author_id = ${v}), false) AS commented,
                  coalesce(bool_or(NOT n.system AND n.body ~* ${pat}), false) AS mentioned
             FROM notes n WHERE n.noteable_type = 'Issue' AND n.noteable_id = i.id) ns ON TRUE`,
    };
  }

  /** The IssueDetails of a row read with detailsSql. */
  private details(r: Record<string, unknown>): IssueDetails {
    const issue = this.issueRow.from(r) as Issue;
    return {
      issue,
      author: this.users.joined(r, 'author'),
      assignee: this.users.joined(r, 'assignee'),
      milestone: this.milestoneRow.from(r),
      stats: { id: issue.id, user_notes: r['ns.user_notes'] as number, commented: r['ns.commented'] as boolean, mentioned: r['ns.mentioned'] as boolean },
      explicit: (r.explicit as boolean | null) ?? null,
    };
  }

  /**
   * The (not deleted) issues `refs` name, each once, ordered by the rank of its first reference
   * then iid, with their details (as listDetailed), their label titles (title ascending whatever
   * the case), their project with its namespace and `viewerId`'s memberships in it, for the
   * caller to decide what the viewer may see: one statement, whatever the number of references.
   */
  async referencedDetailed(refs: IssueReference[], viewerId: number | null, pattern: string): Promise<ReferencedIssue[]> {
    if (refs.length === 0) return [];
    const d = this.detailsSql('$6', '$7');
    const rows: Record<string, unknown>[] = await this.issues.query(
      `WITH refs AS (
         SELECT * FROM unnest($1::int[], $2::int[], $3::text[], $4::text[], $5::int[]) AS r(rank, project_id, ns, path, iid)
       ), page AS MATERIALIZED (
         SELECT DISTINCT ON (i.id) i.id, t.rank
           FROM (SELECT r.rank, r.iid, r.project_id AS pid FROM refs r WHERE r.project_id IS NOT NULL
                 UNION ALL
                 SELECT r.rank, r.iid, p.id FROM refs r
                   JOIN namespaces n ON lower(n.path) = lower(r.ns)
                   JOIN projects p ON p.namespace_id = n.id AND lower(p.path) = lower(r.path)
                  WHERE r.project_id IS NULL) t
           JOIN issues i ON i.project_id = t.pid AND i.iid = t.iid AND i.deleted_at IS NULL
          ORDER BY i.id, t.rank
       )
       SELECT ${d.columns}, ${this.projectRow.columns}, ${this.namespaceRow.columns},
              pm.access_level AS "pm.access_level", pm.notification_level AS "pm.notification_level",
              gm.access_level AS "gm.access_level", gm.notification_level AS "gm.notification_level",
              (SELECT coalesce(json_agg(l.title ORDER BY lower(l.title) COLLATE "C", l.id), '[]'::json)
                 FROM label_links ll JOIN labels l ON l.id = ll.label_id
                WHERE ll.target_type = 'Issue' AND ll.target_id = i.id) AS "labels"
         FROM page JOIN issues i ON i.id = page.id
         JOIN projects p ON p.id = i.project_id
         JOIN namespaces pn ON pn.id = p.namespace_id
         LEFT JOIN project_members pm ON pm.project_id = p.id AND pm.user_id = $6
         LEFT JOIN group_members gm ON gm.namespace_id = p.namespace_id AND gm.user_id = $6
         ${d.joins}
        ORDER BY page.rank, i.iid`,
      [
        refs.map((r) => r.rank),
        refs.map((r) => ('projectId' in r ? r.projectId : null)),
        refs.map((r) => ('namespace' in r ? r.namespace : null)),
        refs.map((r) => ('path' in r ? r.path : null)),
        refs.map((r) => r.iid),
        viewerId,
        pattern,
      ],
    );
    const membership = (r: Record<string, unknown>, prefix: string): Membership | null =>
      r[`${prefix}.access_level`] === null
        ? null
        : { accessLevel: r[`${prefix}.access_level`] as number, notificationLevel: r[`${prefix}.notification_level`] as number };
    return rows.map((r) => {
      const project = this.projectRow.from(r) as Project;
      project.namespace = this.namespaceRow.from(r) as Namespace;
      return {
        ...this.details(r),
        labels: r.labels as string[],
        project,
        projectMember: membership(r, 'pm'),
        groupMember: membership(r, 'gm'),
      };
    });
  }

  private filter(qb: SelectQueryBuilder<Issue>, f: IssueFilter): void {
    if (f.projectId !== undefined) qb.andWhere('i.project_id = :projectId', { projectId: f.projectId });
    if (f.authorId !== undefined) qb.andWhere('i.author_id = :authorId', { authorId: f.authorId });
    if (f.milestoneId !== undefined) qb.andWhere('i.milestone_id = :milestoneId', { milestoneId: f.milestoneId });
    if (f.inProjectsReadableBy) {
      const readable = readableProjects('p', f.inProjectsReadableBy);
      qb.andWhere('p.issues_enabled').andWhere(readable.sql, readable.params);
    }
    for (const c of f.conditions ?? []) qb.andWhere(c.sql, c.params);
    if (f.states) qb.andWhere('i.state IN (:...states)', { states: f.states });
    if (f.labels?.length) {
      // GitLab 8.8: an issue matches when it has at least one of the labels. EXISTS, not a correlated
      // IN: the planner turns it into a join driven from the labels' links (label_links_key), where
      // the IN was a subplan run once per issue of the project
      qb.andWhere(
        `EXISTS (SELECT 1 FROM label_links ll JOIN labels l ON l.id = ll.label_id
                  WHERE ll.target_type = 'Issue' AND ll.target_id = i.id AND l.project_id = i.project_id
                    AND lower(l.title) IN (:...labelTitles))`,
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
    return this.issues.createQueryBuilder('i').where('i.id = :id AND i.project_id = :projectId AND i.deleted_at IS NULL', { id, projectId }).getOne();
  }

  /** The (not deleted) issue with this global id. */
  find(id: number): Promise<Issue | null> {
    return this.issues.createQueryBuilder('i').where('i.id = :id AND i.deleted_at IS NULL', { id }).getOne();
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

  /** Sets `updated_at` to now, in the caller's transaction: a note on it touches it (GitLab's `belongs_to :noteable, touch: true`). */
  async touch(tx: Tx, id: number): Promise<void> {
    await tx.query(`UPDATE issues SET updated_at = now() WHERE id = $1`, [id]);
  }
}
