import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { rowsOf } from '../../database/query-rows';
import { BuildDetails } from './build.entity';

/**
 * GitLab 8.17's latest successful pipeline of a ref (`Ci::Pipeline.latest_successful_for`): the newest
 * pipeline of `$1` (project) and `$2` (ref) whose status is `success`.
 */
const LATEST_SUCCESSFUL = `SELECT id FROM ci_pipelines WHERE project_id = $1 AND ref = $2 AND status = 'success' ORDER BY id DESC LIMIT 1`;

/** Whether the build `s` (a commit status) is the newest build of its name in its pipeline (8.17's `builds.latest`). */
const LATEST_OF_NAME = `s.id = (SELECT max(b2.id) FROM ci_builds b2 JOIN commit_statuses s2 ON s2.id = b2.id
  WHERE b2.pipeline_id = b.pipeline_id AND s2.name = s.name)`;

/** One statement each: the reads of a ref's builds (artifacts by ref, badges) and keeping artifacts. */
@Injectable()
export class BuildRefsRepository {
  constructor(@InjectRepository(BuildDetails) private readonly builds: Repository<BuildDetails>) {}

  private q<T>(sql: string, params: unknown[]): Promise<T[]> {
    return this.builds.manager.query(sql, params).then((r) => rowsOf<T>(r));
  }

  /**
   * The build named `job` of the ref's latest successful pipeline, if the newest build of that name
   * there has artifacts (8.17's `latest_successful_builds_for(ref).find_by!(name: job)`, whose builds
   * are `latest.with_artifacts`).
   */
  async latestSuccessfulWithArtifacts(projectId: number, ref: string, job: string): Promise<number | undefined> {
    const [row] = await this.q<{ id: number }>(
      `SELECT s.id FROM ci_builds b JOIN commit_statuses s ON s.id = b.id
       WHERE b.pipeline_id = (${LATEST_SUCCESSFUL}) AND s.name = $3 AND b.artifacts_file IS NOT NULL AND ${LATEST_OF_NAME}`,
      [projectId, ref, job],
    );
    return row?.id;
  }

  /** Artifacts kept: no expiry date any more (8.17's `keep_artifacts!`). */
  async keepArtifacts(id: number): Promise<void> {
    await this.q(`UPDATE ci_builds SET artifacts_expire_at = NULL WHERE id = $1`, [id]);
  }

  /**
   * The status of the newest pipeline of `ref` at `sha` (8.17's build badge: `pipelines.where(sha:)
   * .latest_status(ref)`), undefined when there is none.
   */
  async pipelineStatus(projectId: number, ref: string, sha: string): Promise<string | undefined> {
    const [row] = await this.q<{ status: string | null }>(
      `SELECT status FROM ci_pipelines WHERE project_id = $1 AND ref = $2 AND sha = $3 ORDER BY id DESC LIMIT 1`,
      [projectId, ref, sha],
    );
    return row?.status ?? undefined;
  }

  /**
   * The coverage of the ref's latest successful pipeline (8.17's coverage badge): with `job`, that of
   * its newest build of that name; without, the mean of its newest builds' coverage (`Pipeline#coverage`).
   * Undefined when there is no such pipeline, build or coverage.
   */
  async coverage(projectId: number, ref: string, job: string | undefined): Promise<number | undefined> {
    const [row] = await this.q<{ coverage: number | null }>(
      `SELECT avg(b.coverage)::float8 AS coverage FROM ci_builds b JOIN commit_statuses s ON s.id = b.id
       WHERE b.pipeline_id = (${LATEST_SUCCESSFUL}) AND b.coverage IS NOT NULL AND ($3::text IS NULL OR s.name = $3)
         AND ${LATEST_OF_NAME}`,
      [projectId, ref, job ?? null],
    );
    return row?.coverage ?? undefined;
  }
}
