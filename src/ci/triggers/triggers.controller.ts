import { Controller, Delete, Get, Param, Post } from '@nestjs/common';
import { CurrentUser, Public, Caller } from '../../common/caller/caller';
import { API } from '../../common/http/routes';
import { PaginationDto } from '../../common/pagination/pagination.dto';
import { Input } from '../../common/params/params';
import { TriggerBuildsDto, TriggerRefBuildsDto } from './dto/triggers.dto';
import { presentTrigger } from './triggers.presenter';
import { TriggersService } from './triggers.service';
import { ApiOkResponse } from '@nestjs/swagger';
import { ApiCreated, ApiPageResponse } from '../../openapi/response-types';
import { TriggerRequestResponse, TriggerResponse } from './triggers.responses';
import { ProjectRef, ProjectRefParam } from '../../common/params/refs';

@Controller(`${API}/projects/:id`)
export class TriggersController {
  constructor(private readonly triggers: TriggersService) {}

  @ApiPageResponse(TriggerResponse)
  @Get('triggers')
  async list(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Input() q: PaginationDto) {
    return (await this.triggers.list(user, id, q)).map(presentTrigger);
  }

  @ApiOkResponse({ type: TriggerResponse })
  @Get('triggers/:token')
  async show(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Param('token') token: string) {
    return presentTrigger(await this.triggers.get(user, id, token));
  }

  @ApiCreated(TriggerResponse)
  @Post('triggers')
  async create(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef) {
    return presentTrigger(await this.triggers.create(user, id));
  }

  @ApiOkResponse({ type: TriggerResponse })
  @Delete('triggers/:token')
  async remove(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Param('token') token: string) {
    return presentTrigger(await this.triggers.remove(user, id, token));
  }

  /** No login: the trigger token is the credential. */
  @Public()
  @ApiCreated(TriggerRequestResponse)
  @Post('trigger/builds')
  trigger(@Param('id', ProjectRefParam) id: ProjectRef, @Input() dto: TriggerBuildsDto): Promise<TriggerRequestResponse> {
    return this.triggers.trigger(id, dto);
  }

  /** The same with the ref in the path (GitLab 8.17's `post ":id/(ref/:ref/)trigger/builds"`); `%2F` for a `/` in it. */
  @Public()
  @ApiCreated(TriggerRequestResponse)
  @Post('ref/:ref/trigger/builds')
  triggerRef(@Param('id', ProjectRefParam) id: ProjectRef, @Param('ref') ref: string, @Input() dto: TriggerRefBuildsDto): Promise<TriggerRequestResponse> {
    return this.triggers.trigger(id, { ...dto, ref });
  }
}
