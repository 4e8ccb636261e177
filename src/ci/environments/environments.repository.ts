import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, Repository } from 'typeorm';
import { nextInternalId } from '../../database/internal-ids';
import { rowsOf } from '../../database/query-rows';
import type { UserState } from '../../users/user.entity';
import { Environment, EnvironmentState } from './environment.entities';

/** An environment as the API shows it. */
export interface EnvironmentRow {
  id: number;
  projectId: number;
  name: string;
  slug: string;
  externalUrl: string | null;
  state: EnvironmentState;
}

/** A deployment with its environment (8.17's `Deployment` entity shows `EnvironmentBasic`). */
export interface DeploymentRow {
  id: number;
  iid: number;
  projectId: number;
  ref: string;
  sha: string;
  createdAt: Date;
  userId: number | null;
  deployableId: number | null;
  environment: { id: number; name: string; slug: string; externalUrl: string | null };
  /** Who deployed (the build's user), as UserBasic shows them; null when unknown or deleted. */
  user: DeploymentUser | null;
}

/** The user columns a deployment shows (json: `createdAt` arrives as text). */
export interface DeploymentUser {
  id: number;
  username: string;
  name: string;
  state: UserState;
  email: string;
  createdAt: string;
}

/** An available environment whose last deployment was on a ref, with what stops it. */
export interface StoppableEnvironment {
  id: number;
  name: string;
  /** The last deployment's `on_stop` action name, if any. */
  onStop: string | null;
  /** The last deployment's build's pipeline, where its stop action is. */
  pipelineId: number | null;
  /** The last deployment's build's name (8.17's `other_actions` leave it out). */
  deployableName: string | null;
}

const ENV_COLUMNS = `e.id, e.project_id AS "projectId", e.name, e.slug, e.external_url AS "externalUrl", e.state`;

const DEPLOYMENT_SELECT = `
  SELECT d.id, d.iid, d.project_id AS "projectId", d.ref, d.sha, d.created_at AS "createdAt", d.user_id AS "userId",
         d.deployable_id AS "deployableId",
         json_build_object('id', e.id, 'name', e.name, 'slug', e.slug, 'externalUrl', e.external_url) AS environment,
         CASE WHEN u.id IS NULL THEN NULL ELSE json_build_object('id', u.id, 'username', u.username, 'name', u.name, 'state', u.state, 'email', u.email, 'createdAt', u.created_at) END AS "user"
  FROM deployments d
  JOIN environments e ON e.id = d.environment_id
  LEFT JOIN users u ON u.id = d.user_id`;

/** Every statement on `environments` and `deployments`. */
@Injectable()
export class EnvironmentsRepository {
  constructor(@InjectRepository(Environment) private readonly environments: Repository<Environment>) {}

  private q<T>(sql: string, params: unknown[], m?: EntityManager): Promise<T[]> {
    return (m ?? this.environments.manager).query(sql, params).then((r) => rowsOf<T>(r));
  }

  /**
   * A page of a project's environments, by id, with the total: one statement (the total a sub-select),
   * and a count of its own only for a page past the end.
   */
  async list(projectId: number, page: { offset: number; perPage: number }): Promise<[EnvironmentRow[], number]> {
    const rows = await this.q<EnvironmentRow & { total: number }>(
      `SELECT ${ENV_COLUMNS}, (SELECT count(*)::int FROM environments WHERE project_id = $1) AS total
       FROM environments e WHERE e.project_id = $1 ORDER BY e.id OFFSET $2 LIMIT $3`,
      [projectId, page.offset, page.perPage],
    );
    if (rows.length === 0) return [[], page.offset > 0 ? await this.count('environments', projectId) : 0];
    return [rows.map(({ total: _total, ...row }) => row), rows[0].total];
  }

  private async count(table: 'environments' | 'deployments', projectId: number): Promise<number> {
    const sql =
      table === 'environments'
        ? `SELECT count(*)::int AS n FROM environments WHERE project_id = $1`
        : `SELECT count(*)::int AS n FROM deployments WHERE project_id = $1`;
    return (await this.q<{ n: number }>(sql, [projectId]))[0].n;
  }

