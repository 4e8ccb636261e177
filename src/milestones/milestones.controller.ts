import { Controller, Get, Param, Post, Put } from '@nestjs/common';
import { CurrentUser, Caller } from '../common/caller/caller';
import { API } from '../common/http/routes';
import { IdParam, Input } from '../common/params/params';
import { CreateMilestoneDto, ListMilestonesDto, UpdateMilestoneDto } from './dto/milestone.dto';
import { presentMilestone } from './milestones.presenter';
import { MilestonesService } from './milestones.service';
import { ApiOkResponse } from '@nestjs/swagger';
import { ApiCreated, ApiPageResponse } from '../openapi/response-types';
import { MilestoneResponse } from './milestones.responses';
import { ProjectRef, ProjectRefParam } from '../common/params/refs';

/** `GET .../milestones/:milestone_id/issues` is served by the issues controller (it is a list of issues). */
@Controller(`${API}/projects/:id/milestones`)
export class MilestonesController {
  constructor(private readonly milestones: MilestonesService) {}

  @ApiPageResponse(MilestoneResponse)
  @Get()
  async list(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Input() q: ListMilestonesDto) {
    return (await this.milestones.list(user, id, q)).map(presentMilestone);
  }

  @ApiOkResponse({ type: MilestoneResponse })
  @Get(':milestoneId')
  async show(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Param('milestoneId', IdParam) milestoneId: number) {
    return presentMilestone(await this.milestones.get(user, id, milestoneId));
  }

  @ApiCreated(MilestoneResponse)
  @Post()
  async create(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Input() dto: CreateMilestoneDto) {
    return presentMilestone(await this.milestones.create(user, id, dto));
  }

  @ApiOkResponse({ type: MilestoneResponse })
  @Put(':milestoneId')
  async update(
    @CurrentUser() user: Caller,
    @Param('id', ProjectRefParam) id: ProjectRef,
    @Param('milestoneId', IdParam) milestoneId: number,
    @Input() dto: UpdateMilestoneDto,
  ) {
    return presentMilestone(await this.milestones.update(user, id, milestoneId, dto));
  }
}
