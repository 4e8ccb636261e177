import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, Repository } from 'typeorm';
import { rowsOf } from '../sql';
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
  constructor(@InjectRepository(Runner) private readonly runners: Repository<Runner>) {}

  /** The hot path of every runner call: one indexed lookup, plain SQL (no query builder per poll). */
  async byTokenDigest(digest: string): Promise<Runner | null> {
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
    return rows[0] ?? null;
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
    const rows = rowsOf<Record<string, unknown>>(await this.runners.query(
      `DELETE FROM ci_runners WHERE id = $1
       RETURNING id, created_at, updated_at, description, contacted_at, active, is_shared, name, version,
                 revision, platform, architecture, run_untagged`,
      [id],
    ));
    return rows[0];
  }

  /** `contacted_at` and the runner's self-description, rewritten only when they change or are a minute old. */
  async touch(runner: Runner, info: RunnerInfo): Promise<void> {
    // the row was just read: skip the round trip when nothing would change
    const fresh = runner.contactedAt && Date.now() - new Date(runner.contactedAt).getTime() < 60_000;
    const same = (['name', 'version', 'revision', 'platform', 'architecture'] as const).every(
      (k) => info[k] === undefined || info[k] === runner[k],
    );
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
  }

  /** The project whose runners token this is (digest lookup), with builds enabled or not. */
  async projectIdByRunnersTokenDigest(digest: string): Promise<number | undefined> {
    const rows: { id: number }[] = await this.runners.query(`SELECT id FROM projects WHERE runners_token_digest = $1`, [digest]);
    return rows[0]?.id;
  }

  async registrationToken(): Promise<{ digest: string | null; encrypted: string | null }> {
    const rows: { d: string | null; e: string | null }[] = await this.runners.query(
      `SELECT runners_registration_token_digest AS d, runners_registration_token_encrypted AS e
       FROM application_settings ORDER BY id LIMIT 1`,
    );
    return { digest: rows[0]?.d ?? null, encrypted: rows[0]?.e ?? null };
  }

  /** Sets the registration token unless one exists (concurrent first uses agree on one). */
  async setRegistrationTokenIfAbsent(digest: string, encrypted: string): Promise<void> {
    await this.runners.query(
      `UPDATE application_settings SET runners_registration_token_digest = $1, runners_registration_token_encrypted = $2
       WHERE id = (SELECT min(id) FROM application_settings) AND runners_registration_token_digest IS NULL`,
      [digest, encrypted],
    );
  }
}
