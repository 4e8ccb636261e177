import { Injectable } from '@nestjs/common';
import { PageParams, Paginated, paginateAll } from '../common/pagination/pagination';
import { ApplicationSettingsService } from '../application-settings/application-settings.service';
import { SecretsService } from '../common/crypto/secrets.service';
import { NotFound, Unprocessable } from '../common/errors/domain-errors';
import { ProjectResolver } from '../projects/project-resolver.service';
import { CreateHookDto, UpdateHookDto } from './dto/hook.dto';
import { newHookColumns, optionColumns, urlColumnsOr } from './hook-attributes';
import { HooksRepository } from './hooks.repository';
import { WebHook, WebHookLog } from './web-hook.entity';
import { ProjectRef } from '../common/params/refs';
import type { Caller } from '../common/caller/caller';

/** GitLab's 422; a URL refused for where it leads says why (and which setting allows it). */
const invalidUrl = (blocked?: string) => new Unprocessable(blocked ? `Invalid url given: url ${blocked}` : 'Invalid url given');

/** Project webhooks (GitLab 8.8's v3 endpoints): managed by masters and owners (`admin_project`). */
@Injectable()
export class HooksService {
  constructor(
    private readonly hooks: HooksRepository,
    private readonly projects: ProjectResolver,
    private readonly settings: ApplicationSettingsService,
    private readonly secrets: SecretsService,
  ) {}

  /** Whole on the first page unless `per_page` says otherwise (as it was answered before it was paged). */
  async list(user: Caller, ref: ProjectRef, q: PageParams): Promise<Paginated<WebHook>> {
    const { project } = await this.projects.resolve(user, ref, 'admin_project');
    return paginateAll(await this.hooks.projectHooks(project.id), q, { whole: true });
  }

  async get(user: Caller, ref: ProjectRef, id: number): Promise<WebHook> {
    const { project } = await this.projects.resolve(user, ref, 'admin_project');
    return this.find(project.id, id);
  }

  /** `url` (http/https; a local address only when the admin allows it) → 422 "Invalid url given" otherwise. */
  async create(user: Caller, ref: ProjectRef, dto: CreateHookDto): Promise<WebHook> {
    const { project } = await this.projects.resolve(user, ref, 'admin_project');
    const url = await this.vet(dto.url);
    return this.hooks.insert(undefined, newHookColumns('ProjectHook', project.id, url, optionColumns(this.secrets, dto)));
  }

  /** `url` (required, as 8.17) and any switch; saving a hook also re-enables it when failures had disabled it. */
  async update(user: Caller, ref: ProjectRef, id: number, dto: UpdateHookDto): Promise<WebHook> {
    const { project } = await this.projects.resolve(user, ref, 'admin_project');
    const hook = await this.find(project.id, id);
    const url = await this.vet(dto.url);
    return this.hooks.update(hook.id, { ...url, ...optionColumns(this.secrets, dto), disabledAt: null, recentFailures: 0 });
  }

  /** GitLab 8.8: 200 with the hook, or `null` when there is none. */
  async remove(user: Caller, ref: ProjectRef, id: number): Promise<WebHook | null> {
    const { project } = await this.projects.resolve(user, ref, 'admin_project');
    const hook = await this.hooks.findInProject(project.id, id);
    if (hook) await this.hooks.delete(hook.id);
    return hook;
  }

  /** The hook's last 100 deliveries, newest first. */
  async deliveries(user: Caller, ref: ProjectRef, id: number, q: PageParams): Promise<Paginated<WebHookLog>> {
    const { project } = await this.projects.resolve(user, ref, 'admin_project');
    const hook = await this.find(project.id, id);
    return paginateAll(await this.hooks.deliveries(hook.id), q, { whole: true });
  }

  private async find(projectId: number, id: number): Promise<WebHook> {
    const hook = await this.hooks.findInProject(projectId, id);
    if (!hook) throw new NotFound('Hook');
    return hook;
  }

  private async vet(raw: string): Promise<Partial<WebHook>> {
    return urlColumnsOr(this.secrets, raw, (await this.settings.get()).allowLocalRequestsFromHooksAndServices, invalidUrl);
  }
}
