import { Controller, Delete, Get, Param, Post, Put } from '@nestjs/common';
import { Admin, CurrentUser, Caller } from '../../common/caller/caller';
import { API } from '../../common/http/routes';
import { IdParam, Input } from '../../common/params/params';
import { EnableRunnerDto, ListRunnersDto, UpdateRunnerDto } from './dto/runners.dto';
import { presentRunner, presentRunnerDetail } from './runners.presenter';
import { RunnersApiService } from './runners-api.service';
import { ApiOkResponse } from '@nestjs/swagger';
import { ApiCreated, ApiPageResponse } from '../../openapi/response-types';
import { RunnerDetailResponse, RunnerResponse } from './runners.responses';
import { ProjectRef, ProjectRefParam } from '../../common/params/refs';

/** `/api/v3/runners` and `/api/v3/projects/:id/runners`. */
@Controller(API)
export class RunnersController {
  constructor(private readonly runners: RunnersApiService) {}

  @ApiPageResponse(RunnerResponse)
  @Get('runners')
  async list(@CurrentUser() user: Caller, @Input() q: ListRunnersDto) {
    return (await this.runners.listOwned(user, q)).map(presentRunner);
  }

  @Admin()
  @ApiPageResponse(RunnerResponse)
  @Get('runners/all')
  async all(@Input() q: ListRunnersDto) {
    return (await this.runners.listAll(q)).map(presentRunner);
  }

  @ApiOkResponse({ type: RunnerDetailResponse })
  @Get('runners/:runnerId')
  async show(@CurrentUser() user: Caller, @Param('runnerId', IdParam) id: number) {
    return presentRunnerDetail(await this.runners.get(user, id));
  }

  @ApiOkResponse({ type: RunnerDetailResponse })
  @Put('runners/:runnerId')
  async update(@CurrentUser() user: Caller, @Param('runnerId', IdParam) id: number, @Input() dto: UpdateRunnerDto) {
    return presentRunnerDetail(await this.runners.update(user, id, dto));
  }

  @ApiOkResponse({ type: RunnerResponse })
  @Delete('runners/:runnerId')
  async remove(@CurrentUser() user: Caller, @Param('runnerId', IdParam) id: number) {
    return presentRunner(await this.runners.remove(user, id));
  }

  @ApiPageResponse(RunnerResponse)
  @Get('projects/:id/runners')
  async listForProject(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Input() q: ListRunnersDto) {
    return (await this.runners.listForProject(user, id, q)).map(presentRunner);
  }

  @ApiCreated(RunnerResponse)
  @Post('projects/:id/runners')
  async enable(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Input() dto: EnableRunnerDto) {
    return presentRunner(await this.runners.enable(user, id, dto));
  }

  @ApiOkResponse({ type: RunnerResponse })
  @Delete('projects/:id/runners/:runnerId')
  async disable(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Param('runnerId', IdParam) runnerId: number) {
    return presentRunner(await this.runners.disable(user, id, runnerId));
  }
}
