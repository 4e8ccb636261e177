import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository, SelectQueryBuilder } from 'typeorm';
import { PageRequest } from '../common/pagination/pagination';
import { PolicyUser } from '../common/policy/policy';
import type { MembershipLevels } from '../common/policy/policy.service';
import { memberProjects, readableIssuesAnyProject, readableProjects, SqlCondition } from '../common/policy/visibility';
import { containsPattern } from '../common/params/params';
import { Tx } from '../database/transactions';
import { Namespace } from '../namespaces/namespace.entity';
import { User } from '../users/user.entity';
import type { UserSummary } from '../users/users.presenter';
import { ForkParent } from './projects.presenter';
import { Project } from './project.entity';
import { JoinedEntity, manyWithTotal } from '../database/joined-rows';
import { UserDirectory } from '../users/user-directory.service';

/** `:id` parsed: a number, or `namespace/path` (case-insensitive). */
export type ProjectKey = { id: number } | { namespace: string; path: string };

/** A membership as a project's reads bring it (the policy's levels). */
export type Membership = MembershipLevels;

/** A project with the caller's direct and group memberships (null when none, or anonymous). */
export interface ProjectWithMemberships {
  project: Project;
  projectMember: Membership | null;
  groupMember: Membership | null;
}

/** An SQL condition on alias `p` (and `n`, the namespace) with its named parameters, from the policy. */
/**
 * Which projects a list starts from: all, those matching a policy condition, those the user owns
 * (personal namespace or groups where the user is owner), or the readable ones the user starred.
 */
export type ProjectListScope =
  | { kind: 'all' }
  | { kind: 'member'; viewer: PolicyUser }
  | { kind: 'readable'; viewer: PolicyUser }
  | { kind: 'owned'; userId: number }
  | { kind: 'starred'; viewer: PolicyUser };

/** How a list is narrowed: its scope and the filters of ListProjectsDto. */
export interface ProjectListQuery {
  scope: ProjectListScope;
  archived?: boolean;
  visibilityLevel?: number;
  search?: { term: string; nameOnly: boolean };
  /** A column of ORDER_COLUMNS. */
  orderBy: keyof typeof ORDER_COLUMNS;
  ascending: boolean;
}

/** Per project of a page: counts, the personal namespace's owner and the viewer's memberships. */
export interface ProjectExtras {
  forksCount: number;
  openIssuesCount: number;
  owner: UserSummary | null;
  projectMember: { accessLevel: number; notificationLevel: number } | null;
  groupMember: { accessLevel: number; notificationLevel: number } | null;
}

export const ORDER_COLUMNS = {
  id: 'p.id',
  name: 'p.name',
  path: 'p.path',
  created_at: 'p.created_at',
  updated_at: 'p.updated_at',
  last_activity_at: 'p.last_activity_at',
} as const;

interface MembershipRaw {
  pm_access_level: number | null;
  pm_notification_level: number | null;
  gm_access_level: number | null;
  gm_notification_level: number | null;
}

/** Every query on `projects` and `users_star_projects`. Methods that write take the caller's transaction. */
/**
 * The viewer's notification level for a project or group as `permissions` show it (GitLab 8.12: the
 * notification_settings row, `global` 3 when none). Read only where a membership row exists.
 */
const NOTIFICATION_LEVEL = (type: 'Project' | 'Namespace', sourceId: string, userParam: string) =>
  `COALESCE((SELECT ns.level FROM notification_settings ns
              WHERE ns.user_id = ${userParam} AND ns.source_type = '${type}' AND ns.source_id = ${sourceId}), 3)`;

@Injectable()
export class ProjectsRepository {
  constructor(
    @InjectRepository(Project) private readonly projects: Repository<Project>,
    private readonly users: UserDirectory,
  ) {}

  private repo(tx?: Tx): Repository<Project> {
    return tx ? tx.getRepository(Project) : this.projects;
  }

  /** Projects joined with their namespace (every read needs it for paths). */
  private withNamespace(tx?: Tx): SelectQueryBuilder<Project> {
    return this.repo(tx).createQueryBuilder('p').innerJoinAndSelect('p.namespace', 'n');
  }

  private byKey(qb: SelectQueryBuilder<Project>, key: ProjectKey): SelectQueryBuilder<Project> {
    if ('id' in key) return qb.where('p.id = :id', { id: key.id });
    return qb.where('lower(n.path) = lower(:ns) AND lower(p.path) = lower(:path)', { ns: key.namespace, path: key.path });
  }

