import { Controller, Delete, Get, Param, Post } from '@nestjs/common';
import { Admin } from '../common/auth/decorators';
import { API } from '../common/http/routes';
import { PaginationDto } from '../common/pagination/pagination.dto';
import { Input } from '../common/params/params';
import { presentDelivery } from './hooks.presenter';
import { CreateSystemHookDto } from './dto/system-hook.dto';
import { presentDeletedSystemHook, presentSystemHook } from './system-hooks.presenter';
import { SystemHooksService } from './system-hooks.service';

/** System hooks: administrators only (403 for others). */
@Admin()
@Controller(`${API}/hooks`)
export class SystemHooksController {
  constructor(private readonly hooks: SystemHooksService) {}

  @Get()
  async list(@Input() q: PaginationDto) {
    return (await this.hooks.list(q)).map(presentSystemHook);
  }

  /** 201 with the hook as a single object (spec-decisions 11). */
  @Post()
  async create(@Input() dto: CreateSystemHookDto) {
    return presentSystemHook(await this.hooks.create(dto));
  }

  /** Sends the test sample to the hook and returns it. */
  @Get(':id')
  test(@Param('id') id: string) {
    return this.hooks.test(id);
  }

  /** The hook's last 100 deliveries, newest first. */
  @Get(':id/events')
  async deliveries(@Param('id') id: string, @Input() q: PaginationDto) {
    return (await this.hooks.deliveries(id, q)).map(presentDelivery);
  }

  @Delete(':id')
  async remove(@Param('id') id: string) {
    return presentDeletedSystemHook(await this.hooks.remove(id));
  }
}
