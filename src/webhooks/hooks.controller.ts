import { Controller, Delete, Get, Param, Post, Put } from '@nestjs/common';
import { CurrentUser, Caller } from '../common/caller/caller';
import { API } from '../common/http/routes';
import { PaginationDto } from '../common/pagination/pagination.dto';
import { IdParam, Input } from '../common/params/params';
import { CreateHookDto, UpdateHookDto } from './dto/hook.dto';
import { presentDelivery, presentProjectHook } from './hooks.presenter';
import { HooksService } from './hooks.service';
import { ApiOkResponse } from '@nestjs/swagger';
import { ApiCreated, ApiNullableResponse, ApiPageResponse } from '../openapi/response-types';
import { HookDeliveryResponse, ProjectHookResponse } from './hooks.responses';
import { ProjectRef, ProjectRefParam } from '../common/params/refs';

/** Project webhooks (masters and owners). */
@Controller(`${API}/projects/:id/hooks`)
export class HooksController {
  constructor(private readonly hooks: HooksService) {}

  @ApiPageResponse(ProjectHookResponse)
  @Get()
  async list(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Input() q: PaginationDto) {
    return (await this.hooks.list(user, id, q)).map(presentProjectHook);
  }

  @ApiOkResponse({ type: ProjectHookResponse })
  @Get(':hookId')
  async show(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Param('hookId', IdParam) hookId: number) {
    return presentProjectHook(await this.hooks.get(user, id, hookId));
  }

  /** The hook's last 100 deliveries, newest first. */
  @ApiPageResponse(HookDeliveryResponse, 'the last 100 deliveries, newest first; all on the first page unless `per_page` says otherwise')
  @Get(':hookId/events')
  async deliveries(
    @CurrentUser() user: Caller,
    @Param('id', ProjectRefParam) id: ProjectRef,
    @Param('hookId', IdParam) hookId: number,
    @Input() q: PaginationDto,
  ) {
    return (await this.hooks.deliveries(user, id, hookId, q)).map(presentDelivery);
  }

  @ApiCreated(ProjectHookResponse)
  @Post()
  async create(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Input() dto: CreateHookDto) {
    return presentProjectHook(await this.hooks.create(user, id, dto));
  }

  @ApiOkResponse({ type: ProjectHookResponse })
  @Put(':hookId')
  async update(
    @CurrentUser() user: Caller,
    @Param('id', ProjectRefParam) id: ProjectRef,
    @Param('hookId', IdParam) hookId: number,
    @Input() dto: UpdateHookDto,
  ) {
    return presentProjectHook(await this.hooks.update(user, id, hookId, dto));
  }

  @ApiNullableResponse(ProjectHookResponse, 'the deleted hook; null when there was none')
  @Delete(':hookId')
  async remove(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Param('hookId', IdParam) hookId: number) {
    const hook = await this.hooks.remove(user, id, hookId);
    return hook ? presentProjectHook(hook) : null;
  }
}