  /**
   * The project and, for a signed-in caller, its project and group memberships: one statement
   * (the resolver's single round trip).
   */
  async findWithMemberships(key: ProjectKey, userId: number | null): Promise<ProjectWithMemberships | null> {
    if (userId === null) {
      const project = await this.byKey(this.withNamespace(), key).getOne();
      return project ? { project, projectMember: null, groupMember: null } : null;
    }
    // Every project route runs this: plain SQL read into the entities like the query builder's
    // (JoinedEntity), because building the builder's statement cost more than the rest of the read.
    const { project: projectRow, namespace: namespaceRow } = this.joinedRows();
    const byId = 'id' in key;
    const rows: (Record<string, unknown> & MembershipRaw)[] = await this.projects.query(
      `SELECT ${projectRow.columns}, ${namespaceRow.columns},
              pm.access_level AS "pm_access_level", ${NOTIFICATION_LEVEL('Project', 'p.id', '$1')} AS "pm_notification_level",
              gm.access_level AS "gm_access_level", ${NOTIFICATION_LEVEL('Namespace', 'p.namespace_id', '$1')} AS "gm_notification_level"
         FROM projects p JOIN namespaces n ON n.id = p.namespace_id
         LEFT JOIN project_members pm ON pm.project_id = p.id AND pm.user_id = $1
         LEFT JOIN group_members gm ON gm.namespace_id = p.namespace_id AND gm.user_id = $1
        WHERE ${byId ? 'p.id = $2' : 'lower(n.path) = lower($2) AND lower(p.path) = lower($3)'}
        LIMIT 1`,
      byId ? [userId, key.id] : [userId, key.namespace, key.path],
    );
    if (!rows.length) return null;
    const r = rows[0];
    const project = projectRow.from(r) as Project;
    project.namespace = namespaceRow.from(r) as Namespace;
    return {
      project,
      projectMember: r.pm_access_level === null ? null : { accessLevel: r.pm_access_level, notificationLevel: r.pm_notification_level as number },
      groupMember: r.gm_access_level === null ? null : { accessLevel: r.gm_access_level, notificationLevel: r.gm_notification_level as number },
    };
  }

  private rows?: { project: JoinedEntity<Project>; namespace: JoinedEntity<Namespace> };

  /** A project row and its namespace as read by the plain statements (`p.col`, `n.col`). */
  private joinedRows() {
    return (this.rows ??= {
      project: new JoinedEntity(this.projects.manager.connection, Project, 'p', 'p'),
      namespace: new JoinedEntity(this.projects.manager.connection, Namespace, 'n', 'n'),
    });
  }

  find(key: ProjectKey, tx?: Tx): Promise<Project | null> {
    return this.byKey(this.withNamespace(tx), key).getOne();
  }

