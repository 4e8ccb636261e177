import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, Repository } from 'typeorm';
import { rowsOf } from '../../database/query-rows';
import { RunnerCache } from './runner-cache';
import { Runner, RunnerProject } from './runner.entity';

export interface RunnerInfo {
  name?: string;
  version?: string;
  revision?: string;
  platform?: string;
  architecture?: string;
}

/** All SQL of runners, their projects, and the instance's registration token. */
@Injectable()
export class RunnersRepository {
  constructor(
    @InjectRepository(Runner) private readonly runners: Repository<Runner>,
    private readonly cache: RunnerCache,
  ) {}

  /**
   * The hot path of every runner call: one indexed lookup, plain SQL (no query builder per poll),
   * through the runner cache (no statement at all while the row is unchanged).
   */
  async byTokenDigest(digest: string): Promise<Runner | null> {
    const runner = await this.cache.get(
      digest,
      () => this.loadByTokenDigest(digest),
      (r) => r.id,
      copyRunner,
    );
    return runner ?? null;
  }

  private async loadByTokenDigest(digest: string): Promise<Runner | undefined> {
    const rows = rowsOf<Runner>(
      await this.runners.query(
        `SELECT id, token_digest AS "tokenDigest", token_encrypted AS "tokenEncrypted", description,
                contacted_at AS "contactedAt", active, is_shared AS "isShared", name, version, revision, platform,
                architecture, run_untagged AS "runUntagged", tag_list AS "tagList", created_at AS "createdAt",
                updated_at AS "updatedAt"
         FROM ci_runners WHERE token_digest = $1`,
        [digest],
      ),
    );
    return rows[0];
  }

  async create(
    m: EntityManager,
    attrs: Pick<Runner, 'tokenDigest' | 'tokenEncrypted' | 'description' | 'isShared' | 'runUntagged' | 'tagList'> & RunnerInfo,
    projectId?: number,
  ): Promise<Runner> {
    const runner = await m.getRepository(Runner).save(m.getRepository(Runner).create({ active: true, ...attrs }));
    if (projectId !== undefined) await m.getRepository(RunnerProject).insert({ runnerId: runner.id, projectId });
    return runner;
  }

  /** Deletes the runner; returns its raw row (GitLab answers the destroyed record). */
  async delete(id: number): Promise<Record<string, unknown> | undefined> {
    const rows = rowsOf<Record<string, unknown>>(
      await this.runners.query(
        `DELETE FROM ci_runners WHERE id = $1
       RETURNING id, created_at, updated_at, description, contacted_at, active, is_shared, name, version,
                 revision, platform, architecture, run_untagged`,
        [id],
      ),
    );
    this.cache.forgetOwner(id); // at once here; every instance when the notification arrives
    return rows[0];
  }

  /** `contacted_at` and the runner's self-description, rewritten only when they change or are a minute old. */
  async touch(runner: Runner, info: RunnerInfo): Promise<void> {
    // the row was just read: skip the round trip when nothing would change
    const fresh = runner.contactedAt && Date.now() - new Date(runner.contactedAt).getTime() < 60_000;
    const same = (['name', 'version', 'revision', 'platform', 'architecture'] as const).every((k) => info[k] === undefined || info[k] === runner[k]);
    if (fresh && same) return;
    await this.runners.query(
      `UPDATE ci_runners SET contacted_at = now(),
         name = coalesce($2, name), version = coalesce($3, version), revision = coalesce($4, revision),
         platform = coalesce($5, platform), architecture = coalesce($6, architecture)
       WHERE id = $1 AND (contacted_at IS NULL OR contacted_at < now() - interval '60 seconds'
         OR name IS DISTINCT FROM coalesce($2, name) OR version IS DISTINCT FROM coalesce($3, version)
         OR revision IS DISTINCT FROM coalesce($4, revision) OR platform IS DISTINCT FROM coalesce($5, platform)
         OR architecture IS DISTINCT FROM coalesce($6, architecture))`,
      [runner.id, info.name ?? null, info.version ?? null, info.revision ?? null, info.platform ?? null, info.architecture ?? null],
    );
    this.cache.forgetOwner(runner.id); // the cached contact time is stale now, whether or not this row changed
  }

