import { Injectable } from '@nestjs/common';
import { NotFound, ValidationFailed } from '../../common/errors/domain-errors';
import { Paginated, pageRequest } from '../../common/pagination/pagination';
import { GitService } from '../../git/git.service';
import { ZERO_SHA } from '../../git/objects';
import { parseRef, parseSha } from '../../git/names';
import { ProjectResolver } from '../../projects/project-resolver.service';
import { Project } from '../../projects/project.entity';
import { UserDirectory } from '../../users/user-directory.service';
import { BuildStatus } from '../builds/build.entity';
import { BuildsService, Finished } from '../builds/builds.service';
import { CiConfigWorkers } from './ci-config-workers';
import { CreatePipelineDto, ListPipelinesDto } from './dto/pipelines.dto';
import { Pipeline } from './pipeline.entity';
import { latestByName } from './pipeline-status';
import { PipelineView } from './pipelines.presenter';
import { PipelineFilter, PipelinesRepository } from './pipelines.repository';
import { PipelinesService } from './pipelines.service';
import { ProjectRef } from '../../common/params/refs';
import type { Caller } from '../../common/caller/caller';

const FINISHED_STATUSES = ['success', 'failed', 'canceled', 'skipped'];
/** GitLab 8.17's `HasStatus.cancelable`: what canceling a pipeline cancels. */
const CANCELABLE: BuildStatus[] = ['created', 'pending', 'running'];

/**
 * The v3 pipelines API (GitLab 8.11–8.14's lib/api/pipelines.rb): reading with `read_pipeline`,
 * creating with `create_pipeline`, retry and cancel with `update_pipeline`; and `POST /ci/lint`.
 */
@Injectable()
export class ProjectPipelinesService {
  constructor(
    private readonly projects: ProjectResolver,
    private readonly repo: PipelinesRepository,
    private readonly pipelines: PipelinesService,
    private readonly builds: BuildsService,
    private readonly users: UserDirectory,
    private readonly git: GitService,
    private readonly ciConfig: CiConfigWorkers,
  ) {}

  async list(user: Caller, ref: ProjectRef, q: ListPipelinesDto): Promise<Paginated<PipelineView>> {
    const { project } = await this.projects.resolve(user, ref, 'read_pipeline');
    const f: PipelineFilter = {};
    if (q.scope === 'running' || q.scope === 'pending') f.statuses = [q.scope];
    if (q.scope === 'finished') f.statuses = FINISHED_STATUSES;
    if (q.status) f.statuses = f.statuses ? f.statuses.filter((s) => s === q.status) : [q.status];
    if (q.ref !== undefined) f.ref = q.ref;
    if (q.scope === 'branches' || q.scope === 'tags') {
      const tag = q.scope === 'tags';
      f.latestOfRefs = { tag, refs: await this.refNames(project, tag) };
    }
    const page = pageRequest(q);
    if (f.statuses?.length === 0) return new Paginated([], 0, page);
    const [rows, total, coverage] = await this.repo.list(project.id, f, page);
    return new Paginated(await this.views(project, rows, coverage), total, page);
  }

  async get(user: Caller, ref: ProjectRef, id: number): Promise<PipelineView> {
    const { project } = await this.projects.resolve(user, ref, 'read_pipeline');
    return (await this.views(project, [await this.find(project, id)]))[0];
  }

  /**
   * A pipeline for the head of branch or tag `ref` (GitLab 8.14), created exactly as a push creates
   * one (the same builds, a failed pipeline with `yaml_errors` for an invalid file); `[ci skip]` is
   * ignored. Unknown ref, no `.gitlab-ci.yml`, or no job for the ref: 400 and nothing saved.
   */
  async create(user: Caller, ref: ProjectRef, dto: CreatePipelineDto): Promise<PipelineView> {
    const { project } = await this.projects.resolve(user, ref, 'create_pipeline');
    const name = parseRef(dto.ref);
    const repo = this.git.exists(project.id) ? this.git.repository(project.id) : undefined;
    const branch = name && repo ? await repo.branch(name) : null;
    const tag = name && repo && !branch ? await repo.tag(name) : null;
    const commit = branch?.commit ?? tag?.commit;
    if (!name || !commit) throw new ValidationFailed({ base: ['Reference not found'] });
    const created = await this.pipelines.create(
      { projectId: project.id, sha: commit.id, beforeSha: ZERO_SHA, ref: name, tag: !branch, userId: user.id },
      { ignoreSkipCi: true, requireBuilds: true, interactive: true },
    );
    if (!created) throw new ValidationFailed({ base: ['Missing .gitlab-ci.yml file'] });
    const saved = (await this.repo.findInProject(project.id, created.id)) ?? created;
    return (await this.views(project, [saved]))[0];
  }

