import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, Repository } from 'typeorm';
import { PageRequest } from '../../common/pagination/pagination';
import { rowsOf } from '../../database/query-rows';
import { Pipeline, PipelineStatus } from './pipeline.entity';

export interface PipelineFilter {
  statuses?: string[];
  ref?: string;
  latestOfRefs?: { tag: boolean; refs: string[] };
}

export interface CiProject {
  id: number;
  buildsEnabled: boolean;
  fullPath: string;
}

/**
 * GitLab 8.14's `coverage` of the pipeline `id` (an SQL expression): the mean of its latest builds'
 * coverage, `"%.2f"`, null when none has one.
 */
const coverageOf = (id: string) =>
  `(SELECT to_char(avg(b.coverage), 'FM999999990.00') FROM ci_builds b JOIN commit_statuses s ON s.id = b.id
    WHERE b.pipeline_id = ${id} AND b.coverage IS NOT NULL
      AND s.id = (SELECT max(s2.id) FROM commit_statuses s2 WHERE s2.pipeline_id = ${id} AND s2.name = s.name))`;

/** All SQL of pipelines. */
/** The raw columns of the pipelines page statement beside its entities: the id, the coverage and the window total. */
interface PipelinePageRow {
  p_id: number;
  pipeline_coverage: string | null;
  window_total: string;
}

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
    const rows = await this.q<{ sha: string }>(`SELECT DISTINCT sha FROM ci_pipelines WHERE project_id = $1 AND ref = $2 AND sha = ANY($3)`, [
      projectId,
      ref,
      shas,
    ]);
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

  /** The pipeline's later stages were created (see Pipeline.legacyStages). */
  async clearLegacyStages(m: EntityManager, id: number): Promise<void> {
    await this.q(`UPDATE ci_pipelines SET legacy_stages = false WHERE id = $1`, [id], m);
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

  /** A page of the project's pipelines, newest first, with the total (`GET /projects/:id/pipelines`). */
  async list(projectId: number, f: PipelineFilter, page: PageRequest): Promise<[Pipeline[], number, Map<number, string>]> {
    const qb = this.pipelines.createQueryBuilder('p').where('p.project_id = :projectId', { projectId });
    if (f.statuses) qb.andWhere('p.status IN (:...statuses)', { statuses: f.statuses });
    if (f.ref !== undefined) qb.andWhere('p.ref = :ref', { ref: f.ref });
    if (f.latestOfRefs) {
      // the latest pipeline of each existing branch (or tag): GitLab's PipelinesFinder branches/tags scopes
      qb.andWhere(`p.id IN (SELECT max(l.id) FROM ci_pipelines l WHERE l.project_id = :projectId AND l.tag = :tag AND l.ref = ANY(:refs) GROUP BY l.ref)`, {
        tag: f.latestOfRefs.tag,
        refs: f.latestOfRefs.refs,
      });
    }
    qb.orderBy('p.id', 'DESC').offset(page.offset).limit(page.perPage);
    // the page, its total (window count) and each pipeline's coverage in one statement
    const { entities, raw } = await qb
      .clone()
      .addSelect(coverageOf('p.id'), 'pipeline_coverage')
      .addSelect('count(*) OVER ()', 'window_total')
      .getRawAndEntities();
    if (!entities.length) return [[], page.offset ? await qb.clone().offset(undefined).limit(undefined).orderBy().getCount() : 0, new Map()];
    const rows = rowsOf<PipelinePageRow>(raw);
    const coverage = new Map<number, string>();
    for (const r of rows) if (r.pipeline_coverage !== null) coverage.set(Number(r.p_id), r.pipeline_coverage);
    return [entities, Number(rows[0].window_total), coverage];
  }

  /** The project's pipeline `id`, or null. */
  findInProject(projectId: number, id: number): Promise<Pipeline | null> {
    return this.pipelines.findOne({ where: { id, projectId } });
  }

  /**
   * GitLab 8.14's `coverage` of each pipeline: the mean of its latest builds' coverage, `"%.2f"`,
   * absent when none has one. One statement for a page.
   */
  async coverage(ids: number[]): Promise<Map<number, string>> {
    if (ids.length === 0) return new Map();
    const rows = await this.q<{ id: number; coverage: string | null }>(
      `SELECT p.id, ${coverageOf('p.id')} AS coverage FROM ci_pipelines p WHERE p.id = ANY($1)`,
      [ids],
    );
    return new Map(rows.filter((r) => r.coverage !== null).map((r) => [Number(r.id), r.coverage!]));
  }

  async remove(id: number): Promise<void> {
    await this.pipelines.delete({ id });
  }
}