  /** The project whose runners token this is (digest lookup), with builds enabled or not. */
  async projectIdByRunnersTokenDigest(digest: string): Promise<number | undefined> {
    const rows: { id: number }[] = await this.runners.query(`SELECT id FROM projects WHERE runners_token_digest = $1`, [digest]);
    return rows[0]?.id;
  }

  /** A runner by id (same columns as the token lookup). */
  async byId(id: number): Promise<Runner | null> {
    const rows = rowsOf<Runner>(await this.runners.query(`${SELECT_RUNNER} WHERE r.id = $1`, [id]));
    return rows[0] ?? null;
  }

  /**
   * A page of runners, id descending. `ownerId`: only the specific runners of projects where that user is
   * master or owner; `scope`: active, paused, online (contacted in the last 5 minutes), specific, shared.
   */
  async list(ownerId: number | null, scope: string | undefined, page: { offset: number; perPage: number }): Promise<[Runner[], number]> {
    const where = `($1::int IS NULL OR (NOT r.is_shared AND ${OWNED('$1')}))
       AND ($2::varchar IS NULL
         OR ($2 = 'active' AND r.active) OR ($2 = 'paused' AND NOT r.active)
         OR ($2 = 'online' AND r.contacted_at > now() - interval '5 minutes')
         OR ($2 = 'specific' AND NOT r.is_shared) OR ($2 = 'shared' AND r.is_shared))`;
    return this.page(where, [ownerId, scope ?? null], page);
  }

  /** The specific runners of a project, plus every shared runner when `withShared`, id descending. */
  listForProject(projectId: number, withShared: boolean, page: { offset: number; perPage: number }): Promise<[Runner[], number]> {
    return this.page(
      `(($2::boolean AND r.is_shared) OR EXISTS (SELECT 1 FROM ci_runner_projects rp WHERE rp.runner_id = r.id AND rp.project_id = $1))`,
      [projectId, withShared],
      page,
    );
  }

  private async page(where: string, params: unknown[], page: { offset: number; perPage: number }): Promise<[Runner[], number]> {
    const n = params.length;
    const rows = rowsOf<Runner & { total: string }>(
      await this.runners.query(
        `${SELECT_RUNNER.replace('SELECT ', 'SELECT count(*) OVER () AS total, ')} WHERE ${where} ORDER BY r.id DESC OFFSET $${n + 1} LIMIT $${n + 2}`,
        [...params, page.offset, page.perPage],
      ),
    );
    if (rows.length === 0 && page.offset > 0) {
      const [{ c }] = rowsOf<{ c: string }>(await this.runners.query(`SELECT count(*) AS c FROM ci_runners r WHERE ${where}`, params));
      return [[], Number(c)];
    }
    return [rows, rows.length ? Number(rows[0].total) : 0];
  }

  /** Whether the user is master or owner of a project the runner is enabled in. */
  async ownedBy(runnerId: number, userId: number): Promise<boolean> {
    const rows: unknown[] = await this.runners.query(`SELECT 1 FROM ci_runners r WHERE r.id = $2 AND ${OWNED('$1')}`, [userId, runnerId]);
    return rows.length > 0;
  }

  /** The projects of a runner (only those the user is a member of, unless `userId` is null), id ascending. */
  projectsOf(runnerId: number, userId: number | null): Promise<RunnerProjectRow[]> {
    return this.runners.query(
      `SELECT p.id, p.name, p.path, n.path AS namespace_path,
              CASE WHEN n.kind = 'user' THEN coalesce(u.name, n.name) ELSE n.name END AS namespace_name
       FROM ci_runner_projects rp JOIN projects p ON p.id = rp.project_id JOIN namespaces n ON n.id = p.namespace_id
       LEFT JOIN users u ON n.kind = 'user' AND u.id = n.owner_id
       WHERE rp.runner_id = $1 AND ($2::int IS NULL OR ${MEMBER('$2', 0)})
       ORDER BY p.id`,
      [runnerId, userId],
    );
  }

