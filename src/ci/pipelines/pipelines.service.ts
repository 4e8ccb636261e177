import { parseRepoPath, parseSha, RepoPath } from '../../git/names';
import { Injectable, OnApplicationBootstrap, OnModuleInit } from '@nestjs/common';
import { Transactions } from '../../database/transactions';
import { EntityManager } from 'typeorm';
import { Logger } from '../../common/logging/logger';
import { NotFound, ValidationFailed } from '../../common/errors/domain-errors';
import { DomainEvents, OnDomainEvent, PushReceived } from '../../domain-events/domain-events';
import { GitService } from '../../git/git.service';
import { QueueService } from '../../queue/queue.service';
import { BUILD_FINISHED_QUEUE, BuildFinishedJob, Finished } from '../builds/builds.service';
import { ZERO_SHA } from '../../git/objects';
import { BuildRow, BuildsService } from '../builds/builds.service';
import { CiConfigError, CiPlan } from './ci-config';
import { CiConfigBudgetError, CiConfigWorkers } from './ci-config-workers';
import { Pipeline } from './pipeline.entity';
import { combinedStatus, latestByName, processPipeline } from './pipeline-status';
import { CiProject, PipelinesRepository } from './pipelines.repository';

export const CI_CONFIG_FILE = parseRepoPath('.gitlab-ci.yml') as RepoPath;
/** GitLab 8.17's `skip_ci?`: `[ci skip]` or `[skip ci]` in the commit message, in any case. */
export const SKIP_CI = /\[(ci skip|skip ci)\]/i;

export interface NewPipeline {
  projectId: number;
  sha: string;
  beforeSha: string;
  ref: string;
  tag: boolean;
  userId: number | null;
  triggerRequestId?: number | null;
}

export interface CreateOptions {
  /** `POST /projects/:id/pipeline` (GitLab 8.14's `ignore_skip_ci`): `[ci skip]` in the message is ignored. */
  ignoreSkipCi?: boolean;
  /** A valid file whose jobs yield no build for the ref: nothing is saved, `400 {base: [No builds for this pipeline.]}`. */
  requireBuilds?: boolean;
  /** An API request: 503 when the `.gitlab-ci.yml` workers have a long queue, rather than waiting in it. */
  interactive?: boolean;
}

/** The name of the failed commit status that carries an invalid `.gitlab-ci.yml`'s error. */
export const CI_CONFIG_STATUS_NAME = 'gitlab-ci.yml';

/**
 * Pipelines from `.gitlab-ci.yml` (GitLab 8.8's `Ci::Commit` + `CreateBuildsService`): one per pushed
 * branch or tag, its first stage created at once, each later stage when the earlier ones end.
 */
@Injectable()
export class PipelinesService implements OnModuleInit, OnApplicationBootstrap {
  constructor(
    private readonly pipelines: PipelinesRepository,
    private readonly builds: BuildsService,
    private readonly git: GitService,
    private readonly tx: Transactions,
    private readonly domainEvents: DomainEvents,
    private readonly queue: QueueService,
    private readonly logger: Logger,
    private readonly ciConfig: CiConfigWorkers,
  ) {}

  onModuleInit(): void {
    // a build ended and the in-process step below did not happen (a crash in between): a worker does it
    this.queue
      .register<BuildFinishedJob>(BUILD_FINISHED_QUEUE, {
        handler: (job) => this.buildFinished({ ...job.data, job: null }),
        retryLimit: 5,
        retryDelay: 10,
        retryBackoff: true,
      })
      .catch((e) => this.logger.error('build-finished queue setup failed', { error: e instanceof Error ? e.message : String(e) }));
  }

  /**
   * At boot: the pipeline of a push follows the ref update in-process, so a crash in between leaves
   * a branch tip without its pipeline. The branch tips of projects active in the last hour that have
   * none get theirs (`create` still skips a tip without `.gitlab-ci.yml`).
   */
  onApplicationBootstrap(): void {
    void this.reconcile(60).catch((e: unknown) => this.logger.error('pipeline reconciliation failed', { error: e instanceof Error ? e.message : String(e) }));
  }

