import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, Repository } from 'typeorm';
import type { BuildAttributes, JobOptions, When, YamlVariable } from '../pipelines/ci-config';
import { rowsOf } from '../../database/query-rows';
import { BuildDetails, BuildStatus } from './build.entity';
import type { Caller } from '../../common/caller/caller';

/** A build as the CI areas read it: its commit status row, its `ci_builds` row, and what the runner payload needs. */
export interface BuildRow {
  id: number;
  projectId: number;
  pipelineId: number;
  pipelineStatus: string | null;
  sha: string;
  beforeSha: string | null;
  ref: string;
  tag: boolean;
  name: string;
  stage: string;
  stageIdx: number;
  status: BuildStatus;
  allowFailure: boolean;
  commands: string;
  options: JobOptions;
  yamlVariables: YamlVariable[];
  tagList: string[];
  when: When;
  runnerId: number | null;
  tokenDigest: string | null;
  tokenEncrypted: string | null;
  triggerRequestId: number | null;
  userId: number | null;
  coverage: number | null;
  /** The job's `environment` name as written (unexpanded), 8.17's `ci_builds.environment`. */
  environment: string | null;
  /** The job's `coverage` regex source (8.17's `ci_builds.coverage_regex`). */
  coverageRegex: string | null;
  /** The project's `build_coverage_regex`, used when the job has none (8.8's project setting). */
  projectCoverageRegex: string | null;
  traceSize: number;
  artifactsFile: string | null;
  artifactsSize: number | null;
  artifactsExpireAt: Date | null;
  erasedAt: Date | null;
  startedAt: Date | null;
  finishedAt: Date | null;
  createdAt: Date;
  projectName: string;
  projectPath: string;
  projectRunnersTokenDigest: string;
  buildTimeout: number;
  allowGitFetch: boolean;
}

const SELECT_BUILD = `
  SELECT s.id, b.project_id AS "projectId", b.pipeline_id AS "pipelineId", pl.status AS "pipelineStatus", s.sha, pl.before_sha AS "beforeSha",
         s.ref, b.tag, s.name, s.stage, b.stage_idx AS "stageIdx", s.status, s.allow_failure AS "allowFailure",
         b.commands, b.options, b.yaml_variables AS "yamlVariables", b.tag_list AS "tagList", b."when",
         b.runner_id AS "runnerId", b.token_digest AS "tokenDigest", b.token_encrypted AS "tokenEncrypted",
         b.trigger_request_id AS "triggerRequestId", b.user_id AS "userId", b.coverage,
         b.environment, b.coverage_regex AS "coverageRegex", p.build_coverage_regex AS "projectCoverageRegex",
         b.trace_size::float8 AS "traceSize", b.artifacts_file AS "artifactsFile",
         b.artifacts_size::float8 AS "artifactsSize", b.artifacts_expire_at AS "artifactsExpireAt",
         b.erased_at AS "erasedAt", s.started_at AS "startedAt", s.finished_at AS "finishedAt", s.created_at AS "createdAt",
         p.name AS "projectName", n.path || '/' || p.path AS "projectPath",
         p.runners_token_digest AS "projectRunnersTokenDigest", p.build_timeout AS "buildTimeout",
         p.build_allow_git_fetch AS "allowGitFetch"
  FROM ci_builds b
  JOIN commit_statuses s ON s.id = b.id
  JOIN ci_pipelines pl ON pl.id = b.pipeline_id
  JOIN projects p ON p.id = b.project_id
  JOIN namespaces n ON n.id = p.namespace_id`;

/** A build of a pipeline as stage processing reads it. */
export interface PipelineBuild {
  id: number;
  name: string;
  status: BuildStatus;
  allowFailure: boolean;
  stageIdx: number;
  when: When;
}

/** A runner as a build names it. */
export interface RunnerSummary {
  id: number;
  description: string | null;
  active: boolean;
  isShared: boolean;
  name: string | null;
}

/** A build with the runner that took it (read in the build's statement) and the user who started it. */
export interface BuildWithPeople {
  build: BuildRow;
  user?: Caller;
  runner?: RunnerSummary;
}

const RUNNER_COLUMNS = `r.id AS "runner.id", r.description AS "runner.description", r.active AS "runner.active",
  r.is_shared AS "runner.isShared", r.name AS "runner.name"`;

