import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, Repository } from 'typeorm';
import { rowsOf } from '../sql';
import { Pipeline, PipelineStatus } from './pipeline.entity';

export interface CiProject {
  id: number;
  buildsEnabled: boolean;
  fullPath: string;
}

/** All SQL of pipelines. */
@Injectable()
export class PipelinesRepository {
  constructor(@InjectRepository(Pipeline) private readonly pipelines: Repository<Pipeline>) {}

  private q<T>(sql: string, params: unknown[], m?: EntityManager): Promise<T[]> {
    return (m ?? this.pipelines.manager).query(sql, params).then((r) => rowsOf<T>(r));
  }

  async project(projectId: number): Promise<CiProject | undefined> {
    const rows = await this.q<CiProject>(
      `SELECT p.id, p.builds_enabled AS "buildsEnabled", n.path || '/' || p.path AS "fullPath"
       FROM projects p JOIN namespaces n ON n.id = p.namespace_id WHERE p.id = $1`,
      [projectId],
    );
    return rows[0];
  }

  /**
   * Projects with builds enabled and activity since `minutes` ago, each with the author of its
   * latest push (the pipelines a crash may have left uncreated are theirs).
   */
  async recentlyActive(minutes: number): Promise<{ id: number; pusherId: number | null }[]> {
    return this.q<{ id: number; pusherId: number | null }>(
      `SELECT p.id, (SELECT e.author_id FROM events e WHERE e.project_id = p.id AND e.action = 'pushed' ORDER BY e.id DESC LIMIT 1) AS "pusherId"
       FROM projects p WHERE p.builds_enabled AND p.last_activity_at > now() - make_interval(mins => $1)`,
      [minutes],
    );
  }

  /** Which of `shas` already have a pipeline for `ref` in the project. */
  async withPipeline(projectId: number, ref: string, shas: string[]): Promise<Set<string>> {
    const rows = await this.q<{ sha: string }>(
      `SELECT DISTINCT sha FROM ci_pipelines WHERE project_id = $1 AND ref = $2 AND sha = ANY($3)`,
      [projectId, ref, shas],
    );
    return new Set(rows.map((r) => r.sha));
  }

  async insert(m: EntityManager, p: Partial<Pipeline>): Promise<Pipeline> {
    const repo = m.getRepository(Pipeline);
    return repo.save(repo.create(p));
  }

  find(id: number): Promise<Pipeline | null> {
    return this.pipelines.findOne({ where: { id } });
  }

  /** Locks the pipeline row: stage processing of one pipeline runs one at a time, on every instance. */
  async lock(m: EntityManager, id: number): Promise<Pipeline | undefined> {
    return (await m.getRepository(Pipeline).createQueryBuilder('p').setLock('pessimistic_write').where('p.id = :id', { id }).getOne()) ?? undefined;
  }

  async setStatus(m: EntityManager, id: number, status: PipelineStatus | null): Promise<void> {
    await this.q(
      `UPDATE ci_pipelines SET status = $2::varchar, updated_at = now(),
         started_at = coalesce(started_at, (SELECT min(started_at) FROM commit_statuses WHERE pipeline_id = $1)),
         finished_at = CASE WHEN $2::varchar IN ('success', 'failed', 'canceled', 'skipped')
                            THEN (SELECT max(finished_at) FROM commit_statuses WHERE pipeline_id = $1) ELSE NULL END
       WHERE id = $1`,
      [id, status],
      m,
    );
  }

  async setYamlErrors(m: EntityManager, id: number, errors: string): Promise<void> {
    await this.q(`UPDATE ci_pipelines SET yaml_errors = $2 WHERE id = $1`, [id, errors], m);
  }

  async remove(id: number): Promise<void> {
    await this.pipelines.delete({ id });
  }
}