  /** Retries the latest failed or canceled builds (GitLab's `retry_failed`): a new pending build each. */
  async retry(user: Caller, ref: ProjectRef, id: number): Promise<PipelineView> {
    const { project } = await this.projects.resolve(user, ref, 'update_pipeline');
    const pipeline = await this.find(project, id);
    const latest = latestByName(await this.builds.pipelineBuilds(pipeline.id));
    for (const b of latest.filter((x) => x.status === 'failed' || x.status === 'canceled')) {
      const build = await this.builds.find(b.id);
      if (build?.commands) await this.pipelines.retry(build, user.id);
    }
    return (await this.views(project, [await this.find(project, id)]))[0];
  }

  /**
   * Cancels every created, pending or running build (GitLab 8.17's `cancel_running` over `cancelable`);
   * all of them first, then the pipeline moves on (so no later stage starts in between).
   */
  async cancel(user: Caller, ref: ProjectRef, id: number): Promise<PipelineView> {
    const { project } = await this.projects.resolve(user, ref, 'update_pipeline');
    const pipeline = await this.find(project, id);
    const ended: Finished[] = [];
    for (const b of await this.builds.pipelineBuilds(pipeline.id)) {
      if (!CANCELABLE.includes(b.status)) continue;
      const finished = await this.builds.end({ id: b.id, pipelineId: pipeline.id }, CANCELABLE, 'canceled');
      if (finished) ended.push(finished);
    }
    for (const finished of ended) {
      await this.builds.signalTrace(finished.buildId);
      await this.pipelines.buildFinished(finished);
    }
    return (await this.views(project, [await this.find(project, id)]))[0];
  }

  /** `POST /ci/lint`: GitLab's validation message of the content, or null when it is valid (in a worker thread). */
  lint(content: string): Promise<string | null> {
    return this.ciConfig.validationMessage(content);
  }

  private async find(project: Project, id: number): Promise<Pipeline> {
    const found = await this.repo.findInProject(project.id, id);
    if (!found) throw new NotFound('Pipeline');
    return found;
  }

  private async refNames(project: Project, tag: boolean): Promise<string[]> {
    if (!this.git.exists(project.id)) return [];
    const repo = this.git.repository(project.id);
    return tag ? (await repo.tags()).map((t) => t.name) : await repo.branchNames();
  }

  /**
   * Users (one statement), coverage (one statement, unless the list statement brought it) and commits
   * (git, one per distinct sha) of a page.
   */
  private async views(project: Project, rows: Pipeline[], knownCoverage?: Map<number, string>): Promise<PipelineView[]> {
    const repo = this.git.exists(project.id) ? this.git.repository(project.id) : undefined;
    const shas = [...new Set(rows.map((p) => p.sha))];
    const [users, coverage, commits] = await Promise.all([
      this.users.byIds(rows.map((p) => p.userId)),
      knownCoverage ?? this.repo.coverage(rows.map((p) => p.id)),
      Promise.all(shas.map((s) => (repo && parseSha(s) ? repo.commit(parseSha(s)!).catch(() => null) : Promise.resolve(null)))),
    ]);
    const committed = new Map<string, string>();
    commits.forEach((c, i) => c && committed.set(shas[i], c.committer.date));
    return rows.map((p) => ({
      pipeline: p,
      user: p.userId === null ? undefined : users.get(p.userId),
      committedAt: committed.get(p.sha) ?? null,
      coverage: coverage.get(p.id) ?? null,
    }));
  }
}
