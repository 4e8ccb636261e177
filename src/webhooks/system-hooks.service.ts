import { Injectable } from '@nestjs/common';
import { PageParams, Paginated, paginateAll } from '../common/pagination/pagination';
import { ApplicationSettingsService } from '../application-settings/application-settings.service';
import { SecretsService } from '../common/crypto/secrets.service';
import { NotFound, ValidationFailed } from '../common/errors/domain-errors';
import { newHookColumns, optionColumns, urlColumnsOr } from './hook-attributes';
import { HookDeliveryService } from './hook-delivery.service';
import { HooksRepository } from './hooks.repository';
import { WebHook, WebHookLog } from './web-hook.entity';
import { CreateSystemHookDto } from './dto/system-hook.dto';
import { SAMPLE_HOOK_DATA } from './system-hook-payloads';

/** System hooks (administrators only; the controller says @Admin). */
@Injectable()
export class SystemHooksService {
  constructor(
    private readonly hooks: HooksRepository,
    private readonly delivery: HookDeliveryService,
    private readonly settings: ApplicationSettingsService,
    private readonly secrets: SecretsService,
  ) {}

  /** Whole on the first page unless `per_page` says otherwise (GitLab 8 answered it unpaginated). */
  async list(q: PageParams): Promise<Paginated<WebHook>> {
    return paginateAll(await this.hooks.systemHooks(), q, { whole: true });
  }

  /**
   * An invalid or refused URL answers 8.17's validation error (`400 {"message":{"url":["must be a
   * valid URL"]}}`); one refused for where it leads says why (`{"url":["is blocked: it resolves to a
   * loopback address ..."]}`).
   */
  async create(dto: CreateSystemHookDto): Promise<WebHook> {
    const allowLocal = (await this.settings.get()).allowLocalRequestsFromHooksAndServices;
    const url = await urlColumnsOr(this.secrets, dto.url, allowLocal, (blocked) => new ValidationFailed({ url: [blocked ?? 'must be a valid URL'] }));
    return this.hooks.insert(undefined, newHookColumns('SystemHook', null, url, optionColumns(this.secrets, dto)));
  }

  /** The hook test: sends the fixed sample synchronously and returns it (whatever the receiver answered). */
  async test(id: number): Promise<typeof SAMPLE_HOOK_DATA> {
    const hook = await this.find(id);
    await this.delivery.sendNow(hook, 'System Hook', 'project_create', SAMPLE_HOOK_DATA);
    return SAMPLE_HOOK_DATA;
  }

  async deliveries(id: number, q: PageParams): Promise<Paginated<WebHookLog>> {
    return paginateAll(await this.hooks.deliveries((await this.find(id)).id), q, { whole: true });
  }

  /** 200 with the deleted row, or `null` when there is none. */
  async remove(id: number): Promise<WebHook | null> {
    const hook = await this.hooks.findSystem(id);
    if (hook) await this.hooks.delete(hook.id);
    return hook;
  }

  private async find(id: number): Promise<WebHook> {
    const hook = await this.hooks.findSystem(id);
    if (!hook) throw new NotFound('Hook');
    return hook;
  }
}