  async find(projectId: number, id: number, m?: EntityManager): Promise<EnvironmentRow | undefined> {
    if (!Number.isSafeInteger(id) || id <= 0 || id > 2147483647) return undefined;
    return (await this.q<EnvironmentRow>(`SELECT ${ENV_COLUMNS} FROM environments e WHERE e.project_id = $1 AND e.id = $2`, [projectId, id], m))[0];
  }

  async findByName(projectId: number, name: string, m?: EntityManager): Promise<EnvironmentRow | undefined> {
    return (await this.q<EnvironmentRow>(`SELECT ${ENV_COLUMNS} FROM environments e WHERE e.project_id = $1 AND e.name = $2`, [projectId, name], m))[0];
  }

  /** The environment, locked for the rest of the transaction (a deployment or a stop changes its state). */
  async lock(m: EntityManager, id: number): Promise<EnvironmentRow | undefined> {
    return (await this.q<EnvironmentRow>(`SELECT ${ENV_COLUMNS} FROM environments e WHERE e.id = $1 FOR UPDATE`, [id], m))[0];
  }

  /** Whether another environment of the project has this name / URL. */
  async taken(
    projectId: number,
    exceptId: number | null,
    name: string,
    externalUrl: string | null,
    m?: EntityManager,
  ): Promise<{ name: boolean; externalUrl: boolean }> {
    const [row] = await this.q<{ name: boolean; url: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM environments WHERE project_id = $1 AND id IS DISTINCT FROM $2 AND name = $3) AS name,
              EXISTS (SELECT 1 FROM environments WHERE project_id = $1 AND id IS DISTINCT FROM $2 AND external_url = $4) AS url`,
      [projectId, exceptId, name, externalUrl],
      m,
    );
    return { name: row.name, externalUrl: externalUrl !== null && row.url };
  }

  /** Inserts an environment; undefined when the project already has one of that name or slug (a concurrent create). */
  async insert(
    m: EntityManager,
    e: { projectId: number; name: string; slug: string; externalUrl: string | null; environmentType: string | null },
  ): Promise<EnvironmentRow | undefined> {
    const rows = await this.q<EnvironmentRow>(
      `INSERT INTO environments AS e (project_id, name, slug, external_url, environment_type) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT DO NOTHING RETURNING ${ENV_COLUMNS}`,
      [e.projectId, e.name, e.slug, e.externalUrl, e.environmentType],
      m,
    );
    return rows[0];
  }

  async update(m: EntityManager, id: number, e: { name: string; externalUrl: string | null; environmentType: string | null }): Promise<EnvironmentRow> {
    const rows = await this.q<EnvironmentRow>(
      `UPDATE environments e SET name = $2, external_url = $3, environment_type = $4, updated_at = now() WHERE e.id = $1 RETURNING ${ENV_COLUMNS}`,
      [id, e.name, e.externalUrl, e.environmentType],
      m,
    );
    return rows[0];
  }

  async setExternalUrl(m: EntityManager, id: number, externalUrl: string): Promise<void> {
    await this.q(`UPDATE environments SET external_url = $2, updated_at = now() WHERE id = $1`, [id, externalUrl], m);
  }

  async setState(m: EntityManager, id: number, state: EnvironmentState): Promise<void> {
    await this.q(`UPDATE environments SET state = $2, updated_at = now() WHERE id = $1`, [id, state], m);
  }

  /** Deletes the environment and (by cascade) its deployments. */
  async remove(m: EntityManager, id: number): Promise<void> {
    await this.q(`DELETE FROM environments WHERE id = $1`, [id], m);
  }

  /** A page of a project's deployments, by id, with their environments and users, and the total: one statement (as `list`). */
  async listDeployments(projectId: number, page: { offset: number; perPage: number }): Promise<[DeploymentRow[], number]> {
    const rows = await this.q<DeploymentRow & { total: number }>(
      `${DEPLOYMENT_SELECT.replace('SELECT d.id,', 'SELECT (SELECT count(*)::int FROM deployments WHERE project_id = $1) AS total, d.id,')}
       WHERE d.project_id = $1 ORDER BY d.id OFFSET $2 LIMIT $3`,
      [projectId, page.offset, page.perPage],
    );
    if (rows.length === 0) return [[], page.offset > 0 ? await this.count('deployments', projectId) : 0];
    return [rows.map(({ total: _total, ...row }) => row), rows[0].total];
  }

  async findDeployment(projectId: number, id: number): Promise<DeploymentRow | undefined> {
    if (!Number.isSafeInteger(id) || id <= 0 || id > 2147483647) return undefined;
    return (await this.q<DeploymentRow>(`${DEPLOYMENT_SELECT} WHERE d.project_id = $1 AND d.id = $2`, [projectId, id]))[0];
  }

  /** The builds of a pipeline that name an environment (read with the builds' table, in one statement). */
  async buildsWithEnvironment(pipelineId: number): Promise<number[]> {
    const rows = await this.q<{ id: number }>(`SELECT id FROM ci_builds WHERE pipeline_id = $1 AND environment IS NOT NULL ORDER BY id`, [pipelineId]);
    return rows.map((r) => r.id);
  }

  async deploymentOfBuild(buildId: number, m?: EntityManager): Promise<{ id: number } | undefined> {
    return (await this.q<{ id: number }>(`SELECT id FROM deployments WHERE deployable_id = $1`, [buildId], m))[0];
  }

  /** Records a deployment with the project's next iid. */
  async insertDeployment(
    m: EntityManager,
    d: { projectId: number; environmentId: number; ref: string; tag: boolean; sha: string; userId: number | null; buildId: number; onStop: string | null },
  ): Promise<{ id: number; iid: number }> {
    const iid = await nextInternalId(m, d.projectId, 'deployments');
    const [row] = await this.q<{ id: number; iid: number }>(
      `INSERT INTO deployments (iid, project_id, environment_id, ref, tag, sha, user_id, deployable_type, deployable_id, on_stop)
       VALUES ($1, $2, $3, $4, $5, $6, $7, 'CommitStatus', $8, $9) RETURNING id, iid`,
      [iid, d.projectId, d.environmentId, d.ref, d.tag, d.sha, d.userId, d.buildId, d.onStop],
      m,
    );
    return row;
  }

  /**
   * 8.17's EnvironmentsFinder with `ref` and `recently_updated`: the project's available environments
   * whose last deployment was on `ref`, with that deployment's stop action name and its build's pipeline.
   */
  async stoppableOnRef(projectId: number, ref: string): Promise<StoppableEnvironment[]> {
    return this.q<StoppableEnvironment>(
      `SELECT e.id, e.name, d.on_stop AS "onStop", b.pipeline_id AS "pipelineId", s.name AS "deployableName"
       FROM environments e
       JOIN LATERAL (SELECT * FROM deployments d WHERE d.environment_id = e.id ORDER BY d.id DESC LIMIT 1) d ON true
       LEFT JOIN ci_builds b ON b.id = d.deployable_id
       LEFT JOIN commit_statuses s ON s.id = d.deployable_id
       WHERE e.project_id = $1 AND e.state = 'available' AND d.ref = $2
       ORDER BY d.id`,
      [projectId, ref],
    );
  }

  /**
   * 8.17's `stop_action`: the latest manual action named `name` in the pipeline (its `other_actions`:
   * manual builds that are not `created`, except the deploying build's own name).
   */
  async stopAction(pipelineId: number, name: string, exceptName: string | null): Promise<{ id: number; status: string } | undefined> {
    const [row] = await this.q<{ id: number; status: string }>(
      `SELECT s.id, s.status FROM ci_builds b JOIN commit_statuses s ON s.id = b.id
       WHERE b.pipeline_id = $1 AND s.name = $2 AND s.name IS DISTINCT FROM $3 AND b."when" = 'manual' AND s.status <> 'created'
       ORDER BY s.id DESC LIMIT 1`,
      [pipelineId, name, exceptName],
    );
    return row;
  }
}
