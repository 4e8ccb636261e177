import { DbNotifications } from '../../database/notifications';
import { ApplicationSettingsService } from '../../application-settings/application-settings.service';
import { randomBytes } from 'node:crypto';
import { Transactions, Tx } from '../../database/transactions';
import { QueueService } from '../../queue/queue.service';
import { createReadStream, promises as fs } from 'node:fs';
import { Inject, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import busboy from 'busboy';
import { SecretsService } from '../../common/crypto/secrets.service';
import { DomainError, Forbidden, NotFound } from '../../common/errors/domain-errors';
import { APP_CONFIG, AppConfig } from '../../config/config';
import { Logger } from '../../common/logging/logger';
import { parseDuration } from '../pipelines/ci-config';
import { BuildStatus, FINISHED } from './build.entity';
import { BuildFiles } from './build-files';
import { BuildVariable, BuildVariablesSource, predefinedVariables, userVariables, VariablesRunner } from './build-variables';
import { UserDirectory } from '../../users/user-directory.service';
import { COVERAGE_TRACE_TAIL, extractCoverage } from './coverage';
import { BuildRow, BuildsRepository, Claimer } from './builds.repository';

export type { BuildRow, Claimer } from './builds.repository';

/** A runner API failure with GitLab's exact status, body and headers. */
export class RunnerApiError extends DomainError {
  constructor(
    readonly status: number,
    private readonly payload: unknown,
    private readonly extraHeaders: Record<string, string> = {},
  ) {
    super(`runner api ${status}`);
  }
  body() {
    return this.payload;
  }
  override headers() {
    return this.extraHeaders;
  }
}

export interface TraceResult {
  status: BuildStatus;
  size: number;
}

export const MAX_TRACE_PART = 16 * 1024 * 1024;

/** Builds as runners see them: claiming, state, trace, artifacts; build token checks. */
/**
 * The queue of "a build ended: move its pipeline on" (PipelinesService works it). The job is written
 * by the transaction of the build's transition and starts a minute later: the step runs at once
 * in-process and takes the job over; the job only runs when that did not happen (a crash).
 */
export const BUILD_FINISHED_QUEUE = 'ci.build-finished';
export interface BuildFinishedJob {
  pipelineId: number;
  buildId: number;
}
/** A build's transition to an end state, and the job that moves its pipeline on (undefined: none). */
export interface Finished {
  pipelineId: number;
  buildId: number;
  job: string | null;
}

/** The notification channel of trace appends and build ends (payload: the build id). */
export const TRACE_CHANNEL = 'ci_build_trace';

@Injectable()
export class BuildsService {
  readonly files: BuildFiles;
  private readonly externalUrl: string;

  constructor(
    private readonly builds: BuildsRepository,
    private readonly secrets: SecretsService,
    private readonly tx: Transactions,
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly notifications: DbNotifications,
    private readonly queue: QueueService,
    private readonly settings: ApplicationSettingsService,
    private readonly logger: Logger,
    private readonly users: UserDirectory,
  ) {
    this.files = new BuildFiles(config.dataDir);
    this.externalUrl = config.externalUrl;
  }

  /** Tells the live-trace followers of every instance that the build's trace or state changed (after commit). */
  async signalTrace(id: number): Promise<void> {
    // the followers also poll, so a lost signal only delays them: logged, not thrown
    await this.notifications
      .notify(TRACE_CHANNEL, String(id))
      .catch((e) => this.logger.warn('live trace: signal not sent', { build_id: id, error: e instanceof Error ? e.message : String(e) }));
  }

  find(id: number): Promise<BuildRow | undefined> {
    return this.builds.find(id);
  }

  /** The builds of a pipeline (id, name, status, allow_failure, stage index), in the caller's transaction when given. */
  pipelineBuilds(...args: Parameters<BuildsRepository['pipelineBuilds']>): ReturnType<BuildsRepository['pipelineBuilds']> {
    return this.builds.pipelineBuilds(...args);
  }

  /** Creates a pending build (its commit status row and its build row) in the pipeline's transaction. */
  insert(...args: Parameters<BuildsRepository['insert']>): Promise<number> {
    return this.builds.insert(...args);
  }

  /** The builds of a new pipeline, `created`, in its transaction (two statements for any number). */
  insertCreated(...args: Parameters<BuildsRepository['insertCreated']>): Promise<number> {
    return this.builds.insertCreated(...args);
  }

  /** Stage processing's decisions for `created` builds (pending, skipped, manual), in the pipeline's transaction. */
  setProcessed(...args: Parameters<BuildsRepository['setProcessed']>): Promise<void> {
    return this.builds.setProcessed(...args);
  }

  /** Skipped builds after a stage back to `created` (a retry), in the pipeline's transaction. */
  markProcessableAfterStage(...args: Parameters<BuildsRepository['markProcessableAfterStage']>): Promise<void> {
    return this.builds.markProcessableAfterStage(...args);
  }

  /** A manual action enqueued as the user who played it; false when it was not waiting (created, skipped, manual). */
  enqueueAs(...args: Parameters<BuildsRepository['enqueueAs']>): Promise<boolean> {
    return this.builds.enqueueAs(...args);
  }

  /** The failed commit status of a pipeline whose `.gitlab-ci.yml` is invalid (no build), in the pipeline's transaction. */
  insertConfigErrorStatus(...args: Parameters<BuildsRepository['insertConfigErrorStatus']>): Promise<void> {
    return this.builds.insertConfigErrorStatus(...args);
  }

  /** Running builds past their project's timeout (a batch), for the timeout sweep. */
  timedOut(...args: Parameters<BuildsRepository['timedOut']>): ReturnType<BuildsRepository['timedOut']> {
    return this.builds.timedOut(...args);
  }

  findByToken(token: string): Promise<BuildRow | undefined> {
    return this.builds.findByTokenDigest(this.secrets.digest(token));
  }

  /** Claims the oldest pending build for the runner; its new build token is returned once, in plain. */
  async claim(c: Claimer): Promise<{ build: BuildRow; token: string } | undefined> {
    // Polls nearly always find nothing: the token made for a claim that found nothing is kept for the
    // next one instead of generating, digesting and encrypting a new one per poll. It is taken from the
    // slot synchronously, so two claims in flight never share one.
    const token = this.spareToken ?? this.newBuildToken();
    this.spareToken = undefined;
    const id = await this.builds.claim(c, token.digest, token.encrypted);
    if (id === undefined) {
      this.spareToken ??= token;
      return undefined;
    }
    const build = await this.builds.find(id);
    return build && { build, token: token.plain };
  }

  private spareToken: { plain: string; digest: string; encrypted: string } | undefined;

  private newBuildToken() {
    const plain = this.secrets.generateToken(20);
    return { plain, digest: this.secrets.digest(plain), encrypted: this.secrets.encrypt(plain) };
  }

  /** The plain token of a build (for `depends_on_builds` and masking). */
  tokenOf(build: BuildRow): string | undefined {
    return build.tokenEncrypted ? this.secrets.decrypt(build.tokenEncrypted) : undefined;
  }

  dependencies(build: BuildRow): Promise<BuildRow[]> {
    return this.builds.dependencies(build);
  }

  /**
   * GitLab 8.17's `Ci::Build#simple_variables`, in its order: the predefined variables of the build,
   * project, pipeline and runner (`runner`: the one that took it, when known), the yaml variables,
   * GITLAB_USER_ID/EMAIL of the build's user, the project's secret variables, the trigger's variables.
   */
  async variables(build: BuildRow, runner?: VariablesRunner): Promise<BuildVariable[]> {
    const user = build.userId === null ? undefined : (await this.users.byIds([build.userId])).get(build.userId);
    const who = user ? { id: user.id, email: user.email } : undefined;
    const vars = predefinedVariables(build, { token: this.tokenOf(build), externalUrl: this.externalUrl, runner, user: who });
    vars.push(...(build.yamlVariables ?? []));
    vars.push(...userVariables(who));
    for (const v of await this.builds.projectVariables(build.projectId)) {
      vars.push({ key: v.key, value: this.secrets.decrypt(v.valueEncrypted), public: false });
    }
    if (build.triggerRequestId !== null) {
      for (const [key, value] of Object.entries(await this.builds.triggerVariables(build.triggerRequestId))) {
        vars.push({ key, value: String(value), public: false });
      }
    }
    return vars;
  }

  /**
   * What the runner receives (8.17's `Ci::Build#variables`): the simple variables, then those of the
   * sources other areas registered (the environment's CI_ENVIRONMENT_*).
   */
  async runnerVariables(build: BuildRow, runner?: VariablesRunner): Promise<BuildVariable[]> {
    const vars = await this.variables(build, runner);
    for (const source of this.variableSources) vars.push(...(await source(build)));
    return vars;
  }

  /** Adds variables to every build's payload, after 8.17's simple ones (the environments area's port; see BuildVariablesSource). */
  addVariablesSource(source: BuildVariablesSource): void {
    this.variableSources.push(source);
  }

  private readonly variableSources: BuildVariablesSource[] = [];

  /** The running build of this runner (`PUT builds/:id`), else `404 Not found`. */
  async runningBuildOf(runnerId: number, id: number): Promise<BuildRow> {
    const build = await this.builds.find(id);
    if (!build || build.runnerId !== runnerId || build.status !== 'running') throw new RunnerApiError(404, { message: '404 Not found' });
    if (build.erasedAt) throw new Forbidden('Build has been erased!');
    return build;
  }

  /** Applies a runner's update; returns the end of the build when it finished (stage processing follows). */
  async update(build: BuildRow, state: string | undefined, trace: string | undefined): Promise<Finished | undefined> {
    if (typeof trace === 'string') {
      const size = await this.files.replaceTrace(build.id, trace);
      await this.builds.setTraceSize(build.id, size);
    }
    let finished: Finished | undefined;
    if (state === 'success' || state === 'failed') finished = await this.end(build, ['pending', 'running'], state);
    if (finished || typeof trace === 'string') await this.signalTrace(build.id);
    return finished;
  }

  /**
   * GitLab 8.17's `update_coverage` when a build ended: the coverage its trace shows by the job's
   * `coverage` regex (else the project's `build_coverage_regex`), read from the trace's last MiB with a
   * time limit (coverage.ts); stored when found. Never throws (8.17 ignored failures there too).
   */
  async updateCoverage(build: BuildRow): Promise<number | null> {
    const regex = build.coverageRegex ?? build.projectCoverageRegex;
    if (!regex || build.traceSize <= 0) return null;
    try {
      const coverage = extractCoverage(await this.files.traceTail(build.id, build.traceSize, COVERAGE_TRACE_TAIL), regex);
      if (coverage !== null) await this.builds.setCoverage(build.id, coverage);
      return coverage;
    } catch (e) {
      this.logger.warn('coverage not read from the trace', { build_id: build.id, error: e instanceof Error ? e.message : String(e) });
      return null;
    }
  }

  /** Moves a build to an end state, with the job that moves its pipeline on, in one transaction. */
  async end(build: { id: number; pipelineId: number }, from: BuildStatus[], to: 'success' | 'failed' | 'canceled'): Promise<Finished | undefined> {
    return this.tx.run(async (m) => {
      if (!(await this.builds.transition(build.id, from, to, m))) return undefined;
      return this.finishedIn(m, build.id, build.pipelineId);
    });
  }

  private async finishedIn(m: Tx, buildId: number, pipelineId: number): Promise<Finished> {
    const job = await this.queue.send<BuildFinishedJob>(BUILD_FINISHED_QUEUE, { pipelineId, buildId }, { tx: m, startAfterSeconds: 60 });
    return { pipelineId, buildId, job };
  }

  /**
   * A build by id whose token is `token`: the build's own token, the project's runners token, or
   * (when `dependent` is allowed) the token of a later-stage build of the same pipeline.
   */
  async authorizeToken(id: number, token: string | undefined, opts: { dependent?: boolean } = {}): Promise<BuildRow> {
    const build = await this.builds.find(id);
    if (!build) throw new NotFound();
    if (!token) throw new Forbidden();
    const digest = this.secrets.digest(token);
    if (build.tokenDigest && this.secrets.safeEqual(build.tokenDigest, digest)) return build;
    if (this.secrets.safeEqual(build.projectRunnersTokenDigest, digest)) return build;
    if (opts.dependent) {
      const other = await this.builds.findByTokenDigest(digest);
      if (other && other.pipelineId === build.pipelineId && other.stageIdx > build.stageIdx) return build;
    }
    throw new Forbidden();
  }

  /** Appends a trace part that starts at the stored length (else 416 with the stored range). */
  async appendTrace(build: BuildRow, contentRange: string | undefined, body: Buffer): Promise<TraceResult> {
    if (build.erasedAt) throw new Forbidden('Build has been erased!');
    if (!contentRange) throw new RunnerApiError(400, { error: '400 Missing header Content-Range' });
    const start = Number(
      contentRange
        .trim()
        .replace(/^bytes[ =]/i, '')
        .split('-')[0],
    );
    if (!Number.isSafeInteger(start) || start < 0) throw new RunnerApiError(400, { error: '400 Missing header Content-Range' });
    const result = await this.tx.run(async (m) => {
      const row = await this.builds.lockTrace(m, build.id);
      if (!row) throw new NotFound();
      if (start !== row.traceSize) {
        throw new RunnerApiError(416, { error: '416 Range Not Satisfiable' }, { Range: `0-${row.traceSize}` });
      }
      const size = await this.files.writeTraceAt(build.id, start, body);
      await this.builds.setTraceSize(build.id, size, m);
      return { status: row.status, size };
    });
    await this.signalTrace(build.id);
    return result;
  }

  /** Drops a running build past its timeout, with a trace line saying so. */
  async timeOut(id: number, pipelineId: number, timeout: number): Promise<Finished | undefined> {
    const done = await this.tx.run(async (m) => {
      const row = await this.builds.lockTrace(m, id);
      if (!row || row.status !== 'running') return undefined;
      const line = Buffer.from(`\nERROR: Build failed: execution took longer than ${timeout} seconds (build timeout); the runner stopped reporting\n`);
      const size = await this.files.writeTraceAt(id, row.traceSize, line);
      await this.builds.setTraceSize(id, size, m);
      if (!(await this.builds.transition(id, ['running'], 'failed', m))) return undefined;
      return this.finishedIn(m, id, pipelineId);
    });
    if (done) await this.signalTrace(id);
    return done;
  }

  /**
   * Streams a multipart upload's `file` part to disk (never buffered whole), refusing more than
   * `max_artifacts_size` MB with 413; replaces any earlier artifacts of the build.
   */
  async uploadArtifacts(build: BuildRow, req: Request, expireIn: string | undefined): Promise<BuildRow> {
    if (build.status !== 'running') throw new Forbidden('Build is not running!');
    if (build.erasedAt) throw new Forbidden('Build has been erased!');
    const max = (await this.settings.get()).maxArtifactsSize * 1024 * 1024;
    if (Number(req.headers['content-length']) > max + 64 * 1024) throw new RunnerApiError(413, { message: '413 Request Entity Too Large' });
    const type = String(req.headers['content-type'] ?? '');
    if (!/^multipart\/form-data/i.test(type)) throw new RunnerApiError(400, { message: '400 (Bad request) "Missing artifacts file!" not given' });
    await fs.mkdir(this.files.dir(build.id), { recursive: true });
    const tmp = `artifacts.${randomBytes(6).toString('hex')}.tmp`;
    const tmpPath = `${this.files.dir(build.id)}/${tmp}`;
    let received: { filename: string; size: number } | undefined;
    let fields: Record<string, string>;
    try {
      ({ received, fields } = await new Promise<{ received?: { filename: string; size: number }; fields: Record<string, string> }>((resolve, reject) => {
        let bb: busboy.Busboy;
        try {
          bb = busboy({ headers: req.headers, limits: { files: 1, fileSize: max, fields: 20, fieldSize: 1024 } });
        } catch {
          reject(new RunnerApiError(400, { message: '400 (Bad request) "Missing artifacts file!" not given' }));
          return;
        }
        const f: Record<string, string> = {};
        let file: { filename: string; size: number } | undefined;
        let writing: Promise<void> | undefined;
        let failed: RunnerApiError | undefined;
        bb.on('field', (name, value) => (f[name] = value));
        bb.on('file', (name, stream, info) => {
          if (name !== 'file') {
            stream.resume();
            return;
          }
          const out = this.files.artifactsWriteStream(build.id, tmp);
          let size = 0;
          stream.on('data', (d: Buffer) => (size += d.length));
          stream.on('limit', () => {
            failed = new RunnerApiError(413, { message: '413 Request Entity Too Large' });
            stream.unpipe(out);
            stream.resume();
          });
          writing = new Promise((res, rej) => {
            out.on('close', () => res());
            out.on('error', rej);
          });
          stream.pipe(out);
          stream.on('end', () => {
            file = { filename: safeFileName(info.filename || 'artifacts.zip'), size };
            out.end();
          });
        });
        bb.on('error', () => reject(new RunnerApiError(400, { message: '400 Bad request - unreadable request body' })));
        bb.on('close', () => {
          void (writing ?? Promise.resolve()).then(() => (failed ? reject(failed) : resolve({ received: file, fields: f })), reject);
        });
        req.on('aborted', () => reject(new RunnerApiError(400, { message: '400 Bad request - unreadable request body' })));
        req.pipe(bb);
      }));
      if (!received) throw new RunnerApiError(400, { message: '400 (Bad request) "Missing artifacts file!" not given' });
      await fs.rename(tmpPath, this.files.artifactsPath(build.id));
    } finally {
      await fs.rm(tmpPath, { force: true });
    }
    const expire = expireIn ?? fields.expire_in;
    const seconds = expire ? parseDuration(expire) : undefined;
    await this.builds.setArtifacts(build.id, received.filename, received.size, seconds ? new Date(Date.now() + seconds * 1000) : null);
    return (await this.builds.find(build.id))!;
  }

  /** The artifacts file to stream; 404 when there is none. */
  artifactsStream(build: BuildRow): { filename: string; size: number; stream: NodeJS.ReadableStream } {
    if (!build.artifactsFile) throw new NotFound();
    return { filename: build.artifactsFile, size: Number(build.artifactsSize ?? 0), stream: createReadStream(this.files.artifactsPath(build.id)) };
  }

  async removeArtifacts(build: BuildRow): Promise<BuildRow> {
    await this.files.removeArtifacts(build.id);
    await this.builds.setArtifacts(build.id, null, null, null);
    return (await this.builds.find(build.id))!;
  }

  /** The trace as stored (first `trace_size` bytes), with the build and project tokens masked. */
  traceStream(build: BuildRow, projectRunnersToken?: string): NodeJS.ReadableStream {
    return this.files.readTrace(build.id, build.traceSize, this.traceSecrets(build, projectRunnersToken));
  }

  /** The tokens a trace shown to users has masked: the build's own and the project's runners token. */
  traceSecrets(build: BuildRow, projectRunnersToken?: string): string[] {
    return [this.tokenOf(build), projectRunnersToken].filter((s): s is string => !!s);
  }

  isFinished(status: string): boolean {
    return (FINISHED as string[]).includes(status);
  }
}

/** A plain file name for Content-Disposition: no path, no quotes or control characters. */
function safeFileName(name: string): string {
  const base = name.split(/[\\/]/).pop() ?? 'artifacts.zip';
  const clean = base.replace(/[^\w.\- ]/g, '_').slice(0, 200);
  return clean || 'artifacts.zip';
}
