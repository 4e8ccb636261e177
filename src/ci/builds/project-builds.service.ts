import { Injectable } from '@nestjs/common';
import { Forbidden, NotFound, Rejected } from '../../common/errors/domain-errors';
import { Paginated, pageRequest } from '../../common/pagination/pagination';
import { GitService } from '../../git/git.service';
import { Commit } from '../../git/objects';
import { parseRef, parseSha } from '../../git/names';
import { ProjectResolver } from '../../projects/project-resolver.service';
import { Project } from '../../projects/project.entity';
import { SecretsService } from '../../common/crypto/secrets.service';
import { UserDirectory } from '../../users/user-directory.service';
import { PipelinesService } from '../pipelines/pipelines.service';
import { FINISHED } from './build.entity';
import { BuildView } from './builds.presenter';
import { BuildRow, BuildsRepository, BuildWithPeople } from './builds.repository';
import { BuildsService } from './builds.service';
import { ListBuildsDto } from './dto/builds.dto';
import { ProjectRef } from '../../common/params/refs';
import type { Caller } from '../../common/caller/caller';

/** GitLab 8.17's build scopes (HasStatus::AVAILABLE_STATUSES), and `manual` (decision 36). */
const SCOPES = ['created', 'pending', 'running', 'failed', 'success', 'canceled', 'skipped', 'manual'];

/** Reads `scope` (a string or an array); an unknown value is GitLab's 400. */
function parseScope(raw: unknown): string[] | undefined {
  if (raw === undefined || raw === null || raw === '') return undefined;
  const list = (Array.isArray(raw) ? raw : [raw]).map(String).filter((s) => s !== '');
  if (list.length === 0) return undefined;
  if (list.some((s) => !SCOPES.includes(s))) throw new Rejected('Scope contains invalid value(s)');
  return list;
}

/**
 * GitLab 8.17's `Ci::Build#playable?`: a manual action with commands, of a project with builds, that
 * waits (`manual` once reached, decision 36; `skipped` as 8.17 saved actions, and when not reached).
 */
export function isPlayable(build: Pick<BuildRow, 'when' | 'status' | 'commands'>, buildsEnabled: boolean): boolean {
  return buildsEnabled && !!build.commands && build.when === 'manual' && (build.status === 'manual' || build.status === 'skipped');
}

/** The v3 builds API (`/projects/:id/builds`): reading with `read_build`, steering with `update_build`. */
@Injectable()
export class ProjectBuildsService {
  constructor(
    private readonly projects: ProjectResolver,
    private readonly repo: BuildsRepository,
    private readonly builds: BuildsService,
    private readonly pipelines: PipelinesService,
    private readonly users: UserDirectory,
    private readonly git: GitService,
    private readonly secrets: SecretsService,
  ) {}

  async list(user: Caller, ref: ProjectRef, q: ListBuildsDto): Promise<Paginated<BuildView>> {
    const { project } = await this.projects.resolve(user, ref, 'read_build');
    const scope = parseScope(q.scope);
    const page = pageRequest(q);
    const [rows, total] = await this.repo.listByProject(project.id, scope, page);
    return new Paginated(await this.withCommits(project, rows), total, page);
  }

  /**
   * The builds of a commit's pipelines, a page at a time (GitLab paginates them too): `[]` for a
   * commit without pipeline, 404 for a sha the repository does not have (8.17's lib/api/builds.rb).
   */
  async listForCommit(user: Caller, ref: ProjectRef, sha: string, q: ListBuildsDto): Promise<Paginated<BuildView>> {
    const { project } = await this.projects.resolve(user, ref, 'read_build');
    const scope = parseScope(q.scope);
    const rev = parseRef(sha);
    const commit = rev
      ? await this.git
          .repository(project.id)
          .commit(rev)
          .catch(() => null)
      : null;
    if (!commit) throw new NotFound();
    const page = pageRequest(q);
    const { items, total } = await this.repo.listBySha(project.id, commit.id, scope, page);
    return new Paginated(await this.withCommits(project, items), total, page);
  }

  async get(user: Caller, ref: ProjectRef, id: number): Promise<BuildView> {
    const { project } = await this.projects.resolve(user, ref, 'read_build');
    return (await this.withCommits(project, [await this.findWithPeople(project, id)]))[0];
  }

  async artifacts(user: Caller, ref: ProjectRef, id: number) {
    const { project } = await this.projects.resolve(user, ref, 'read_build');
    return this.builds.artifactsStream(await this.find(project, id));
  }

  /** The stored trace, streamed, with the build token and the project's runners token masked. */
  async trace(user: Caller, ref: ProjectRef, id: number): Promise<{ id: number; stream: NodeJS.ReadableStream }> {
    const { project } = await this.projects.resolve(user, ref, 'read_build');
    const build = await this.find(project, id);
    return { id: build.id, stream: this.builds.traceStream(build, this.secrets.decrypt(project.runnersTokenEncrypted)) };
  }

