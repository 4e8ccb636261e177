import { Injectable } from '@nestjs/common';
import { SecretsService } from '../../common/crypto/secrets.service';
import { Forbidden, NotFound, RecordNotFound, Rejected, ValidationFailed } from '../../common/errors/domain-errors';
import { Paginated, pageRequest } from '../../common/pagination/pagination';
import { ProjectResolver } from '../../projects/project-resolver.service';
import { EnableRunnerDto, ListRunnersDto, UpdateRunnerDto } from './dto/runners.dto';
import { Runner } from './runner.entity';
import { RunnerDetailView } from './runners.presenter';
import { RunnersRepository } from './runners.repository';
import { parseTagList } from './runners.service';
import { ProjectRef } from '../../common/params/refs';
import type { Caller } from '../../common/caller/caller';

const USER_SCOPES = ['active', 'paused', 'online'];
const ADMIN_SCOPES = ['specific', 'shared', ...USER_SCOPES];

function parseScope(raw: string | undefined, allowed: string[]): string | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (!allowed.includes(raw)) throw new Rejected('Scope contains invalid value');
  return raw;
}

/** The v3 runners API (GitLab 8.8 `API::Runners`): who may see, change, remove and enable which runner. */
@Injectable()
export class RunnersApiService {
  constructor(
    private readonly repo: RunnersRepository,
    private readonly projects: ProjectResolver,
    private readonly secrets: SecretsService,
  ) {}

  /** The specific runners of the projects the user masters. */
  async listOwned(user: Caller, q: ListRunnersDto): Promise<Paginated<Runner>> {
    const scope = parseScope(q.scope, USER_SCOPES);
    const page = pageRequest(q);
    const [rows, total] = await this.repo.list(user.id, scope, page);
    return new Paginated(rows, total, page);
  }

  /** Every runner (admin only: the route says so). */
  async listAll(q: ListRunnersDto): Promise<Paginated<Runner>> {
    const scope = parseScope(q.scope, ADMIN_SCOPES);
    const page = pageRequest(q);
    const [rows, total] = await this.repo.list(null, scope, page);
    return new Paginated(rows, total, page);
  }

  /** Shared runners are visible to everyone; a specific one to admins and the masters of its projects. */
  async get(user: Caller, id: number): Promise<RunnerDetailView> {
    const runner = await this.find(id);
    if (!runner.isShared && !user.admin && !(await this.repo.ownedBy(runner.id, user.id))) throw new Forbidden('No access granted');
    return this.detail(user, runner);
  }

  async update(user: Caller, id: number, dto: UpdateRunnerDto): Promise<RunnerDetailView> {
    const runner = await this.find(id);
    if (!user.admin) {
      if (runner.isShared) throw new Forbidden('Runner is shared');
      if (!(await this.repo.ownedBy(runner.id, user.id))) throw new Forbidden('No access granted');
    }
    const tagList = dto.tag_list !== undefined ? parseTagList(dto.tag_list) : undefined;
    const runUntagged = dto.run_untagged ?? runner.runUntagged;
    if (!runUntagged && (tagList ?? runner.tagList).length === 0) {
      throw new ValidationFailed({ tags_list: ["can't be empty when runner is not allowed to pick untagged jobs"] });
    }
    await this.repo.update(runner.id, { description: dto.description, active: dto.active, tagList, runUntagged: dto.run_untagged });
    return this.detail(user, (await this.repo.byId(runner.id))!);
  }

  async remove(user: Caller, id: number): Promise<Runner> {
    const runner = await this.find(id);
    if (!user.admin) {
      if (runner.isShared) throw new Forbidden('Runner is shared');
      if ((await this.repo.projectCount(runner.id)) > 1) throw new Forbidden('Runner associated with more than one project');
      if (!(await this.repo.ownedBy(runner.id, user.id))) throw new Forbidden('No access granted');
    }
    await this.repo.delete(runner.id);
    return runner;
  }

  /**
   * The project's specific runners, plus the shared runners when they serve it: the project's
   * `shared_runners_enabled` (decision 27; masters). The instance's setting is, as in GitLab 8.8, only
   * the default of new projects.
   */
  async listForProject(user: Caller, ref: ProjectRef, q: ListRunnersDto): Promise<Paginated<Runner>> {
    const { project } = await this.projects.resolve(user, ref, 'admin_project');
    const page = pageRequest(q);
    const withShared = project.sharedRunnersEnabled;
    const [rows, total] = await this.repo.listForProject(project.id, withShared, page);
    return new Paginated(rows, total, page);
  }

  /** Enables a specific runner the user masters elsewhere (admins: any specific runner); 201 even when enabled. */
  async enable(user: Caller, ref: ProjectRef, dto: EnableRunnerDto): Promise<Runner> {
    const { project } = await this.projects.resolve(user, ref, 'admin_project');
    const runner = await this.find(dto.runner_id);
    if (runner.isShared) throw new Forbidden('Runner is shared');
    if (!user.admin && !(await this.repo.ownedBy(runner.id, user.id))) throw new Forbidden('No access granted');
    await this.repo.enable(runner.id, project.id);
    return runner;
  }

  /** Disables a runner in the project; not its only project (remove the runner instead). */
  async disable(user: Caller, ref: ProjectRef, runnerId: number): Promise<Runner> {
    const { project } = await this.projects.resolve(user, ref, 'admin_project');
    const runner = await this.repo.byId(runnerId);
    if (!runner || !(await this.repo.isEnabled(runner.id, project.id))) throw new NotFound('Runner');
    if ((await this.repo.projectCount(runner.id)) === 1) {
      throw new Forbidden('Only one project associated with the runner. Please remove the runner instead');
    }
    await this.repo.disable(runner.id, project.id);
    return runner;
  }

  private async detail(user: Caller, runner: Runner): Promise<RunnerDetailView> {
    const projects = await this.repo.projectsOf(runner.id, user.admin ? null : user.id);
    const token = user.admin || !runner.isShared ? this.secrets.decrypt(runner.tokenEncrypted) : null;
    return { runner, token, projects };
  }

  private async find(id: number): Promise<Runner> {
    const runner = await this.repo.byId(id);
    if (!runner) throw new RecordNotFound();
    return runner;
  }
}
