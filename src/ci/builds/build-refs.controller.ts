import { Controller, Get, Header, HttpCode, Param, Post } from '@nestjs/common';
import { ApiOkResponse } from '@nestjs/swagger';
import { CurrentUser, Caller } from '../../common/caller/caller';
import { API } from '../../common/http/routes';
import { IdParam, Input } from '../../common/params/params';
import { ProjectRef, ProjectRefParam } from '../../common/params/refs';
import { ApiBinaryResponse } from '../../openapi/response-types';
import { BuildViews } from './build-views.service';
import { BuildRefs } from './build-refs.service';
import { presentArtifactsFile } from './builds.presenter';
import { BuildResponse } from './builds.responses';
import { ArtifactsByRefDto } from './dto/build-refs.dto';

/** A ref's artifacts and keeping a build's artifacts (GitLab 8.10's and 8.9's additions to `/projects/:id/builds`). */
@Controller(`${API}/projects/:id`)
export class BuildRefsController {
  constructor(
    private readonly refs: BuildRefs,
    private readonly views: BuildViews,
  ) {}

  /** Ref names may contain `/`, sent raw or as `%2F`: the route takes every segment up to `/download`. */
  @ApiBinaryResponse("the artifacts file of the job's latest successful build on the ref")
  @Get('builds/artifacts/*refName/download')
  @Header('Content-Transfer-Encoding', 'binary')
  async artifactsForRef(
    @CurrentUser() user: Caller,
    @Param('id', ProjectRefParam) id: ProjectRef,
    @Param('refName') refName: string | string[],
    @Input() q: ArtifactsByRefDto,
  ) {
    return presentArtifactsFile(await this.refs.artifactsForRef(user, id, Array.isArray(refName) ? refName.join('/') : refName, q.job));
  }

  @ApiOkResponse({ type: BuildResponse, description: 'the build, its artifacts no longer expiring' })
  @HttpCode(200)
  @Post('builds/:buildId/artifacts/keep')
  async keep(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Param('buildId', IdParam) buildId: number) {
    return this.views.one(await this.refs.keepArtifacts(user, id, buildId));
  }
}
