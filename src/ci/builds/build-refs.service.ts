import { Injectable } from '@nestjs/common';
import { NotFound, RecordNotFound } from '../../common/errors/domain-errors';
import { ProjectRef } from '../../common/params/refs';
import type { Caller } from '../../common/caller/caller';
import { GitService } from '../../git/git.service';
import { parseRef } from '../../git/names';
import { ProjectResolver } from '../../projects/project-resolver.service';
import { BuildRefsRepository } from './build-refs.repository';
import { BuildView } from './builds.presenter';
import { BuildsRepository } from './builds.repository';
import { BuildsService } from './builds.service';
import { ProjectBuildsService } from './project-builds.service';

/** Whether a name can be a stored ref at all (PostgreSQL's text takes no NUL: such a name names nothing). */
const storable = (s: string) => !s.includes('\0');

/** A badge's subject: the project (already resolved for the caller) and the ref it names. */
export interface BadgeSubject {
  projectId: number;
  ref: string;
}

/**
 * A ref's builds as GitLab 8.17 reads them: the artifacts of the latest successful build of a job
 * (`GET /projects/:id/builds/artifacts/:ref_name/download?job=`), keeping a build's artifacts
 * (`POST .../builds/:id/artifacts/keep`), and what the build and coverage badges show.
 */
@Injectable()
export class BuildRefs {
  constructor(
    private readonly projects: ProjectResolver,
    private readonly refs: BuildRefsRepository,
    private readonly repo: BuildsRepository,
    private readonly builds: BuildsService,
    private readonly projectBuilds: ProjectBuildsService,
    private readonly git: GitService,
  ) {}

  /**
   * The artifacts archive of the job's newest build in the ref's latest successful pipeline
   * (`read_build`). No such pipeline or job: `404 Not found` (8.17's `find_by!`); the file gone: `404 Not Found`.
   */
  async artifactsForRef(user: Caller, ref: ProjectRef, refName: string, job: string) {
    const { project } = await this.projects.resolve(user, ref, 'read_build');
    const id = storable(refName) && storable(job) ? await this.refs.latestSuccessfulWithArtifacts(project.id, refName, job) : undefined;
    const build = id === undefined ? undefined : await this.repo.find(id);
    if (!build) throw new RecordNotFound();
    return this.builds.artifactsStream(build);
  }

  /**
   * Keeps a build's artifacts (`update_build`): the expiry date cleared, the build returned. A build
   * without artifacts, or whose artifacts have expired, is `404 Not Found` (8.17's `artifacts?`).
   */
  async keepArtifacts(user: Caller, ref: ProjectRef, id: number): Promise<BuildView> {
    const { project } = await this.projects.resolve(user, ref, 'update_build');
    const build = await this.repo.find(id);
    if (!build || build.projectId !== project.id) throw new NotFound('Build');
    const expired = build.artifactsExpireAt !== null && build.artifactsExpireAt.getTime() < Date.now();
    if (!build.artifactsFile || expired) throw new NotFound();
    await this.refs.keepArtifacts(build.id);
    return this.projectBuilds.get(user, { id: project.id }, build.id);
  }

  /**
   * The build badge's status: that of the newest pipeline of the ref at the commit the ref names now
   * (a branch, a tag or a SHA, as 8.17's `project.commit(ref)`), else `unknown`.
   */
  async badgeStatus(s: BadgeSubject): Promise<string> {
    const rev = parseRef(s.ref);
    if (!rev || !this.git.exists(s.projectId)) return 'unknown';
    const commit = await this.git
      .repository(s.projectId)
      .commit(rev)
      .catch(() => null);
    if (!commit) return 'unknown';
    return (await this.refs.pipelineStatus(s.projectId, s.ref, commit.id)) ?? 'unknown';
  }

  /**
   * The coverage badge's figure: the ref's latest successful pipeline's coverage (its `"%.2f"` mean), or
   * with `job` that build's, as a whole number (8.17's `to_i`, which truncates); undefined when unknown.
   */
  async badgeCoverage(s: BadgeSubject, job: string | undefined): Promise<number | undefined> {
    const name = job === '' ? undefined : job;
    if (!storable(s.ref) || (name !== undefined && !storable(name))) return undefined;
    const raw = await this.refs.coverage(s.projectId, s.ref, name);
    if (raw === undefined || raw === null || !Number.isFinite(raw)) return undefined;
    // a build's coverage is truncated as it is; a pipeline's is its "%.2f" text, truncated
    return Math.trunc(name === undefined ? Number(raw.toFixed(2)) : raw);
  }
}