  /** What a live follow of the trace needs: the build and the secrets to mask (read access as for the trace). */
  async traceToFollow(user: Caller, ref: ProjectRef, id: number): Promise<{ build: BuildRow; secrets: string[] }> {
    const { project } = await this.projects.resolve(user, ref, 'read_build');
    const build = await this.find(project, id);
    return { build, secrets: this.builds.traceSecrets(build, this.secrets.decrypt(project.runnersTokenEncrypted)) };
  }

  /** Pending or running → canceled (finished builds are returned unchanged); the pipeline moves on. */
  async cancel(user: Caller, ref: ProjectRef, id: number): Promise<BuildView> {
    const { project } = await this.projects.resolve(user, ref, 'update_build');
    const build = await this.find(project, id);
    const finished = await this.builds.end(build, ['pending', 'running'], 'canceled');
    if (finished) {
      await this.builds.signalTrace(build.id);
      await this.pipelines.buildFinished(finished);
    }
    return (await this.withCommits(project, [(await this.repo.findWithPeople(build.id))!]))[0];
  }

  /** A finished build → a new pending build with the same job (decision 2); the old one keeps its status. */
  async retry(user: Caller, ref: ProjectRef, id: number): Promise<BuildView> {
    const { project } = await this.projects.resolve(user, ref, 'update_build');
    const build = await this.find(project, id);
    if (!(FINISHED as string[]).includes(build.status) || !build.commands) throw new Forbidden('Build is not retryable');
    const retried = await this.pipelines.retry(build, user.id);
    return (await this.withCommits(project, [(await this.repo.findWithPeople(retried))!]))[0];
  }

  /**
   * `POST .../builds/:id/play` (GitLab 8.17): a manual action waiting to be started is enqueued as the
   * caller's; anything else is `400 Unplayable Job`. 8.17 asked only `read_build` here; a reporter
   * could then start a deployment, so this asks `update_build` as cancel and retry do (security first).
   */
  async play(user: Caller, ref: ProjectRef, id: number): Promise<BuildView> {
    const { project } = await this.projects.resolve(user, ref, 'update_build');
    const build = await this.find(project, id);
    if (!isPlayable(build, project.buildsEnabled)) throw new Rejected('Unplayable Job');
    const played = await this.pipelines.play(build.id, user.id);
    return (await this.withCommits(project, [(await this.repo.findWithPeople(played))!]))[0];
  }

  /** A finished build with a trace or artifacts: both removed, `erased_at`/`erased_by` set, status unchanged. */
  async erase(user: Caller, ref: ProjectRef, id: number): Promise<BuildView> {
    const { project } = await this.projects.resolve(user, ref, 'update_build');
    const build = await this.find(project, id);
    const erasable = (FINISHED as string[]).includes(build.status) && (build.traceSize > 0 || !!build.artifactsFile);
    if (!erasable) throw new Forbidden('Build is not erasable!');
    await this.repo.erase(build.id, user.id);
    await this.builds.files.removeAll(build.id);
    return (await this.withCommits(project, [(await this.repo.findWithPeople(build.id))!]))[0];
  }

  /**
   * Builds of a project as the builds API shows them (with commit, user and runner), by id, for other
   * areas that embed a build (a deployment's `deployable`): two statements and the commits, whatever the count.
   */
  async viewsOf(project: Project, ids: number[]): Promise<Map<number, BuildView>> {
    const views = await this.withCommits(project, await this.repo.findManyWithPeople(project.id, [...new Set(ids)]));
    return new Map(views.map((v) => [v.build.id, v]));
  }

  private async find(project: Project, id: number): Promise<BuildRow> {
    return (await this.findWithPeople(project, id)).build;
  }

  /** The project's build `id` with its user and runner (`404 Build Not Found`): one statement. */
  private async findWithPeople(project: Project, id: number): Promise<BuildWithPeople> {
    const found = await this.repo.findWithPeople(id);
    if (!found || found.build.projectId !== project.id) throw new NotFound('Build');
    return found;
  }

  /**
   * The commits (from git) and users of builds read with their runners. The users are one batched
   * statement: joined into the builds' statement, every row carried all of its user's columns, and
   * parsing them cost a 100-build page ~3× the CPU of the rest (bench:ci, builds list).
   */
  private async withCommits(project: Project, items: BuildWithPeople[]): Promise<BuildView[]> {
    const repo = this.git.repository(project.id);
    const shas = [...new Set(items.map((r) => r.build.sha))];
    const [commits, users] = await Promise.all([
      Promise.all(shas.map((s) => (parseSha(s) ? repo.commit(parseSha(s)!).catch(() => null) : Promise.resolve(null)))),
      this.users.byIds(items.map((r) => r.build.userId)),
    ]);
    const bySha = new Map<string, Commit>();
    commits.forEach((c, i) => c && bySha.set(shas[i], c));
    return items.map((b) => ({ ...b, user: b.build.userId === null ? undefined : users.get(b.build.userId), commit: bySha.get(b.build.sha) }));
  }
}
