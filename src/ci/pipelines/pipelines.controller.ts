import { Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import { CurrentUser, Caller } from '../../common/caller/caller';
import { API } from '../../common/http/routes';
import { IdParam, Input } from '../../common/params/params';
import { ProjectViews } from '../../projects/project-views.service';
import { CreatePipelineDto, LintDto, ListPipelinesDto } from './dto/pipelines.dto';
import { presentLint, presentPipeline } from './pipelines.presenter';
import { ProjectPipelinesService } from './project-pipelines.service';
import { ApiOkResponse } from '@nestjs/swagger';
import { ApiCreated, ApiPageResponse } from '../../openapi/response-types';
import { CiLintResponse, PipelineResponse } from './pipelines.responses';
import { ProjectRef, ProjectRefParam } from '../../common/params/refs';

/** `/api/v3/projects/:id/pipelines` and `/pipeline` (GitLab 8.11–8.14), and `/api/v3/ci/lint` (8.12). */
@Controller(API)
export class PipelinesController {
  constructor(
    private readonly pipelines: ProjectPipelinesService,
    private readonly views: ProjectViews,
  ) {}

  @ApiPageResponse(PipelineResponse)
  @Get('projects/:id/pipelines')
  async list(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Input() q: ListPipelinesDto) {
    const [page, ctx] = await Promise.all([this.pipelines.list(user, id, q), this.views.context()]);
    return page.map((v) => presentPipeline(v, ctx));
  }

  @ApiOkResponse({ type: PipelineResponse })
  @Get('projects/:id/pipelines/:pipelineId')
  async show(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Param('pipelineId', IdParam) pipelineId: number) {
    return presentPipeline(await this.pipelines.get(user, id, pipelineId), await this.views.context());
  }

  @ApiCreated(PipelineResponse, 'the new pipeline of the head of `ref` (a failed one with `yaml_errors` for an invalid file)')
  @Post('projects/:id/pipeline')
  async create(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Input() dto: CreatePipelineDto) {
    return presentPipeline(await this.pipelines.create(user, id, dto), await this.views.context());
  }

  @ApiCreated(PipelineResponse, 'the pipeline, its failed and canceled builds retried')
  @Post('projects/:id/pipelines/:pipelineId/retry')
  async retry(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Param('pipelineId', IdParam) pipelineId: number) {
    return presentPipeline(await this.pipelines.retry(user, id, pipelineId), await this.views.context());
  }

  /** GitLab answers the cancel with 200 (`status 200` in lib/api/pipelines.rb), the retry with 201. */
  @ApiOkResponse({ type: PipelineResponse, description: 'the pipeline, its pending and running builds canceled' })
  @Post('projects/:id/pipelines/:pipelineId/cancel')
  @HttpCode(200)
  async cancel(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Param('pipelineId', IdParam) pipelineId: number) {
    return presentPipeline(await this.pipelines.cancel(user, id, pipelineId), await this.views.context());
  }

  /** Checks a `.gitlab-ci.yml` before it is pushed: 200 with `valid`, or `invalid` and the error. */
  @ApiOkResponse({ type: CiLintResponse })
  @Post('ci/lint')
  @HttpCode(200)
  async lint(@Input() dto: LintDto) {
    return presentLint(await this.pipelines.lint(dto.content));
  }
}
