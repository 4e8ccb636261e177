import { Controller, Delete, Get, Param, Post } from '@nestjs/common';
import { Admin } from '../common/caller/caller';
import { API } from '../common/http/routes';
import { PaginationDto } from '../common/pagination/pagination.dto';
import { IdParam, Input } from '../common/params/params';
import { presentDelivery } from './hooks.presenter';
import { CreateSystemHookDto } from './dto/system-hook.dto';
import { presentDeletedSystemHook, presentSystemHook } from './system-hooks.presenter';
import { SystemHooksService } from './system-hooks.service';
import { ApiOkResponse } from '@nestjs/swagger';
import { ApiCreated, ApiNullableResponse, ApiPageResponse } from '../openapi/response-types';
import { HookDeliveryResponse } from './hooks.responses';
import { SystemHookRecordResponse, SystemHookResponse, SystemHookTestResponse } from './system-hooks.responses';

/** System hooks: administrators only (403 for others). */
@Admin()
@Controller(`${API}/hooks`)
export class SystemHooksController {
  constructor(private readonly hooks: SystemHooksService) {}

  @ApiPageResponse(SystemHookResponse)
  @Get()
  async list(@Input() q: PaginationDto) {
    return (await this.hooks.list(q)).map(presentSystemHook);
  }

  /** 201 with the hook as a single object (../shared/docs/spec-decisions.md #11). */
  @ApiCreated(SystemHookResponse)
  @Post()
  async create(@Input() dto: CreateSystemHookDto) {
    return presentSystemHook(await this.hooks.create(dto));
  }

  /** Sends the test sample to the hook and returns it. */
  @ApiOkResponse({ type: SystemHookTestResponse })
  @Get(':id')
  test(@Param('id', IdParam) id: number): Promise<SystemHookTestResponse> {
    return this.hooks.test(id);
  }

  /** The hook's last 100 deliveries, newest first. */
  @ApiPageResponse(HookDeliveryResponse, 'the last 100 deliveries, newest first; all on the first page unless `per_page` says otherwise')
  @Get(':id/events')
  async deliveries(@Param('id', IdParam) id: number, @Input() q: PaginationDto) {
    return (await this.hooks.deliveries(id, q)).map(presentDelivery);
  }

  @ApiNullableResponse(SystemHookRecordResponse, 'the deleted hook record; null when there was none')
  @Delete(':id')
  async remove(@Param('id', IdParam) id: number) {
    return presentDeletedSystemHook(await this.hooks.remove(id));
  }
}
