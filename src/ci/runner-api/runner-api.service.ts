import { Inject, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { MissingAttribute } from '../../common/errors/domain-errors';
import { APP_CONFIG, AppConfig } from '../../config/config';
import { ResolvesBuildToken } from '../../git-access/build-tokens';
import type { BuildTokenGrant } from '../../git-access/git-access.service';
import { BuildRow } from '../builds/builds.service';
import { BuildsService, MAX_TRACE_PART, RunnerApiError, TraceResult } from '../builds/builds.service';
import { PipelinesService } from '../pipelines/pipelines.service';
import { RunnerInfo } from '../runners/runners.service';
import { RunnersService } from '../runners/runners.service';
import { presentBuildDetails } from './runner-api.presenter';

const ACTIVE_PIPELINE = ['pending', 'running'];

function runnerInfo(raw: unknown): RunnerInfo {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return {};
  const o = raw as Record<string, unknown>;
  const str = (k: string) => (typeof o[k] === 'string' ? o[k].slice(0, 255) : undefined);
  return { name: str('name'), version: str('version'), revision: str('revision'), platform: str('platform'), architecture: str('architecture') };
}

/** The runner API (`/ci/api/v1`): what a gitlab-ci-multi-runner 1.x calls, with its own token checks. */
@Injectable()
export class RunnerApiService {
  constructor(
    private readonly runners: RunnersService,
    private readonly builds: BuildsService,
    private readonly pipelines: PipelinesService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * `git clone` as gitlab-ci-token with a build token: read access to the build's project while its
   * pipeline is active.
   */
  @ResolvesBuildToken()
  async resolveBuildToken(token: string): Promise<BuildTokenGrant | undefined> {
    const build = await this.builds.findByToken(token);
    if (build) return ACTIVE_PIPELINE.includes(build.pipelineStatus ?? '') ? { projectId: build.projectId } : undefined;
    // GitLab 8.x's build token was the project's runners token: still accepted
    const projectId = await this.runners.projectIdByRunnersToken(token);
    return projectId === undefined ? undefined : { projectId };
  }

  register(token: string, description: string | undefined, tagList: string[] | undefined, runUntagged: boolean | undefined, info: unknown) {
    return this.runners.register({ token, description, tagList, runUntagged, info: runnerInfo(info) });
  }

  removeRunner(token: string | undefined) {
    return this.runners.remove(token ?? '');
  }

  /**
   * Claims a build for the runner: 403 unknown token; `undefined` (the caller answers 404 `{}`) when
   * the runner is inactive or there is nothing to do — the poll's usual answer, so no error is built for it.
   */
  async requestBuild(token: string | undefined, info: unknown) {
    const runner = await this.runners.authenticate(token);
    await this.runners.touch(runner, runnerInfo(info));
    if (!runner.active) return undefined;
    const claimed = await this.builds.claim({
      runnerId: runner.id,
      isShared: runner.isShared,
      tagList: runner.tagList ?? [],
      runUntagged: runner.runUntagged,
    });
    if (!claimed) return undefined;
    return this.payload(claimed.build, claimed.token, runner);
  }

  private async payload(build: BuildRow, token: string, runner?: { id: number; description: string | null; tagList: string[] | null }) {
    const [variables, deps] = await Promise.all([this.builds.runnerVariables(build, runner), this.builds.dependencies(build)]);
    return presentBuildDetails(build, {
      token,
      externalUrl: this.config.externalUrl,
      variables,
      dependencies: deps.map((d) => ({ build: d, token: this.builds.tokenOf(d) })),
    });
  }

  /** `PUT builds/:id`: runner token first (403), then this runner's running build (404), then state/trace. */
  async updateBuild(token: string | undefined, id: string, state: string | undefined, trace: unknown, info: unknown): Promise<void> {
    const runner = await this.runners.authenticate(token);
    await this.runners.touch(runner, runnerInfo(info));
    const build = await this.builds.runningBuildOf(runner.id, Number(id));
    const finished = await this.builds.update(build, state, typeof trace === 'string' ? trace : undefined);
    if (finished) await this.pipelines.buildFinished(finished);
  }

  /** `PATCH builds/:id/trace.txt`: build token, then the range check, then an O(part) append. */
  async appendTrace(id: string, token: string | undefined, contentRange: string | undefined, req: Request): Promise<TraceResult> {
    const build = await this.buildByToken(id, token);
    const body = await readBody(req, MAX_TRACE_PART);
    return this.builds.appendTrace(build, contentRange, body);
  }

  async uploadArtifacts(id: string, token: string | undefined, expireIn: string | undefined, req: Request) {
    const build = await this.buildByToken(id, token);
    const updated = await this.builds.uploadArtifacts(build, req, expireIn);
    return this.payload(updated, this.builds.tokenOf(updated) ?? '');
  }

  async downloadArtifacts(id: string, token: string | undefined) {
    const build = await this.buildByToken(id, token, true);
    return this.builds.artifactsStream(build);
  }

  async removeArtifacts(id: string, token: string | undefined) {
    const build = await this.buildByToken(id, token);
    const updated = await this.builds.removeArtifacts(build);
    return this.payload(updated, this.builds.tokenOf(updated) ?? '');
  }

  /** The build a build token (`token` or `BUILD-TOKEN`) opens: 400 when neither is given, as a missing attribute. */
  private async buildByToken(id: string, token: string | undefined, dependent = false): Promise<BuildRow> {
    if (!token?.trim()) throw new MissingAttribute('token');
    const n = /^\d{1,10}$/.test(id) ? Number(id) : NaN;
    return this.builds.authorizeToken(n, token, { dependent });
  }
}

/**
 * Reads a raw request body up to `limit` bytes. Beyond it: 413, and the rest of the body is read and
 * dropped, so that the answer reaches the client instead of a connection reset.
 */
function readBody(req: Request, limit: number): Promise<Buffer> {
  if (Buffer.isBuffer(req.body)) return Promise.resolve(req.body);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (c: Buffer) => {
      size += c.length;
      if (size > limit) {
        chunks.length = 0;
        req.off('data', onData);
        req.resume(); // drain
        reject(new RunnerApiError(413, { message: '413 Request Entity Too Large' }));
        return;
      }
      chunks.push(c);
    };
    req.on('data', onData);
    req.on('end', () => resolve(Buffer.concat(chunks)));
    // the client went away mid-body: its own doing, not a server error
    req.on('error', () => reject(new RunnerApiError(400, { message: '400 Bad request - unreadable request body' })));
  });
}