  /**
   * A page of projects with the total (a window count; only a page past the end costs a count
   * statement). Plain SQL read into the entities (JoinedEntity): TypeORM's query building and
   * hydration cost as much CPU as the page's statement itself.
   */
  async list(q: ProjectListQuery, page: PageRequest): Promise<[Project[], number]> {
    const conditions: string[] = [];
    const params: Record<string, unknown> = {};
    const where = (sql: string, values: Record<string, unknown> = {}) => {
      conditions.push(sql);
      Object.assign(params, values);
    };
    const add = (c: SqlCondition) => where(c.sql, c.params);
    const scope = q.scope;
    if (scope.kind === 'member') add(memberProjects('p', scope.viewer));
    else if (scope.kind === 'readable') add(readableProjects('p', scope.viewer));
    else if (scope.kind === 'owned') {
      where(
        `((n.kind = 'user' AND n.owner_id = :ownerId) OR
          (n.kind = 'group' AND n.id IN (SELECT namespace_id FROM group_members WHERE user_id = :ownerId AND access_level = 50)))`,
        { ownerId: scope.userId },
      );
    } else if (scope.kind === 'starred') {
      where('p.id IN (SELECT project_id FROM users_star_projects WHERE user_id = :starUid)', { starUid: scope.viewer.id });
      add(readableProjects('p', scope.viewer));
    }
    if (q.archived !== undefined) where('p.archived = :archived', { archived: q.archived });
    if (q.visibilityLevel !== undefined) where('p.visibility_level = :level', { level: q.visibilityLevel });
    if (q.search) {
      const like = containsPattern(q.search.term);
      // each column matched on its own (a union of ids) so that each reads its trigram index (the
      // search indexes migration); one OR across projects and namespaces could only scan both tables
      where(
        q.search.nameOnly
          ? 'lower(p.name) LIKE :like'
          : `p.id IN (SELECT sp.id FROM projects sp WHERE lower(sp.name) LIKE :like
                      UNION ALL SELECT sp.id FROM projects sp WHERE lower(sp.path) LIKE :like
                      UNION ALL SELECT sp.id FROM projects sp WHERE lower(coalesce(sp.description, '')) LIKE :like
                      UNION ALL SELECT sp.id FROM projects sp JOIN namespaces sn ON sn.id = sp.namespace_id WHERE lower(sn.name) LIKE :like)`,
        { like },
      );
    }
    const dir = q.ascending ? 'ASC' : 'DESC';
    if (!Number.isSafeInteger(page.perPage) || !Number.isSafeInteger(page.offset)) throw new Error('invalid page');
    const from = `FROM projects p JOIN namespaces n ON n.id = p.namespace_id${conditions.length ? ` WHERE ${conditions.map((c) => `(${c})`).join(' AND ')}` : ''}`;
    const { project: projectRow, namespace: namespaceRow } = this.joinedRows();
    const driver = this.projects.manager.connection.driver;
    // The page's ids and the total first, on the narrow rows (for a member of 1,000 projects, the
    // window count reads 1,000 rows: their ids and sort key, not every column of each), then the
    // page's 20 rows whole.
    const [sql, values] = driver.escapeQueryWithParameters(
      `WITH page AS MATERIALIZED (
         SELECT p.id, ${ORDER_COLUMNS[q.orderBy]} AS sort_key, count(*) OVER () AS window_total ${from}
          ORDER BY ${ORDER_COLUMNS[q.orderBy]} ${dir}, p.id ${dir} LIMIT ${page.perPage} OFFSET ${page.offset})
       SELECT ${projectRow.columns}, ${namespaceRow.columns}, page.window_total AS "window_total"
         FROM page JOIN projects p ON p.id = page.id JOIN namespaces n ON n.id = p.namespace_id
        ORDER BY page.sort_key ${dir}, page.id ${dir}`,
      params,
      {},
    );
    const rows: Record<string, unknown>[] = await this.projects.query(sql, values);
    if (rows.length) {
      const items = rows.map((r) => {
        const project = projectRow.from(r) as Project;
        project.namespace = namespaceRow.from(r) as Namespace;
        return project;
      });
      return [items, Number(rows[0].window_total)];
    }
    if (page.offset === 0) return [[], 0];
    const [countSql, countValues] = driver.escapeQueryWithParameters(`SELECT count(*)::int AS "n" ${from}`, params, {});
    const counted: { n: number }[] = await this.projects.query(countSql, countValues);
    return [[], counted[0].n];
  }

  /** A group's projects that `viewer` may read, id descending, with the total. */
  inNamespace(namespaceId: number, viewer: PolicyUser | undefined, page: PageRequest) {
    const readable = readableProjects('p', viewer);
    return manyWithTotal(
      this.withNamespace()
        .where('p.namespace_id = :gid', { gid: namespaceId })
        .andWhere(readable.sql, readable.params)
        .orderBy('p.id', 'DESC')
        .offset(page.offset)
        .limit(page.perPage),
    );
  }

  // ---------------------------------------------------------------- views

  /** Fork counts of the projects: one grouped query. */
  async forkCounts(ids: number[]): Promise<Map<number, number>> {
    const rows: { id: number; n: number }[] = await this.projects.query(
      `SELECT forked_from_project_id AS id, count(*)::int AS n FROM projects WHERE forked_from_project_id = ANY($1) GROUP BY 1`,
      [ids],
    );
    return new Map(rows.map((r) => [r.id, r.n]));
  }

