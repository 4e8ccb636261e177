import { Injectable } from '@nestjs/common';
import { PageParams, Paginated, paginateAll } from '../../common/pagination/pagination';
import { SecretsService } from '../../common/crypto/secrets.service';
import { NotFound, Rejected, Unauthorized } from '../../common/errors/domain-errors';
import { GitService } from '../../git/git.service';
import { parseRef } from '../../git/names';
import { ProjectResolver } from '../../projects/project-resolver.service';
import { PipelinesService } from '../pipelines/pipelines.service';
import { TriggerBuildsDto } from './dto/triggers.dto';
import { TriggerRow, TriggersRepository } from './triggers.repository';
import { ProjectRef } from '../../common/params/refs';
import type { Caller } from '../../common/caller/caller';

export interface TriggerView {
  token: string;
  createdAt: Date;
  updatedAt: Date;
  deletedAt: Date | null;
  lastUsed: Date | null;
}

/** Build triggers (`admin_build`) and running a ref's jobs with a trigger token. */
@Injectable()
export class TriggersService {
  constructor(
    private readonly projects: ProjectResolver,
    private readonly triggers: TriggersRepository,
    private readonly pipelines: PipelinesService,
    private readonly git: GitService,
    private readonly secrets: SecretsService,
  ) {}

  /** Whole on the first page unless `per_page` says otherwise (as it was answered before it was paged). */
  async list(user: Caller, ref: ProjectRef, q: PageParams): Promise<Paginated<TriggerView>> {
    const { project } = await this.projects.resolve(user, ref, 'admin_build');
    return paginateAll(await this.triggers.list(project.id), q, { whole: true }).map((t) => this.view(t));
  }

  async get(user: Caller, ref: ProjectRef, token: string): Promise<TriggerView> {
    const { project } = await this.projects.resolve(user, ref, 'admin_build');
    return this.view(await this.find(project.id, token));
  }

  async create(user: Caller, ref: ProjectRef): Promise<TriggerView> {
    const { project } = await this.projects.resolve(user, ref, 'admin_build');
    const token = this.secrets.generateToken(30);
    const t = await this.triggers.insert(project.id, this.secrets.digest(token), this.secrets.encrypt(token));
    return { token, createdAt: t.createdAt, updatedAt: t.updatedAt, deletedAt: null, lastUsed: null };
  }

  /** Soft delete: the trigger is returned with `deleted_at` set. */
  async remove(user: Caller, ref: ProjectRef, token: string): Promise<TriggerView> {
    const { project } = await this.projects.resolve(user, ref, 'admin_build');
    const t = await this.find(project.id, token);
    await this.triggers.softDelete(t.id);
    return { ...this.view(t), deletedAt: new Date() };
  }

  /** Runs the jobs of `ref` (those with `only: [triggers]` too) for a trigger token; 400 when none. */
  async trigger(projectRef: ProjectRef, dto: TriggerBuildsDto): Promise<{ id: number; variables: Record<string, string> | null }> {
    const project = await this.projects.find(projectRef);
    const variables = this.checkVariables(dto.variables);
    const t = await this.triggers.byDigest(this.secrets.digest(dto.token));
    if (!t) throw new NotFound('Trigger');
    if (t.projectId !== project.id) throw new Unauthorized();
    const name = parseRef(dto.ref);
    const repo = this.git.repository(project.id);
    const branch = name && this.git.exists(project.id) ? await repo.branch(name) : null;
    const tag = name && !branch && this.git.exists(project.id) ? await repo.tag(name) : null;
    const commit = branch?.commit ?? tag?.commit;
    if (!name || !commit) throw new Rejected('No builds created');
    const request = await this.triggers.addRequest(t.id, variables);
    // GitLab 8.17's CreateTriggerRequestService: `execute(ignore_skip_ci: true, …)`, a trigger runs a `[ci skip]` head
    const pipeline = await this.pipelines.create(
      {
        projectId: project.id,
        sha: commit.id,
        beforeSha: '0000000000000000000000000000000000000000',
        ref: name,
        tag: !!tag,
        userId: null,
        triggerRequestId: request.id,
      },
      { ignoreSkipCi: true },
    );
    if (!pipeline || !(await this.pipelines.hasBuilds(pipeline.id))) {
      if (pipeline) await this.pipelines.remove(pipeline.id);
      await this.triggers.removeRequest(request.id);
      throw new Rejected('No builds created');
    }
    return { id: request.id, variables };
  }

  private checkVariables(raw: unknown): Record<string, string> | null {
    if (raw === undefined || raw === null || raw === '') return null;
    if (typeof raw !== 'object' || Array.isArray(raw)) throw new Rejected('variables needs to be a hash');
    const entries = Object.entries(raw as Record<string, unknown>);
    if (!entries.every(([, v]) => typeof v === 'string')) throw new Rejected('variables needs to be a map of key-valued strings');
    return Object.fromEntries(entries) as Record<string, string>;
  }

  private async find(projectId: number, token: string): Promise<TriggerRow> {
    const t = token ? await this.triggers.byDigest(this.secrets.digest(token)) : undefined;
    if (!t || t.projectId !== projectId) throw new NotFound('Trigger');
    return t;
  }

  private view(t: TriggerRow): TriggerView {
    return { token: this.secrets.decrypt(t.tokenEncrypted), createdAt: t.createdAt, updatedAt: t.updatedAt, deletedAt: t.deletedAt, lastUsed: t.lastUsed };
  }
}