  async projectCount(runnerId: number): Promise<number> {
    const [{ c }]: { c: string }[] = await this.runners.query(`SELECT count(*) AS c FROM ci_runner_projects WHERE runner_id = $1`, [runnerId]);
    return Number(c);
  }

  async isEnabled(runnerId: number, projectId: number): Promise<boolean> {
    const rows: unknown[] = await this.runners.query(`SELECT 1 FROM ci_runner_projects WHERE runner_id = $1 AND project_id = $2`, [runnerId, projectId]);
    return rows.length > 0;
  }

  /** Enables the runner in the project (a no-op when it already is). */
  async enable(runnerId: number, projectId: number): Promise<void> {
    await this.runners.query(
      `INSERT INTO ci_runner_projects (runner_id, project_id)
       SELECT $1, $2 WHERE NOT EXISTS (SELECT 1 FROM ci_runner_projects WHERE runner_id = $1 AND project_id = $2)`,
      [runnerId, projectId],
    );
  }

  async disable(runnerId: number, projectId: number): Promise<void> {
    await this.runners.query(`DELETE FROM ci_runner_projects WHERE runner_id = $1 AND project_id = $2`, [runnerId, projectId]);
  }

  async update(id: number, f: { description?: string; active?: boolean; tagList?: string[]; runUntagged?: boolean }): Promise<void> {
    await this.runners.query(
      `UPDATE ci_runners SET description = coalesce($2, description), active = coalesce($3, active),
         tag_list = coalesce($4::text[], tag_list), run_untagged = coalesce($5, run_untagged), updated_at = now()
       WHERE id = $1`,
      [id, f.description ?? null, f.active ?? null, f.tagList ?? null, f.runUntagged ?? null],
    );
    this.cache.forgetOwner(id);
  }
}

export interface RunnerProjectRow {
  id: number;
  name: string;
  path: string;
  namespace_path: string;
  namespace_name: string;
}

const SELECT_RUNNER = `SELECT r.id, r.token_digest AS "tokenDigest", r.token_encrypted AS "tokenEncrypted", r.description,
  r.contacted_at AS "contactedAt", r.active, r.is_shared AS "isShared", r.name, r.version, r.revision, r.platform,
  r.architecture, r.run_untagged AS "runUntagged", r.tag_list AS "tagList", r.created_at AS "createdAt",
  r.updated_at AS "updatedAt" FROM ci_runners r`;

/** The user (parameter `u`) has at least `level` on project `p` (member, group member, or namespace owner). */
const MEMBER = (u: string, level: number) => `(
  EXISTS (SELECT 1 FROM namespaces n2 WHERE n2.id = p.namespace_id AND n2.kind = 'user' AND n2.owner_id = ${u})
  OR EXISTS (SELECT 1 FROM project_members pm WHERE pm.project_id = p.id AND pm.user_id = ${u} AND pm.access_level >= ${level})
  OR EXISTS (SELECT 1 FROM group_members gm WHERE gm.namespace_id = p.namespace_id AND gm.user_id = ${u} AND gm.access_level >= ${level}))`;

/** Runner `r` is enabled in a project where the user (parameter `u`) is master or owner. */
const OWNED = (u: string) => `EXISTS (SELECT 1 FROM ci_runner_projects rpo JOIN projects p ON p.id = rpo.project_id
  WHERE rpo.runner_id = r.id AND ${MEMBER(u, 40)})`;

/** Each caller gets its own copy of a cached runner (its tag list included). */
function copyRunner(r: Runner): Runner {
  return Object.assign(Object.create(Object.getPrototypeOf(r) as object) as Runner, r, { tagList: r.tagList ? [...r.tagList] : r.tagList });
}
