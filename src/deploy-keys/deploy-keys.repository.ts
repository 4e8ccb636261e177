import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { Tx } from '../database/transactions';
import { rowsOf } from '../database/query-rows';
import { DEPLOY_KEY } from '../users/key.entity';
import { DeployKeysProject } from './deploy-keys-project.entity';

/** A deploy key as the API and git access read it (the `keys` row, joined in the statement). */
export interface DeployKeyRow {
  id: number;
  title: string;
  key: string;
  fingerprint: string;
  canPush: boolean;
  createdAt: Date;
}

interface KeyRow {
  id: number;
  title: string;
  key: string;
  fingerprint: string;
  can_push: boolean;
  created_at: Date;
}

const COLUMNS = 'k.id, k.title, k.key, k.fingerprint, k.can_push, k.created_at';
const toRow = (r: KeyRow): DeployKeyRow => ({
  id: r.id,
  title: r.title,
  key: r.key,
  fingerprint: r.fingerprint,
  canPush: r.can_push,
  createdAt: r.created_at,
});

/**
 * Every query on `deploy_keys_projects`, and the reads of deploy keys (rows of `keys`, owned by users/,
 * joined here in one statement; their writes go through KeysService).
 */
@Injectable()
export class DeployKeysRepository {
  constructor(@InjectRepository(DeployKeysProject) private readonly links: Repository<DeployKeysProject>) {}

  private async keys(sql: string, params: unknown[], tx?: Tx): Promise<DeployKeyRow[]> {
    const run = tx ? tx.query.bind(tx) : this.links.query.bind(this.links);
    return rowsOf<KeyRow>(await run(sql, params)).map(toRow);
  }

  /** Every deploy key of the instance (`GET /deploy_keys`). */
  all(): Promise<DeployKeyRow[]> {
    return this.keys(`SELECT ${COLUMNS} FROM keys k WHERE k.type = $1 ORDER BY k.id`, [DEPLOY_KEY]);
  }

  /** The deploy keys enabled on a project, in the order they were enabled. */
  ofProject(projectId: number): Promise<DeployKeyRow[]> {
    return this.keys(`SELECT ${COLUMNS} FROM deploy_keys_projects dp JOIN keys k ON k.id = dp.deploy_key_id WHERE dp.project_id = $1 ORDER BY dp.id`, [
      projectId,
    ]);
  }

  /** A deploy key enabled on a project, by the key's id or its fingerprint. */
  async inProject(projectId: number, by: { id: number } | { fingerprint: string }, tx?: Tx): Promise<DeployKeyRow | undefined> {
    const [column, value] = 'id' in by ? ['k.id', by.id] : ['k.fingerprint', by.fingerprint];
    const rows = await this.keys(
      `SELECT ${COLUMNS} FROM deploy_keys_projects dp JOIN keys k ON k.id = dp.deploy_key_id WHERE dp.project_id = $1 AND ${column} = $2`,
      [projectId, value],
      tx,
    );
    return rows[0];
  }

  /**
   * A deploy key `userId` may enable elsewhere (GitLab 8.17's `accessible_deploy_keys`: a key enabled on
   * a project the user is a member of; any deploy key for an administrator), by id or fingerprint.
   */
  async accessible(user: { id: number; admin: boolean }, by: { id: number } | { fingerprint: string }, tx?: Tx): Promise<DeployKeyRow | undefined> {
    const [column, value] = 'id' in by ? ['k.id', by.id] : ['k.fingerprint', by.fingerprint];
    const rows = await this.keys(
      `SELECT ${COLUMNS} FROM keys k
        WHERE k.type = $1 AND ${column} = $2
          AND ($3 OR EXISTS (SELECT 1 FROM deploy_keys_projects dp
                               JOIN project_authorizations pa ON pa.project_id = dp.project_id AND pa.user_id = $4
                              WHERE dp.deploy_key_id = k.id))`,
      [DEPLOY_KEY, value, user.admin, user.id],
      tx,
    );
    return rows[0];
  }

  /** Enables a key on a project (nothing when it already is). */
  async enable(tx: Tx, deployKeyId: number, projectId: number): Promise<void> {
    await tx.query(`INSERT INTO deploy_keys_projects (deploy_key_id, project_id) VALUES ($1, $2) ON CONFLICT (project_id, deploy_key_id) DO NOTHING`, [
      deployKeyId,
      projectId,
    ]);
  }

  /** Disables a key on a project: the link removed, or undefined when it was not enabled there. */
  async disable(tx: Tx, deployKeyId: number, projectId: number): Promise<DeployKeysProject | undefined> {
    const rows = rowsOf<{ id: number; deploy_key_id: number; project_id: number; created_at: Date; updated_at: Date }>(
      await tx.query(
        `DELETE FROM deploy_keys_projects WHERE deploy_key_id = $1 AND project_id = $2 RETURNING id, deploy_key_id, project_id, created_at, updated_at`,
        [deployKeyId, projectId],
      ),
    );
    const r = rows[0];
    if (!r) return undefined;
    return Object.assign(new DeployKeysProject(), {
      id: r.id,
      deployKeyId: r.deploy_key_id,
      projectId: r.project_id,
      createdAt: r.created_at,
      updatedAt: r.updated_at,
    });
  }

  /** Whether a deploy key is still enabled on any project (a key enabled nowhere is removed, as 8.17's orphans). */
  async enabledAnywhere(tx: Tx, deployKeyId: number): Promise<boolean> {
    return rowsOf<{ one: number }>(await tx.query(`SELECT 1 AS one FROM deploy_keys_projects WHERE deploy_key_id = $1 LIMIT 1`, [deployKeyId])).length > 0;
  }

  /** Git access: the key's write access when it is enabled on the project, else undefined (one statement). */
  async access(deployKeyId: number, projectId: number): Promise<{ canPush: boolean } | undefined> {
    const rows = rowsOf<{ can_push: boolean }>(
      await this.links.query(
        `SELECT k.can_push FROM deploy_keys_projects dp JOIN keys k ON k.id = dp.deploy_key_id AND k.type = $3
          WHERE dp.deploy_key_id = $1 AND dp.project_id = $2`,
        [deployKeyId, projectId, DEPLOY_KEY],
      ),
    );
    return rows[0] && { canPush: rows[0].can_push };
  }

  /** Of `projectIds`, those the key is still enabled on (the SSH server's re-check of running transfers). */
  async enabledOn(deployKeyId: number, projectIds: number[]): Promise<Set<number>> {
    if (projectIds.length === 0) return new Set();
    const rows = rowsOf<{ project_id: number }>(
      await this.links.query(`SELECT project_id FROM deploy_keys_projects WHERE deploy_key_id = $1 AND project_id = ANY($2::int[])`, [deployKeyId, projectIds]),
    );
    return new Set(rows.map((r) => r.project_id));
  }
}