  /** Creates the missing pipelines of branch tips (see onApplicationBootstrap); returns how many. */
  async reconcile(minutes: number): Promise<number> {
    let created = 0;
    for (const p of await this.pipelines.recentlyActive(minutes)) {
      if (!this.git.exists(p.id)) continue;
      for (const b of await this.git.repository(p.id).branches()) {
        if ((await this.pipelines.withPipeline(p.id, b.name, [b.commit.id])).size > 0) continue;
        const made = await this.create({ projectId: p.id, sha: b.commit.id, beforeSha: ZERO_SHA, ref: b.name, tag: false, userId: p.pusherId });
        if (made) {
          created++;
          this.logger.warn('pipeline created for a branch tip left without one', { project_id: p.id, ref: b.name, sha: b.commit.id });
        }
      }
    }
    return created;
  }

  /**
   * Every push (git over HTTP, the files API, merges, branch and tag creation): a durable job per
   * push, run once across instances, surviving a restart. No retry: createForPush logs its own
   * failures, and a retry could create a pipeline twice.
   */
  @OnDomainEvent('push.received', { durable: true, queue: 'push.pipelines', retryLimit: 0 })
  async onPush(e: PushReceived): Promise<void> {
    await this.createForPush(e);
  }

  /** A pipeline for every branch or tag the push created or moved (deletions create none). */
  async createForPush(e: PushReceived): Promise<Pipeline[]> {
    const created: Pipeline[] = [];
    for (const u of e.updates) {
      if (u.newSha === ZERO_SHA) continue;
      const tag = u.ref.startsWith('refs/tags/');
      if (!tag && !u.ref.startsWith('refs/heads/')) continue;
      try {
        const p = await this.create({
          projectId: e.projectId,
          sha: u.newSha,
          beforeSha: u.oldSha,
          ref: u.ref.replace(/^refs\/(heads|tags)\//, ''),
          tag,
          userId: e.userId,
        });
        if (p) created.push(p);
      } catch (err) {
        this.logger.error('pipeline creation failed', {
          project_id: e.projectId,
          error: err instanceof Error ? err.message : String(err),
        });
      }
    }
    return created;
  }

  /**
   * Creates the pipeline of `sha` when the project has builds enabled and a `.gitlab-ci.yml` there:
   * `skipped` for `[ci skip]`/`[skip ci]`, `failed` with `yaml_errors` for an invalid file, else its first stage.
   */
  async create(n: NewPipeline, opts: CreateOptions = {}): Promise<Pipeline | undefined> {
    const project = await this.pipelines.project(n.projectId);
    if (!project || !project.buildsEnabled || !this.git.exists(project.id)) return undefined;
    const repo = this.git.repository(project.id);
    const sha = parseSha(n.sha);
    const commit = sha ? await repo.commit(sha) : null;
    if (!commit) return undefined;
    const file = await repo.blobAt(commit.id, CI_CONFIG_FILE);
    if (!file) return undefined;

    // parsed, validated and planned in a worker thread, within its time budget (CiConfigWorkers)
    let plan: CiPlan | undefined;
    let yamlErrors: string | null = null;
    const skip = !opts.ignoreSkipCi && SKIP_CI.test(commit.message);
    if (!skip) {
      try {
        plan = await this.ciConfig.plan(
          { content: file.data.toString('utf8'), path: project.fullPath, ref: { name: n.ref, tag: n.tag, trigger: (n.triggerRequestId ?? null) !== null } },
          opts.interactive,
        );
      } catch (e) {
        if (!(e instanceof CiConfigError)) throw e;
        yamlErrors = e.message;
      }
    }
    const created = await this.tx.run(async (m) => {
      const pipeline = await this.pipelines.insert(m, {
        projectId: project.id,
        sha: commit.id,
        beforeSha: n.beforeSha || ZERO_SHA,
        ref: n.ref,
        tag: n.tag,
        userId: n.userId,
        yamlErrors,
        status: skip ? 'skipped' : yamlErrors ? 'failed' : 'pending',
      });
      if (plan) {
        // GitLab 8.17's CreatePipelineBuildsService: every build of every stage, `created`, then processed
        const made = await this.builds.insertCreated(
          m,
          {
            projectId: project.id,
            pipelineId: pipeline.id,
            sha: pipeline.sha,
            ref: n.ref,
            tag: n.tag,
            userId: n.userId,
            triggerRequestId: n.triggerRequestId ?? null,
          },
          plan.builds.flat(),
        );
        if (opts.requireBuilds && made === 0) {
          throw new ValidationFailed({ base: ['No builds for this pipeline.'] }); // rolls the pipeline back
        }
        await this.process(m, pipeline.id);
        await this.domainEvents.emit(m, 'pipeline.created', { pipelineId: pipeline.id, projectId: project.id });
      }
      // an invalid file: the commit gets a failed status that says why (else the push seems ignored)
      if (pipeline.yamlErrors) await this.builds.insertConfigErrorStatus(m, pipeline, CI_CONFIG_STATUS_NAME);
      if (plan || pipeline.yamlErrors) await this.refreshStatus(m, pipeline);
      return pipeline;
    });
    if (created.yamlErrors) {
      this.logger.warn('invalid .gitlab-ci.yml: pipeline failed, no builds created', {
        project_id: created.projectId,
        pipeline_id: created.id,
        ref: created.ref,
        sha: created.sha,
        error: created.yamlErrors,
      });
    }
    // GitLab 8.17's Ci::Pipeline#keep_around_commits: a force push never loses a built commit to gc
    const kept = [commit.id, parseSha(created.beforeSha ?? '')].filter((x): x is NonNullable<typeof x> => !!x);
    await repo
      .keepAround(kept)
      .catch((e: unknown) =>
        this.logger.warn('pipeline commits could not be kept around', { pipeline_id: created.id, error: e instanceof Error ? e.message : String(e) }),
      );
    this.outcome(created);
    return created;
  }

  /** After commit: the commit's CI outcome for merge-when-build-succeeds (and anyone else listening). */
  private outcome(pipeline: Pipeline | undefined): void {
    if (!pipeline) return;
    void this.domainEvents.emitCommitted('commit_status.changed', { projectId: pipeline.projectId, sha: pipeline.sha, status: pipeline.status });
  }

  /**
   * After a build of the pipeline ended (success, failed, canceled): GitLab 8.17's
   * ProcessPipelineService — the `created` builds of the stages now reached become pending, manual or
   * skipped — and the pipeline's status. Serialised per pipeline by a row lock, after the build's
   * transition committed. Runs at once in-process and takes over the durable job the transition wrote
   * (`f.job`): exactly one of the two does the work; a worker runs the job (with `job: null`) only
   * when the in-process step never did.
   */
  async buildFinished(f: Finished): Promise<void> {
    const { pipelineId, buildId } = f;
    // read outside the transaction: on the embedded database the pool has a single connection
    const ended = await this.builds.find(buildId);
    const current = await this.pipelines.find(pipelineId);
    let legacyPlan: CiPlan | undefined;
    if (current?.legacyStages && !current.yamlErrors) {
      try {
        legacyPlan = await this.loadPlan(current, (ended?.triggerRequestId ?? null) !== null);
      } catch (e) {
        if (!f.job) throw e; // the queue's worker: retried with backoff
        // in-process (a runner's or a user's request): the durable job does it, in a minute
        this.logger.warn('later stages left to the queue: the .gitlab-ci.yml could not be planned now', {
          pipeline_id: pipelineId,
          error: e instanceof Error ? e.message : String(e),
        });
        return;
      }
    }
    if (ended && this.builds.isFinished(ended.status)) {
      const coverage = await this.builds.updateCoverage(ended);
      if (coverage !== null) ended.coverage = coverage;
    }
    const sha = ended ? parseSha(ended.sha) : null;
    const commit =
      sha && ended
        ? await this.git
            .repository(ended.projectId)
            .commit(sha)
            .catch(() => null)
        : null;
    const finished = await this.tx.run(async (m) => {
      if (f.job && !(await this.queue.takeOver(BUILD_FINISHED_QUEUE, f.job, { tx: m }))) return undefined; // a worker has it
      const pipeline = await this.pipelines.lock(m, pipelineId);
      if (!pipeline) return undefined;
      if (pipeline.legacyStages) await this.createLegacyStages(m, pipeline, legacyPlan, ended?.triggerRequestId ?? null);
      if (!pipeline.yamlErrors) await this.process(m, pipeline.id);
      await this.refreshStatus(m, pipeline);
      // project build hooks (GitLab 8.8 fires them when a build ends) and build.failed, with the change
      if (ended) await this.announceBuild(m, ended, pipeline, commit);
      return pipeline;
    });
    this.outcome(finished);
  }

  /**
   * GitLab 8.17's `ensure_created_builds!` for a pipeline made before its processing (Pipeline.legacyStages):
   * the jobs of the stages after the last one it has builds in, created; nothing when its file is gone.
   */
  private async createLegacyStages(m: EntityManager, pipeline: Pipeline, plan: CiPlan | undefined, triggerRequestId: number | null): Promise<void> {
    if (plan) {
      const existing = await this.builds.pipelineBuilds(pipeline.id, m);
      const last = Math.max(-1, ...existing.map((b) => b.stageIdx));
      const names = new Set(existing.map((b) => b.name));
      const later = plan.builds
        .slice(last + 1)
        .flat()
        .filter((a) => !names.has(a.name));
      await this.builds.insertCreated(
        m,
        {
          projectId: pipeline.projectId,
          pipelineId: pipeline.id,
          sha: pipeline.sha,
          ref: pipeline.ref ?? '',
          tag: pipeline.tag,
          userId: pipeline.userId,
          triggerRequestId,
        },
        later,
      );
    }
    await this.pipelines.clearLegacyStages(m, pipeline.id);
    pipeline.legacyStages = false;
  }

  /**
   * The pipeline's plan again (its file at its sha, for its ref), or undefined when it no longer has
   * one. A file past its time or memory budget throws: the step is retried (the durable job), not dropped.
   */
  private async loadPlan(pipeline: Pipeline, trigger: boolean): Promise<CiPlan | undefined> {
    const project = await this.pipelines.project(pipeline.projectId);
    if (!project) return undefined;
    const sha = parseSha(pipeline.sha);
    const file = sha ? await this.git.repository(project.id).blobAt(sha, CI_CONFIG_FILE) : null;
    if (!file) return undefined;
    try {
      return await this.ciConfig.plan({
        content: file.data.toString('utf8'),
        path: project.fullPath,
        ref: { name: pipeline.ref ?? '', tag: pipeline.tag, trigger },
      });
    } catch (e) {
      if (!(e instanceof CiConfigError) || e instanceof CiConfigBudgetError) throw e;
      return undefined;
    }
  }

  /** ProcessPipelineService's step under the pipeline's lock: the decisions of processPipeline written. */
  private async process(m: EntityManager, pipelineId: number): Promise<void> {
    await this.builds.setProcessed(m, processPipeline(await this.builds.pipelineBuilds(pipelineId, m)));
  }

  /** In the transaction that moved the pipeline on after a build ended: `build.changed` (the build hooks), and `build.failed`. */
  private async announceBuild(
    m: EntityManager,
    build: BuildRow,
    pipeline: Pipeline,
    commit: { message: string; author: { name: string; email: string } } | null,
  ): Promise<void> {
    if (build.status === 'failed') {
      await this.domainEvents.emit(m, 'build.failed', { buildId: build.id, projectId: build.projectId, userId: build.userId, pipelineId: pipeline.id });
    }
    await this.domainEvents.emit(m, 'build.changed', {
      projectId: build.projectId,
      build: {
        id: build.id,
        name: build.name,
        stage: build.stage,
        status: build.status,
        ref: build.ref,
        tag: build.tag,
        beforeSha: build.beforeSha,
        sha: build.sha,
        startedAt: build.startedAt,
        finishedAt: build.finishedAt,
        allowFailure: build.allowFailure,
        userId: build.userId,
        commit: {
          id: pipeline.id,
          sha: build.sha,
          message: commit?.message ?? '',
          authorName: commit?.author.name ?? '',
          authorEmail: commit?.author.email ?? '',
          status: pipeline.status ?? 'pending',
          startedAt: pipeline.startedAt,
          finishedAt: pipeline.finishedAt,
        },
      },
    });
  }

  private async refreshStatus(m: EntityManager, pipeline: Pipeline): Promise<void> {
    if (pipeline.status === 'skipped' && !pipeline.yamlErrors) {
      const any = await this.builds.pipelineBuilds(pipeline.id, m);
      if (any.length === 0) return;
    }
    const latest = latestByName(await this.builds.pipelineBuilds(pipeline.id, m));
    const status = pipeline.yamlErrors ? 'failed' : (combinedStatus(latest) ?? 'skipped');
    await this.pipelines.setStatus(m, pipeline.id, status);
    pipeline.status = status;
  }

  /**
   * A new pending build of the same job (retry, decision 2); the old one keeps its status, and the
   * skipped builds of later stages are processed again when it ends (8.17's `Ci::Build.retry`).
   */
  async retry(build: BuildRow, userId: number): Promise<number> {
    return this.tx.run(async (m) => {
      const pipeline = await this.pipelines.lock(m, build.pipelineId);
      if (!pipeline) throw new Error('pipeline of the build is gone');
      const id = await this.retryIn(m, build, userId);
      await this.refreshStatus(m, pipeline);
      return id;
    });
  }

  /**
   * GitLab 8.17's `Ci::Build#play`: a manual action waiting (manual, skipped, created) is enqueued as
   * `userId`'s; any other build (an action already run, e.g. an environment's stop action) gets a new
   * pending build of the same job. Returns the id of the build that will run. Whether the caller may
   * play it (`playable`) is the caller's check; this is what the builds API and environments call.
   */
  async play(buildId: number, userId: number): Promise<number> {
    const build = await this.builds.find(buildId);
    if (!build) throw new NotFound('Build');
    const id = await this.tx.run(async (m) => {
      const pipeline = await this.pipelines.lock(m, build.pipelineId);
      if (!pipeline) throw new NotFound('Build');
      const played = (await this.builds.enqueueAs(m, build.id, userId)) ? build.id : await this.retryIn(m, build, userId);
      await this.refreshStatus(m, pipeline);
      return played;
    });
    await this.builds.signalTrace(id);
    this.outcome((await this.pipelines.find(build.pipelineId)) ?? undefined);
    return id;
  }

  private async retryIn(m: EntityManager, build: BuildRow, userId: number): Promise<number> {
    const id = await this.builds.insert(
      m,
      {
        projectId: build.projectId,
        pipelineId: build.pipelineId,
        sha: build.sha,
        ref: build.ref,
        tag: build.tag,
        userId,
        triggerRequestId: build.triggerRequestId,
      },
      {
        name: build.name,
        stage: build.stage,
        stageIdx: build.stageIdx,
        commands: build.commands,
        tagList: build.tagList ?? [],
        allowFailure: build.allowFailure,
        when: build.when,
        yamlVariables: build.yamlVariables ?? [],
        options: build.options ?? {},
        environment: build.environment ?? undefined,
        coverageRegex: build.coverageRegex ?? undefined,
      },
    );
    await this.builds.markProcessableAfterStage(m, build.pipelineId, build.stageIdx);
    return id;
  }

  async hasBuilds(pipelineId: number): Promise<boolean> {
    return (await this.builds.pipelineBuilds(pipelineId)).length > 0;
  }

  /** Removes a pipeline that created nothing (a trigger with no matching job). */
  remove(pipelineId: number): Promise<void> {
    return this.pipelines.remove(pipelineId);
  }

  /** Convenience for reads: the project of a pipeline (for CI paths). */
  project(projectId: number): Promise<CiProject | undefined> {
    return this.pipelines.project(projectId);
  }
}
