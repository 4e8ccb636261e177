import { Controller, Delete, Get, Param, Post } from '@nestjs/common';
import { Admin, CurrentUser, Caller } from '../common/caller/caller';
import { API } from '../common/http/routes';
import { Input } from '../common/params/params';
import { GroupRef, GroupRefParam, ProjectRef, ProjectRefParam } from '../common/params/refs';
import { ProjectViews } from '../projects/project-views.service';
import { CreateGroupDto, ListGroupProjectsDto, ListGroupsDto } from './dto/group.dto';
import { GroupViews } from './group-views.service';
import { GroupsService } from './groups.service';
import { ApiOkResponse } from '@nestjs/swagger';
import { ApiCreated, ApiPageResponse } from '../openapi/response-types';
import { ProjectResponse } from '../projects/projects.responses';
import { GroupDetailResponse, GroupResponse } from './groups.responses';

/** Group members are served by the members controller. */
@Controller(`${API}/groups`)
export class GroupsController {
  constructor(
    private readonly groups: GroupsService,
    private readonly views: GroupViews,
    private readonly projectViews: ProjectViews,
  ) {}

  @ApiPageResponse(GroupResponse)
  @Get()
  async list(@CurrentUser() user: Caller, @Input() q: ListGroupsDto) {
    return this.views.page(await this.groups.list(user, q));
  }

  @ApiCreated(GroupResponse)
  @Post()
  async create(@CurrentUser() user: Caller, @Input() dto: CreateGroupDto) {
    return this.views.one(await this.groups.create(user, dto));
  }

  /** GroupDetail: the group with the projects the caller may read in it (first 100). */
  @ApiOkResponse({ type: GroupDetailResponse })
  @Get(':id')
  async show(@CurrentUser() user: Caller, @Param('id', GroupRefParam) id: GroupRef) {
    return this.views.detail(user, await this.groups.detail(user, id));
  }

  @ApiOkResponse({ type: GroupResponse })
  @Delete(':id')
  async remove(@CurrentUser() user: Caller, @Param('id', GroupRefParam) id: GroupRef) {
    return this.views.one(await this.groups.remove(user, id));
  }

  @ApiPageResponse(ProjectResponse)
  @Get(':id/projects')
  async projectsOf(@CurrentUser() user: Caller, @Param('id', GroupRefParam) id: GroupRef, @Input() q: ListGroupProjectsDto) {
    return this.projectViews.page(user, await this.groups.projectsOf(user, id, q));
  }

  /** Transfers a project into the group (administrators). */
  @Admin()
  @ApiCreated(ProjectResponse)
  @Post(':id/projects/:projectId')
  async transfer(@CurrentUser() user: Caller, @Param('id', GroupRefParam) id: GroupRef, @Param('projectId', ProjectRefParam) projectId: ProjectRef) {
    return this.projectViews.one(user, await this.groups.transfer(id, projectId), { runnersToken: true });
  }
}