/** The number of a project's builds (`$1`), and of those in some statuses (`$2`). */
const COUNT_BUILDS = `SELECT count(*) FROM ci_builds cb WHERE cb.project_id = $1`;
const COUNT_BUILDS_WITH_STATUS = `SELECT count(*) FROM ci_builds cb JOIN commit_statuses cs ON cs.id = cb.id
  WHERE cb.project_id = $1 AND cs.status = ANY($2::varchar[])`;

/** Who may claim what: a shared runner (projects with shared runners) or a specific one (its projects). */
export interface Claimer {
  runnerId: number;
  isShared: boolean;
  tagList: string[];
  runUntagged: boolean;
}

/** All SQL of builds. */
@Injectable()
export class BuildsRepository {
  private withPeopleSelect?: string;

  constructor(@InjectRepository(BuildDetails) private readonly builds: Repository<BuildDetails>) {}

  private q<T>(sql: string, params: unknown[], m?: EntityManager): Promise<T[]> {
    return (m ?? this.builds.manager).query(sql, params).then((r) => rowsOf<T>(r));
  }

  /** SELECT_BUILD with the build's runner (`runner.*`) joined in (its user is read in one batch by the caller). */
  private get selectWithPeople(): string {
    this.withPeopleSelect ??= `${SELECT_BUILD.replace('\n  FROM ci_builds b', `, ${RUNNER_COLUMNS}\n  FROM ci_builds b`)}
  LEFT JOIN ci_runners r ON r.id = b.runner_id`;
    return this.withPeopleSelect;
  }

