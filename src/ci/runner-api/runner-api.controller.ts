import { Controller, Delete, Get, Header, Headers, HttpCode, Param, Patch, Post, Put, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { Public } from '../../common/caller/caller';
import { Input } from '../../common/params/params';
import { presentArtifactsFile } from '../builds/builds.presenter';
import { RunnerApiError } from '../builds/builds.service';
import { BuildTokenDto, RegisterRunnerDto, RunnerTokenDto, UpdateBuildDto } from './dto/runner-api.dto';
import { presentRegisteredRunner } from './runner-api.presenter';
import { RunnerApiService } from './runner-api.service';
import { ApiOkResponse, ApiResponse } from '@nestjs/swagger';
import { ApiBinaryResponse, ApiCreated } from '../../openapi/response-types';
import { BuildDetailsResponse, RunnerRecordResponse, RunnerRegistrationResponse } from './runner-api.responses';

/**
 * The runner API v1 (`/ci/api/v1`, `.json` suffix accepted): runner tokens and build tokens are
 * checked by the service, not by the global guard.
 */
@Public()
@Controller('ci/api/v1')
export class RunnerApiController {
  constructor(private readonly api: RunnerApiService) {}

  @ApiCreated(RunnerRegistrationResponse)
  @Post('runners/register')
  async register(@Input() dto: RegisterRunnerDto) {
    const { runner, token } = await this.api.register(dto.token, dto.description, dto.tag_list, dto.run_untagged, dto.info);
    return presentRegisteredRunner(runner.id, token);
  }

  @ApiOkResponse({ type: RunnerRecordResponse, description: 'the deleted runner' })
  @Delete('runners/delete')
  removeRunner(@Input() dto: RunnerTokenDto) {
    return this.api.removeRunner(dto.token);
  }

  /** Answered by RunnerPollRoute before the router; this route documents it and is its fallback. */
  @ApiCreated(BuildDetailsResponse, 'the build to run, with its commands, variables and dependencies (runner-protocol.md)')
  @ApiResponse({ status: 404, description: 'nothing to run (or the runner is inactive): `{}`' })
  @Post('builds/register')
  async requestBuild(@Input() dto: RunnerTokenDto) {
    const payload = await this.api.requestBuild(dto.token, dto.info);
    if (!payload) throw new RunnerApiError(404, {});
    return payload;
  }

  @ApiResponse({ status: 200, description: 'no body' })
  @Put('builds/:id')
  async updateBuild(@Param('id') id: string, @Input() dto: UpdateBuildDto) {
    await this.api.updateBuild(dto.token, id, dto.state, dto.trace, dto.info);
    return null;
  }

  @ApiResponse({ status: 202, description: 'no body; headers Build-Status and Range' })
  @Patch('builds/:id/trace.txt')
  @HttpCode(202)
  async appendTrace(
    @Param('id') id: string,
    @Input() dto: BuildTokenDto,
    @Headers('build-token') header: string | undefined,
    @Headers('content-range') range: string | undefined,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ) {
    const r = await this.api.appendTrace(id, dto.token ?? header, range, req);
    res.setHeader('Build-Status', r.status);
    res.setHeader('Range', `0-${r.size}`);
    return undefined;
  }

  @ApiCreated(BuildDetailsResponse, 'the build with its artifacts_file')
  @Post('builds/:id/artifacts')
  uploadArtifacts(@Param('id') id: string, @Input() dto: BuildTokenDto, @Headers('build-token') header: string | undefined, @Req() req: Request) {
    return this.api.uploadArtifacts(id, dto.token ?? header, dto.expire_in, req);
  }

  @ApiBinaryResponse('the artifacts file')
  @Get('builds/:id/artifacts')
  @Header('Content-Transfer-Encoding', 'binary')
  async downloadArtifacts(@Param('id') id: string, @Input() dto: BuildTokenDto, @Headers('build-token') header: string | undefined) {
    return presentArtifactsFile(await this.api.downloadArtifacts(id, dto.token ?? header));
  }

  @ApiOkResponse({ type: BuildDetailsResponse, description: 'the build without artifacts' })
  @Delete('builds/:id/artifacts')
  removeArtifacts(@Param('id') id: string, @Input() dto: BuildTokenDto, @Headers('build-token') header: string | undefined) {
    return this.api.removeArtifacts(id, dto.token ?? header);
  }
}
