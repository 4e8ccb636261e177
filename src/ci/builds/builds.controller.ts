import { Controller, Get, Header, HttpCode, Param, Post, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { CurrentUser, Caller } from '../../common/caller/caller';
import { API } from '../../common/http/routes';
import { IdParam, Input } from '../../common/params/params';
import { BuildViews } from './build-views.service';
import { presentArtifactsFile } from './builds.presenter';
import { ListBuildsDto, TraceDto } from './dto/builds.dto';
import { followAsEventStream } from './trace-events';
import { TraceFollower } from './trace-follower';
import { ProjectBuildsService } from './project-builds.service';
import { ApiOkResponse } from '@nestjs/swagger';
import { ApiBinaryResponse, ApiCreated, ApiPageResponse, ApiTextResponse } from '../../openapi/response-types';
import { BuildResponse } from './builds.responses';
import { ProjectRef, ProjectRefParam } from '../../common/params/refs';

/** `/api/v3/projects/:id/builds` and a commit's builds. */
@Controller(`${API}/projects/:id`)
export class BuildsController {
  constructor(
    private readonly builds: ProjectBuildsService,
    private readonly views: BuildViews,
    private readonly follower: TraceFollower,
  ) {}

  @ApiPageResponse(BuildResponse)
  @Get('builds')
  async list(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Input() q: ListBuildsDto) {
    return this.views.page(await this.builds.list(user, id, q));
  }

  @ApiPageResponse(BuildResponse)
  @Get('repository/commits/:sha/builds')
  async forCommit(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Param('sha') sha: string, @Input() q: ListBuildsDto) {
    return this.views.page(await this.builds.listForCommit(user, id, sha, q));
  }

  @ApiOkResponse({ type: BuildResponse })
  @Get('builds/:buildId')
  async show(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Param('buildId', IdParam) buildId: number) {
    return this.views.one(await this.builds.get(user, id, buildId));
  }

  @ApiBinaryResponse('the artifacts file')
  @Get('builds/:buildId/artifacts')
  @Header('Content-Transfer-Encoding', 'binary')
  async artifacts(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Param('buildId', IdParam) buildId: number) {
    return presentArtifactsFile(await this.builds.artifacts(user, id, buildId));
  }

  /**
   * The trace as text; with `Accept: text/event-stream` or `?follow=true`, a live follow as server-sent
   * events (`trace` events with `{"text"}` as it grows, then one `end` event with the final status).
   */
  @ApiTextResponse('the build trace (server-sent events with Accept: text/event-stream or follow=true)')
  @Get('builds/:buildId/trace')
  async trace(
    @CurrentUser() user: Caller,
    @Param('id', ProjectRefParam) id: ProjectRef,
    @Param('buildId', IdParam) buildId: number,
    @Input() q: TraceDto,
    @Req() req: Request,
    @Res() res: Response,
  ) {
    if (q.follow === true || /\btext\/event-stream\b/.test(req.headers.accept ?? '')) {
      const { build, secrets } = await this.builds.traceToFollow(user, id, buildId);
      await followAsEventStream(this.follower, build, secrets, req, res);
      return;
    }
    const t = await this.builds.trace(user, id, buildId);
    res.status(200);
    res.setHeader('Content-Type', 'text/plain');
    res.setHeader('Content-Disposition', `infile; filename="${t.id}.log"`);
    t.stream.on('error', () => res.destroy());
    t.stream.pipe(res);
  }

  @ApiCreated(BuildResponse)
  @Post('builds/:buildId/cancel')
  async cancel(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Param('buildId', IdParam) buildId: number) {
    return this.views.one(await this.builds.cancel(user, id, buildId));
  }

  @ApiCreated(BuildResponse, 'the new build')
  @Post('builds/:buildId/retry')
  async retry(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Param('buildId', IdParam) buildId: number) {
    return this.views.one(await this.builds.retry(user, id, buildId));
  }

  /** Starts a manual action (GitLab 8.17): 200 with the build that will run. */
  @ApiOkResponse({ type: BuildResponse })
  @Post('builds/:buildId/play')
  @HttpCode(200)
  async play(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Param('buildId', IdParam) buildId: number) {
    return this.views.one(await this.builds.play(user, id, buildId));
  }

  @ApiCreated(BuildResponse)
  @Post('builds/:buildId/erase')
  async erase(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Param('buildId', IdParam) buildId: number) {
    return this.views.one(await this.builds.erase(user, id, buildId), { erased: true });
  }
}
