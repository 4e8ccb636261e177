import { Controller, Delete, Get, Param, Post, Put } from '@nestjs/common';
import { ApiOkResponse } from '@nestjs/swagger';
import { CurrentUser, Caller } from '../../common/caller/caller';
import { API } from '../../common/http/routes';
import { PaginationDto } from '../../common/pagination/pagination.dto';
import { IdParam, Input } from '../../common/params/params';
import { ProjectRef, ProjectRefParam } from '../../common/params/refs';
import { ApiCreated, ApiPageResponse } from '../../openapi/response-types';
import { ProjectViews } from '../../projects/project-views.service';
import { DeploymentsService } from './deployments.service';
import { CreateEnvironmentDto, UpdateEnvironmentDto } from './dto/environments.dto';
import { EnvironmentViews } from './environment-views.service';
import { presentDeployment } from './environments.presenter';
import { DeploymentResponse, EnvironmentResponse } from './environments.responses';
import { EnvironmentsService } from './environments.service';

/** `/projects/:id/environments` (GitLab 8.11–8.17). */
@Controller(`${API}/projects/:id/environments`)
export class EnvironmentsController {
  constructor(
    private readonly environments: EnvironmentsService,
    private readonly views: EnvironmentViews,
  ) {}

  @ApiPageResponse(EnvironmentResponse)
  @Get()
  async list(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Input() q: PaginationDto) {
    return this.views.page(user, await this.environments.list(user, id, q));
  }

  @ApiCreated(EnvironmentResponse, 'the new environment, its slug generated from its name')
  @Post()
  async create(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Input() dto: CreateEnvironmentDto) {
    return this.views.one(user, await this.environments.create(user, id, dto));
  }

  @ApiOkResponse({ type: EnvironmentResponse })
  @Put(':environmentId')
  async update(
    @CurrentUser() user: Caller,
    @Param('id', ProjectRefParam) id: ProjectRef,
    @Param('environmentId', IdParam) environmentId: number,
    @Input() dto: UpdateEnvironmentDto,
  ) {
    return this.views.one(user, await this.environments.update(user, id, environmentId, dto));
  }

  @ApiOkResponse({ type: EnvironmentResponse, description: 'the environment as it was, deleted with its deployments' })
  @Delete(':environmentId')
  async remove(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Param('environmentId', IdParam) environmentId: number) {
    return this.views.one(user, await this.environments.remove(user, id, environmentId));
  }
}

/** `/projects/:id/deployments` (GitLab 8.11–8.17). */
@Controller(`${API}/projects/:id/deployments`)
export class DeploymentsController {
  constructor(
    private readonly deployments: DeploymentsService,
    private readonly projects: ProjectViews,
  ) {}

  @ApiPageResponse(DeploymentResponse)
  @Get()
  async list(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Input() q: PaginationDto) {
    const [page, ctx] = await Promise.all([this.deployments.list(user, id, q), this.projects.context()]);
    return page.map((v) => presentDeployment(v, ctx));
  }

  @ApiOkResponse({ type: DeploymentResponse })
  @Get(':deploymentId')
  async show(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Param('deploymentId', IdParam) deploymentId: number) {
    return presentDeployment(await this.deployments.get(user, id, deploymentId), await this.projects.context());
  }
}