  /**
   * What a page of projects shows besides its rows, in one statement for the whole page: fork and
   * open issue counts (the open issues `counter` may see: confidential ones by the one rule of
   * common/policy/visibility.ts, so the count is what that caller's issue list holds), the owner of a
   * personal namespace (lean user), and, for `viewerId`, the direct and group memberships (the access
   * the policy computes from).
   */
  async listExtras(
    projects: { id: number; namespaceId: number }[],
    viewerId: number | null,
    counter: PolicyUser | undefined,
  ): Promise<Map<number, ProjectExtras>> {
    const rows: Record<string, unknown>[] = await this.projects.query(
      `SELECT x.id AS "id",
              (SELECT count(*)::int FROM projects f WHERE f.forked_from_project_id = x.id) AS "forks",
              (SELECT count(*)::int FROM issues i
                WHERE i.project_id = x.id AND i.state IN ('opened', 'reopened') AND i.deleted_at IS NULL
                  AND ${readableIssuesAnyProject('i', '$4::int', '$5::boolean')}) AS "open_issues",
              pm.access_level AS "pm_access_level", ${NOTIFICATION_LEVEL('Project', 'x.id', '$3')} AS "pm_notification_level",
              gm.access_level AS "gm_access_level", ${NOTIFICATION_LEVEL('Namespace', 'x.namespace_id', '$3')} AS "gm_notification_level",
              ${this.users.joinedColumns('u', 'owner')}
         FROM unnest($1::int[], $2::int[]) AS x(id, namespace_id)
         JOIN namespaces n ON n.id = x.namespace_id
         LEFT JOIN users u ON n.kind = 'user' AND u.id = n.owner_id
         LEFT JOIN project_members pm ON pm.project_id = x.id AND pm.user_id = $3
         LEFT JOIN group_members gm ON gm.namespace_id = x.namespace_id AND gm.user_id = $3`,
      [projects.map((p) => p.id), projects.map((p) => p.namespaceId), viewerId ?? 0, counter?.id ?? null, counter?.admin ?? false],
    );
    const level = (a: unknown, n: unknown) => (a === null || a === undefined ? null : { accessLevel: a as number, notificationLevel: n as number });
    return new Map(
      rows.map((r) => [
        r.id as number,
        {
          forksCount: r.forks as number,
          openIssuesCount: r.open_issues as number,
          owner: this.users.joined(r, 'owner'),
          projectMember: level(r.pm_access_level, r.pm_notification_level),
          groupMember: level(r.gm_access_level, r.gm_notification_level),
        },
      ]),
    );
  }

  /** Open issues of the projects: one grouped query. */
  async openIssueCounts(ids: number[]): Promise<Map<number, number>> {
    const rows: { id: number; n: number }[] = await this.projects.query(
      `SELECT project_id AS id, count(*)::int AS n FROM issues
        WHERE project_id = ANY($1) AND state IN ('opened', 'reopened') AND deleted_at IS NULL GROUP BY 1`,
      [ids],
    );
    return new Map(rows.map((r) => [r.id, r.n]));
  }

  /** Fork parents with the name of their namespace's owner (for `name_with_namespace`): one query. */
  async forkParents(ids: number[]): Promise<ForkParent[]> {
    const { entities, raw } = await this.withNamespace()
      .leftJoin(User, 'owner', `owner.id = n.owner_id AND n.kind = 'user'`)
      .addSelect('owner.name', 'owner_name')
      .where('p.id IN (:...ids)', { ids })
      .orderBy('p.id')
      .getRawAndEntities<{ p_id: number; owner_name: string | null }>();
    const ownerNames = new Map(raw.map((r) => [Number(r.p_id), r.owner_name]));
    return entities.map((project) => ({ project, ownerName: ownerNames.get(project.id) ?? null }));
  }

  // ---------------------------------------------------------------- namespaces a project goes to

  // ---------------------------------------------------------------- writes

  /** The projects limit of the namespace owner, its row locked until commit (null when the user is gone). */
  async lockOwnerLimit(tx: Tx, ownerId: number): Promise<number | null> {
    const rows: { projects_limit: number }[] = await tx.query(`SELECT projects_limit FROM users WHERE id = $1 FOR UPDATE`, [ownerId]);
    return rows.length ? rows[0].projects_limit : null;
  }

  async countInNamespace(tx: Tx, namespaceId: number): Promise<number> {
    const rows: { n: number }[] = await tx.query(`SELECT count(*)::int AS n FROM projects WHERE namespace_id = $1`, [namespaceId]);
    return rows[0].n;
  }

  /**
   * Whether the namespace still exists, and keeps it until commit (a group being deleted locks its
   * row; without this an insert would hit the foreign key and answer 500).
   */
  async holdNamespace(tx: Tx, namespaceId: number): Promise<boolean> {
    const rows: unknown[] = await tx.query(`SELECT id FROM namespaces WHERE id = $1 FOR KEY SHARE`, [namespaceId]);
    return rows.length > 0;
  }