  /** A row read with selectWithPeople, split into the build and its runner. */
  private withPeople(row: Record<string, unknown>): BuildWithPeople {
    const build: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(row)) if (!k.startsWith('runner.') && k !== 'total') build[k] = v;
    const runner =
      row['runner.id'] === null || row['runner.id'] === undefined
        ? undefined
        : {
            id: row['runner.id'] as number,
            description: row['runner.description'] as string | null,
            active: row['runner.active'] as boolean,
            isShared: row['runner.isShared'] as boolean,
            name: row['runner.name'] as string | null,
          };
    return { build: build as unknown as BuildRow, runner };
  }

  /** The build with its runner: one statement. */
  async findWithPeople(id: number): Promise<BuildWithPeople | undefined> {
    if (!Number.isSafeInteger(id) || id <= 0 || id > 2147483647) return undefined;
    const [row] = await this.q<Record<string, unknown>>(`${this.selectWithPeople} WHERE b.id = $1`, [id]);
    return row && this.withPeople(row);
  }

  /** Builds of a project by id, each with its runner: one statement (deployments show their builds). */
  async findManyWithPeople(projectId: number, ids: number[]): Promise<BuildWithPeople[]> {
    const wanted = ids.filter((id) => Number.isSafeInteger(id) && id > 0 && id <= 2147483647);
    if (wanted.length === 0) return [];
    const rows = await this.q<Record<string, unknown>>(`${this.selectWithPeople} WHERE b.project_id = $1 AND b.id = ANY($2::int[])`, [projectId, wanted]);
    return rows.map((r) => this.withPeople(r));
  }

  async find(id: number, m?: EntityManager): Promise<BuildRow | undefined> {
    if (!Number.isSafeInteger(id) || id <= 0 || id > 2147483647) return undefined;
    return (await this.q<BuildRow>(`${SELECT_BUILD} WHERE b.id = $1`, [id], m))[0];
  }

  /**
   * A page of a project's builds, id descending, optionally of some statuses; with the total. The
   * total is an uncorrelated sub-select (computed once, from the narrow tables alone) rather than a
   * window count, which would build every joined row of the project: 10,000 builds cost ~100× more.
   */
  async listByProject(projectId: number, statuses: string[] | undefined, page: { offset: number; perPage: number }): Promise<[BuildWithPeople[], number]> {
    const rows = await this.q<Record<string, unknown>>(
      `${this.selectWithPeople.replace('SELECT s.id,', `SELECT (${statuses ? COUNT_BUILDS_WITH_STATUS : COUNT_BUILDS}) AS total, s.id,`)}
       WHERE b.project_id = $1 AND ($2::varchar[] IS NULL OR s.status = ANY($2::varchar[]))
       ORDER BY s.id DESC OFFSET $3 LIMIT $4`,
      [projectId, statuses ?? null, page.offset, page.perPage],
    );
    if (rows.length === 0 && page.offset > 0) {
      const [{ n }] = await this.q<{ n: string }>(
        `SELECT count(*) AS n FROM ci_builds b JOIN commit_statuses s ON s.id = b.id
         WHERE b.project_id = $1 AND ($2::varchar[] IS NULL OR s.status = ANY($2::varchar[]))`,
        [projectId, statuses ?? null],
      );
      return [[], Number(n)];
    }
    return [rows.map((r) => this.withPeople(r)), rows.length ? Number(rows[0].total) : 0];
  }

  /**
   * A page of the builds of a commit (`sha`) of the project, id descending, with the total: one
   * statement, whatever the page (past the end too).
   */
  async listBySha(
    projectId: number,
    sha: string,
    statuses: string[] | undefined,
    page: { offset: number; perPage: number },
  ): Promise<{ items: BuildWithPeople[]; total: number }> {
    const where = `b.project_id = $1 AND s.sha = $2 AND ($3::varchar[] IS NULL OR s.status = ANY($3::varchar[]))`;
    const rows = await this.q<Record<string, unknown> & { total: string }>(
      `SELECT h.total, page.*
         FROM (SELECT count(*) FROM ci_builds b JOIN commit_statuses s ON s.id = b.id WHERE ${where}) h (total)
         LEFT JOIN LATERAL (${this.selectWithPeople} WHERE ${where} ORDER BY s.id DESC OFFSET $4 LIMIT $5) page ON TRUE
        ORDER BY page.id DESC`,
      [projectId, sha, statuses ?? null, page.offset, page.perPage],
    );
    const [first] = rows;
    return {
      items: rows.filter((r) => r.id !== null).map((r) => this.withPeople(r)),
      total: Number(first.total),
    };
  }

  /** Erases trace and artifacts (the files are removed by the caller). */
  async erase(id: number, userId: number): Promise<void> {
    await this.q(
      `UPDATE ci_builds SET trace_size = 0, artifacts_file = NULL, artifacts_size = NULL, artifacts_expire_at = NULL,
         erased_at = now(), erased_by_id = $2 WHERE id = $1`,
      [id, userId],
    );
  }

  async findByTokenDigest(digest: string): Promise<BuildRow | undefined> {
    return (await this.q<BuildRow>(`${SELECT_BUILD} WHERE b.token_digest = $1`, [digest]))[0];
  }

  /** Builds of a pipeline (every try), for stage processing. */
  pipelineBuilds(pipelineId: number, m?: EntityManager): Promise<PipelineBuild[]> {
    return this.q(
      `SELECT s.id, s.name, s.status, s.allow_failure AS "allowFailure", b.stage_idx AS "stageIdx", b."when"
       FROM ci_builds b JOIN commit_statuses s ON s.id = b.id WHERE b.pipeline_id = $1 ORDER BY s.id`,
      [pipelineId],
      m,
    );
  }

  /** The latest build of each name in earlier stages of the pipeline (`depends_on_builds`). */
  dependencies(build: BuildRow): Promise<BuildRow[]> {
    return this.q<BuildRow>(
      `${SELECT_BUILD}
       WHERE b.pipeline_id = $1 AND b.stage_idx < $2
         AND s.id = (SELECT max(s2.id) FROM commit_statuses s2 WHERE s2.pipeline_id = $1 AND s2.name = s.name)
       ORDER BY b.stage_idx, s.id`,
      [build.pipelineId, build.stageIdx],
    );
  }

  /**
   * The failed commit status of a pipeline whose `.gitlab-ci.yml` is invalid: the error is its
   * description (a generic status, `stage` external, no build). It belongs to the pipeline (removed
   * with it, e.g. by a trigger that created nothing; its times are the pipeline's).
   */
  async insertConfigErrorStatus(
    m: EntityManager,
    p: { id: number; projectId: number; sha: string; ref: string | null; yamlErrors: string | null; userId: number | null },
    name: string,
  ): Promise<void> {
    await this.q(
      `INSERT INTO commit_statuses (project_id, sha, ref, name, stage, status, description, allow_failure, author_id, started_at, finished_at, pipeline_id)
       VALUES ($1, $2, $3, $4, 'external', 'failed', $5, false, $6, now(), now(), $7)`,
      [p.projectId, p.sha, p.ref, name, p.yamlErrors, p.userId, p.id],
      m,
    );
  }

  /** Creates a build (its commit status row and its build row): `created` at a pipeline's creation, `pending` for a retry. */
  async insert(
    m: EntityManager,
    p: { projectId: number; pipelineId: number; sha: string; ref: string; tag: boolean; userId: number | null; triggerRequestId: number | null },
    a: BuildAttributes,
    status: 'created' | 'pending' = 'pending',
  ): Promise<number> {
    const rows = await this.q<{ id: number }>(
      `WITH s AS (
         INSERT INTO commit_statuses (project_id, sha, ref, name, stage, status, allow_failure, author_id, pipeline_id)
         VALUES ($1, $2, $3, $4, $5, $17, $6, $7, $8) RETURNING id)
       INSERT INTO ci_builds (id, pipeline_id, project_id, stage_idx, commands, options, yaml_variables, tag_list, "when", tag,
                              trigger_request_id, user_id, environment, coverage_regex)
       SELECT s.id, $8, $1, $9, $10, $11, $12, $13, $14, $15, $16, $7, $18, $19 FROM s RETURNING id`,
      [
        p.projectId,
        p.sha,
        p.ref,
        a.name,
        a.stage,
        a.allowFailure,
        p.userId,
        p.pipelineId,
        a.stageIdx,
        a.commands,
        JSON.stringify(a.options),
        JSON.stringify(a.yamlVariables),
        a.tagList,
        a.when,
        p.tag,
        p.triggerRequestId,
        status,
        a.environment ?? null,
        a.coverageRegex ?? null,
      ],
      m,
    );
    return rows[0].id;
  }

  /**
   * Creates the builds of a new pipeline, `created`, in two statements whatever their number (a
   * 200-job file costs no 200 round trips): the commit status rows, then the build rows joined to them
   * by name (job names are unique in a plan).
   */
  async insertCreated(
    m: EntityManager,
    p: { projectId: number; pipelineId: number; sha: string; ref: string; tag: boolean; userId: number | null; triggerRequestId: number | null },
    attrs: BuildAttributes[],
  ): Promise<number> {
    if (attrs.length === 0) return 0;
    const jobs = JSON.stringify(
      attrs.map((a, ord) => ({
        ord,
        name: a.name,
        stage: a.stage,
        allow_failure: a.allowFailure,
        stage_idx: a.stageIdx,
        commands: a.commands,
        options: a.options,
        yaml_variables: a.yamlVariables,
        tag_list: a.tagList,
        when: a.when,
        environment: a.environment ?? null,
        coverage_regex: a.coverageRegex ?? null,
      })),
    );
    const rows = await this.q<{ id: number }>(
      `WITH j AS (
         SELECT * FROM jsonb_to_recordset($8::jsonb) AS x (ord int, name text, stage text, allow_failure boolean, stage_idx int, commands text,
           options jsonb, yaml_variables jsonb, tag_list text[], "when" text, environment text, coverage_regex text)),
       s AS (
         INSERT INTO commit_statuses (project_id, sha, ref, name, stage, status, allow_failure, author_id, pipeline_id)
         SELECT $1, $2, $3, j.name, j.stage, 'created', j.allow_failure, $6, $4 FROM j ORDER BY j.ord RETURNING id, name)
       INSERT INTO ci_builds (id, pipeline_id, project_id, stage_idx, commands, options, yaml_variables, tag_list, "when", tag,
                              trigger_request_id, user_id, environment, coverage_regex)
       SELECT s.id, $4, $1, j.stage_idx, j.commands, j.options, j.yaml_variables, j.tag_list, j."when", $5, $7, $6, j.environment, j.coverage_regex
       FROM s JOIN j ON j.name = s.name RETURNING id`,
      [p.projectId, p.sha, p.ref, p.pipelineId, p.tag, p.userId, p.triggerRequestId, jobs],
      m,
    );
    return rows.length;
  }

  /**
   * Writes what stage processing decided (`created` builds → pending, skipped or manual), each only
   * from `created` (the pipeline's lock serialises processing; the guard keeps a write idempotent).
   */
  async setProcessed(m: EntityManager, changes: Map<number, BuildStatus>): Promise<void> {
    if (changes.size === 0) return;
    await this.q(
      `UPDATE commit_statuses s SET status = c.status, updated_at = now()
       FROM unnest($1::int[], $2::varchar[]) AS c (id, status) WHERE s.id = c.id AND s.status = 'created'`,
      [[...changes.keys()], [...changes.values()]],
      m,
    );
  }

  /** GitLab 8.17's `mark_as_processable_after_stage`: skipped builds of later stages go back to `created` (after a retry). */
  async markProcessableAfterStage(m: EntityManager, pipelineId: number, stageIdx: number): Promise<void> {
    await this.q(
      `UPDATE commit_statuses s SET status = 'created', updated_at = now() FROM ci_builds b
       WHERE b.id = s.id AND b.pipeline_id = $1 AND b.stage_idx > $2 AND s.status = 'skipped'`,
      [pipelineId, stageIdx],
      m,
    );
  }

  /** A manual action played (GitLab 8.17's `enqueue` then `update(user:)`): created, skipped or manual → pending, as `userId`'s. */
  async enqueueAs(m: EntityManager, id: number, userId: number): Promise<boolean> {
    const rows = await this.q<{ id: number }>(
      `WITH s AS (UPDATE commit_statuses SET status = 'pending', author_id = $2, updated_at = now()
                  WHERE id = $1 AND status IN ('created', 'skipped', 'manual') RETURNING id)
       UPDATE ci_builds b SET user_id = $2 FROM s WHERE b.id = s.id RETURNING b.id`,
      [id, userId],
      m,
    );
    return rows.length > 0;
  }

  /** Stores the coverage taken from the trace of a finished build. */
  async setCoverage(id: number, coverage: number | null, m?: EntityManager): Promise<void> {
    await this.q(`UPDATE ci_builds SET coverage = $2 WHERE id = $1`, [id, coverage], m);
  }

  /**
   * Claims the oldest pending build this runner may run, in one statement: the candidate row is
   * locked with `FOR UPDATE SKIP LOCKED`, so concurrent claimers never get the same build.
   */
  async claim(c: Claimer, tokenDigest: string, tokenEncrypted: string): Promise<number | undefined> {
    const rows = await this.q<{ id: number }>(
      `WITH c AS (
         SELECT s.id FROM commit_statuses s
         JOIN ci_builds b ON b.id = s.id
         JOIN projects p ON p.id = b.project_id
         WHERE s.status = 'pending' AND b.runner_id IS NULL AND p.builds_enabled
           AND (CASE WHEN $2::boolean THEN p.shared_runners_enabled
                ELSE EXISTS (SELECT 1 FROM ci_runner_projects rp WHERE rp.runner_id = $1 AND rp.project_id = b.project_id) END)
           AND b.tag_list <@ $3::text[]
           AND ($4::boolean OR cardinality(b.tag_list) > 0)
         ORDER BY s.id
         LIMIT 1
         FOR UPDATE OF s SKIP LOCKED),
       u AS (
         UPDATE commit_statuses s SET status = 'running', started_at = now(), updated_at = now()
         FROM c WHERE s.id = c.id RETURNING s.id)
       UPDATE ci_builds b SET runner_id = $1, token_digest = $5, token_encrypted = $6, trace_size = 0
       FROM u WHERE b.id = u.id RETURNING b.id`,
      [c.runnerId, c.isShared, c.tagList, c.runUntagged, tokenDigest, tokenEncrypted],
    );
    return rows[0]?.id;
  }

  /** Moves a build from one of `from` to `to` (the state machine's guard); false when it was not in `from`. */
  async transition(id: number, from: BuildStatus[], to: BuildStatus, m?: EntityManager): Promise<boolean> {
    const rows = await this.q<{ id: number }>(
      `UPDATE commit_statuses SET status = $2::varchar,
         started_at = CASE WHEN $2::varchar = 'running' THEN coalesce(started_at, now()) ELSE started_at END,
         finished_at = CASE WHEN $2::varchar IN ('success', 'failed', 'canceled') THEN now() ELSE finished_at END,
         updated_at = now()
       WHERE id = $1 AND status = ANY($3::varchar[]) RETURNING id`,
      [id, to, from],
      m,
    );
    return rows.length > 0;
  }

  /** Locks the build row (for trace writes) and returns its status and stored trace size. */
  async lockTrace(m: EntityManager, id: number): Promise<{ traceSize: number; status: BuildStatus } | undefined> {
    const rows = await this.q<{ traceSize: number; status: BuildStatus }>(
      `SELECT b.trace_size::float8 AS "traceSize", s.status FROM ci_builds b JOIN commit_statuses s ON s.id = b.id
       WHERE b.id = $1 FOR UPDATE OF b`,
      [id],
      m,
    );
    return rows[0];
  }

  async setTraceSize(id: number, size: number, m?: EntityManager): Promise<void> {
    await this.q(`UPDATE ci_builds SET trace_size = $2 WHERE id = $1`, [id, size], m);
  }

  async setArtifacts(id: number, file: string | null, size: number | null, expireAt: Date | null): Promise<void> {
    await this.q(`UPDATE ci_builds SET artifacts_file = $2, artifacts_size = $3, artifacts_expire_at = $4 WHERE id = $1`, [id, file, size, expireAt]);
  }

  /** Builds whose artifacts expired, oldest expiry first. */
  expiredArtifacts(limit: number): Promise<{ id: number; expireAt: Date }[]> {
    return this.q(
      `SELECT id, artifacts_expire_at AS "expireAt" FROM ci_builds
       WHERE artifacts_expire_at IS NOT NULL AND artifacts_expire_at <= now() ORDER BY artifacts_expire_at LIMIT $1`,
      [limit],
    );
  }

  /**
   * Clears the artifacts columns of a build whose artifacts expired at `expireAt` (still the same
   * upload: a newer one has another expiry); whether it did, so the caller removes the file.
   */
  async clearExpiredArtifacts(id: number, expireAt: Date): Promise<boolean> {
    const rows = await this.q<{ id: number }>(
      `UPDATE ci_builds SET artifacts_file = NULL, artifacts_size = NULL, artifacts_expire_at = NULL
       WHERE id = $1 AND date_trunc('milliseconds', artifacts_expire_at) = $2 RETURNING id`,
      [id, expireAt],
    );
    return rows.length === 1;
  }

  /** Builds waiting for a runner and builds running (metrics). */
  async activeCounts(): Promise<Record<'pending' | 'running', number>> {
    const rows = await this.q<{ status: 'pending' | 'running'; n: number }>(
      `SELECT s.status, count(*)::int AS n FROM commit_statuses s JOIN ci_builds b ON b.id = s.id
       WHERE s.status IN ('pending', 'running') GROUP BY s.status`,
      [],
    );
    const out = { pending: 0, running: 0 };
    for (const r of rows) out[r.status] = r.n;
    return out;
  }

  /** Running builds past their project's build timeout, locked for this sweeper. */
  timedOut(m: EntityManager, limit: number): Promise<{ id: number; pipelineId: number; buildTimeout: number }[]> {
    return this.q(
      `SELECT s.id, b.pipeline_id AS "pipelineId", p.build_timeout AS "buildTimeout"
       FROM commit_statuses s JOIN ci_builds b ON b.id = s.id JOIN projects p ON p.id = b.project_id
       WHERE s.status = 'running' AND s.started_at < now() - make_interval(secs => p.build_timeout)
       ORDER BY s.id LIMIT $1 FOR UPDATE OF s SKIP LOCKED`,
      [limit],
      m,
    );
  }

  /** Project secret variables (encrypted values) in creation order. */
  projectVariables(projectId: number): Promise<{ key: string; valueEncrypted: string }[]> {
    return this.q(`SELECT key, value_encrypted AS "valueEncrypted" FROM ci_variables WHERE project_id = $1 ORDER BY id`, [projectId]);
  }

  async triggerVariables(triggerRequestId: number): Promise<Record<string, string>> {
    const rows = await this.q<{ variables: Record<string, string> | null }>(`SELECT variables FROM ci_trigger_requests WHERE id = $1`, [triggerRequestId]);
    return rows[0]?.variables ?? {};
  }
}
