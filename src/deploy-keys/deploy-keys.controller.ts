import { Controller, Delete, Get, Param, Post } from '@nestjs/common';
import { ApiOkResponse } from '@nestjs/swagger';
import { Admin, CurrentUser, Caller } from '../common/caller/caller';
import { API } from '../common/http/routes';
import { PaginationDto } from '../common/pagination/pagination.dto';
import { IdParam, Input } from '../common/params/params';
import { ProjectRef, ProjectRefParam } from '../common/params/refs';
import { ApiCreated, ApiPageResponse } from '../openapi/response-types';
import { DeployKeysService } from './deploy-keys.service';
import { presentDeployKey, presentDeployKeysProject } from './deploy-keys.presenter';
import { DeployKeyResponse, DeployKeysProjectResponse } from './deploy-keys.responses';
import { CreateDeployKeyDto } from './dto/deploy-keys.dto';

/** `GET /deploy_keys`: every deploy key of the instance, for administrators. */
@Controller(API)
export class AllDeployKeysController {
  constructor(private readonly deployKeys: DeployKeysService) {}

  @Admin()
  @ApiPageResponse(DeployKeyResponse)
  @Get('deploy_keys')
  async all(@Input() q: PaginationDto) {
    return (await this.deployKeys.all(q)).map(presentDeployKey);
  }
}

/** A project's deploy keys; v3 serves each route under `deploy_keys` and under its alias `keys`. */
function projectDeployKeysController(path: 'deploy_keys' | 'keys') {
  @Controller(`${API}/projects/:id/${path}`)
  class ProjectDeployKeysController {
    constructor(readonly deployKeys: DeployKeysService) {}

    @ApiPageResponse(DeployKeyResponse)
    @Get()
    async list(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Input() q: PaginationDto) {
      return (await this.deployKeys.list(user, id, q)).map(presentDeployKey);
    }

    @ApiOkResponse({ type: DeployKeyResponse })
    @Get(':key_id')
    async show(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Param('key_id', IdParam) keyId: number) {
      return presentDeployKey(await this.deployKeys.get(user, id, keyId));
    }

    @ApiCreated(DeployKeyResponse)
    @Post()
    async create(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Input() dto: CreateDeployKeyDto) {
      return presentDeployKey(await this.deployKeys.add(user, id, dto));
    }

    @ApiCreated(DeployKeyResponse)
    @Post(':key_id/enable')
    async enable(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Param('key_id', IdParam) keyId: number) {
      return presentDeployKey(await this.deployKeys.enable(user, id, keyId));
    }

    /** v3's verb is DELETE (200); POST is accepted too (201), as clients of later versions send it. */
    @ApiOkResponse({ type: DeployKeyResponse })
    @Delete(':key_id/disable')
    async disable(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Param('key_id', IdParam) keyId: number) {
      return presentDeployKey(await this.deployKeys.disable(user, id, keyId));
    }

    @ApiCreated(DeployKeyResponse)
    @Post(':key_id/disable')
    async disableByPost(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Param('key_id', IdParam) keyId: number) {
      return presentDeployKey(await this.deployKeys.disable(user, id, keyId));
    }

    @ApiOkResponse({ type: DeployKeysProjectResponse })
    @Delete(':key_id')
    async remove(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Param('key_id', IdParam) keyId: number) {
      return presentDeployKeysProject(await this.deployKeys.remove(user, id, keyId));
    }
  }
  Object.defineProperty(ProjectDeployKeysController, 'name', { value: path === 'keys' ? 'ProjectKeysController' : 'ProjectDeployKeysController' });
  return ProjectDeployKeysController;
}

export const ProjectDeployKeysController = projectDeployKeysController('deploy_keys');
export const ProjectKeysController = projectDeployKeysController('keys');
