import { Controller, Delete, Get, Param, Post, Put } from '@nestjs/common';
import { Admin, CurrentUser, Caller } from '../common/caller/caller';
import { API } from '../common/http/routes';
import { IdParam, Input } from '../common/params/params';
import { CreateProjectDto, ListProjectsDto, UpdateProjectDto } from './dto/project.dto';
import { ProjectCreation } from './project-creation.service';
import { ProjectViews } from './project-views.service';
import { ProjectsService } from './projects.service';
import { ApiOkResponse } from '@nestjs/swagger';
import { ApiCreated, ApiNotModified, ApiPageResponse, ApiTrueResponse } from '../openapi/response-types';
import { ProjectResponse } from './projects.responses';
import { ProjectRef, ProjectRefParam } from '../common/params/refs';

/** `GET /projects/:id/events` is served by the events area; members by the members area. */
@Controller(`${API}/projects`)
export class ProjectsController {
  constructor(
    private readonly projects: ProjectsService,
    private readonly creation: ProjectCreation,
    private readonly views: ProjectViews,
  ) {}

  @ApiPageResponse(ProjectResponse)
  @Get()
  async list(@CurrentUser() user: Caller, @Input() q: ListProjectsDto) {
    return this.views.page(user, await this.projects.list(user, 'member', q), { permissions: true });
  }

  @ApiPageResponse(ProjectResponse)
  @Get('owned')
  async owned(@CurrentUser() user: Caller, @Input() q: ListProjectsDto) {
    return this.views.page(user, await this.projects.list(user, 'owned', q), { permissions: true });
  }

  @ApiPageResponse(ProjectResponse)
  @Get('starred')
  async starred(@CurrentUser() user: Caller, @Input() q: ListProjectsDto) {
    return this.views.page(user, await this.projects.list(user, 'starred', q));
  }

  @Admin()
  @ApiPageResponse(ProjectResponse)
  @Get('all')
  async all(@CurrentUser() user: Caller, @Input() q: ListProjectsDto) {
    return this.views.page(user, await this.projects.list(user, 'all', q), { permissions: true });
  }

  @ApiPageResponse(ProjectResponse)
  @Get('search/:query')
  async search(@CurrentUser() user: Caller, @Param('query') query: string, @Input() q: ListProjectsDto) {
    return this.views.page(user, await this.projects.list(user, 'search', q, query));
  }

  @ApiCreated(ProjectResponse)
  @Post()
  async create(@CurrentUser() user: Caller, @Input() dto: CreateProjectDto) {
    return this.views.one(user, await this.creation.create(user, dto), { runnersToken: true });
  }

  @Admin()
  @ApiCreated(ProjectResponse)
  @Post('user/:userId')
  async createForUser(@CurrentUser() user: Caller, @Param('userId', IdParam) userId: number, @Input() dto: CreateProjectDto) {
    return this.views.one(user, await this.creation.create(user, dto, userId), { runnersToken: true });
  }

  @ApiCreated(ProjectResponse)
  @Post('fork/:id')
  async fork(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef) {
    return this.views.one(user, await this.creation.fork(user, id), { runnersToken: true });
  }

  @ApiOkResponse({ type: ProjectResponse })
  @Get(':id')
  async show(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef) {
    return this.views.resolved(user, await this.projects.show(user, id), { permissions: true, runnersToken: true });
  }

  @ApiOkResponse({ type: ProjectResponse })
  @Put(':id')
  async update(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Input() dto: UpdateProjectDto) {
    return this.views.one(user, await this.projects.update(user, id, dto), { runnersToken: true });
  }

  @ApiCreated(ProjectResponse)
  @ApiNotModified()
  @Post(':id/star')
  async star(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef) {
    return this.views.one(user, await this.projects.star(user, id));
  }

  @ApiOkResponse({ type: ProjectResponse })
  @ApiNotModified()
  @Delete(':id/star')
  async unstar(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef) {
    return this.views.one(user, await this.projects.unstar(user, id));
  }

  @ApiCreated(ProjectResponse)
  @Post(':id/archive')
  async archive(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef) {
    return this.views.one(user, await this.projects.setArchived(user, id, true));
  }

  @ApiCreated(ProjectResponse)
  @Post(':id/unarchive')
  async unarchive(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef) {
    return this.views.one(user, await this.projects.setArchived(user, id, false));
  }

  /** 200 with body `true` (sent as JSON by the global JSON response interceptor). */
  @ApiTrueResponse()
  @Delete(':id')
  remove(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef) {
    return this.projects.remove(user, id);
  }
}