  /** Which of `name` / `path` another project of the namespace already has (case-insensitive). */
  async clash(tx: Tx, namespaceId: number, name: string | null, path: string | null, exceptId = 0) {
    const rows: { name: boolean | null; path: boolean | null }[] = await tx.query(
      `SELECT bool_or(lower(name) = lower($2)) AS name, bool_or(lower(path) = lower($3)) AS path
         FROM projects WHERE namespace_id = $1 AND id <> $4`,
      [namespaceId, name, path, exceptId],
    );
    return { name: !!rows[0]?.name, path: !!rows[0]?.path };
  }

  insert(tx: Tx, values: Partial<Project>): Promise<Project> {
    const repo = this.repo(tx);
    return repo.save(repo.create(values));
  }

  async update(id: number, changes: Partial<Project>, tx?: Tx): Promise<void> {
    if (Object.keys(changes).length) await this.repo(tx).update({ id }, changes);
  }

  /**
   * A fork source's visibility, its row share-locked until the transaction ends: a concurrent change
   * of the source's visibility (which lowers its forks in its own transaction) waits, or is waited
   * for and seen. Null when the source is gone.
   */
  async lockVisibility(tx: Tx, projectId: number): Promise<number | null> {
    const rows: { level: number }[] = await tx.query(`SELECT visibility_level AS level FROM projects WHERE id = $1 FOR SHARE`, [projectId]);
    return rows.length ? rows[0].level : null;
  }

  /** Lowers every fork of the project, and their forks, that is more visible than `level` to `level`; their ids. */
  async lowerForksVisibility(tx: Tx, projectId: number, level: number): Promise<number[]> {
    const [rows] = await tx.query<[{ id: number }[], number]>(
      `WITH RECURSIVE forks(id) AS (
         SELECT id FROM projects WHERE forked_from_project_id = $1
         UNION
         SELECT p.id FROM projects p JOIN forks f ON p.forked_from_project_id = f.id
       )
       UPDATE projects SET visibility_level = $2, updated_at = now()
        WHERE id IN (SELECT id FROM forks) AND visibility_level > $2
       RETURNING id`,
      [projectId, level],
    );
    return rows.map((r) => r.id);
  }

  /** Stars the project for the user; false when it already was. */
  async star(tx: Tx, userId: number, projectId: number): Promise<boolean> {
    const r: unknown[] = await tx.query(`INSERT INTO users_star_projects (user_id, project_id) VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING id`, [
      userId,
      projectId,
    ]);
    if (r.length) await tx.query(`UPDATE projects SET star_count = star_count + 1 WHERE id = $1`, [projectId]);
    return r.length > 0;
  }

  /** Unstars; false when it was not starred. */
  async unstar(tx: Tx, userId: number, projectId: number): Promise<boolean> {
    const [rows] = await tx.query<[unknown[], number]>(`DELETE FROM users_star_projects WHERE user_id = $1 AND project_id = $2 RETURNING id`, [
      userId,
      projectId,
    ]);
    if (rows.length) await tx.query(`UPDATE projects SET star_count = greatest(star_count - 1, 0) WHERE id = $1`, [projectId]);
    return rows.length > 0;
  }

  /** Deletes every project of a namespace (members, stars, events go by cascade); their ids. */
  async deleteInNamespace(tx: Tx, namespaceId: number): Promise<number[]> {
    // DELETE answers [rows, affected] through TypeORM's postgres driver
    const [rows] = await tx.query<[{ id: number }[], number]>(`DELETE FROM projects WHERE namespace_id = $1 RETURNING id`, [namespaceId]);
    return rows.map((r) => r.id);
  }

  async delete(id: number, tx?: Tx): Promise<void> {
    await this.repo(tx).delete({ id });
  }

  /** Whether the namespace has a project with this path or name (case-insensitive). */
  async takenInNamespace(tx: Tx, namespaceId: number, path: string, name: string): Promise<boolean> {
    const rows: { n: number }[] = await tx.query(
      `SELECT count(*)::int AS n FROM projects WHERE namespace_id = $1 AND (lower(path) = lower($2) OR lower(name) = lower($3))`,
      [namespaceId, path, name],
    );
    return rows[0].n > 0;
  }
}
