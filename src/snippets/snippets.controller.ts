import { Controller, Delete, Get, Header, Param, Post, Put } from '@nestjs/common';
import { CurrentUser, Caller } from '../common/caller/caller';
import { API } from '../common/http/routes';
import { IdParam, Input } from '../common/params/params';
import { CreateSnippetDto, ListSnippetsDto, UpdateSnippetDto } from './dto/snippet.dto';
import { SnippetViews } from './snippet-views.service';
import { presentSnippetRaw, presentSnippetRecord } from './snippets.presenter';
import { SnippetsService } from './snippets.service';
import { ApiOkResponse } from '@nestjs/swagger';
import { ApiCreated, ApiPageResponse, ApiTextResponse } from '../openapi/response-types';
import { SnippetRecordResponse, SnippetResponse } from './snippets.responses';
import { ProjectRef, ProjectRefParam } from '../common/params/refs';

@Controller(`${API}/projects/:id/snippets`)
export class SnippetsController {
  constructor(
    private readonly snippets: SnippetsService,
    private readonly views: SnippetViews,
  ) {}

  @ApiPageResponse(SnippetResponse)
  @Get()
  async list(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Input() q: ListSnippetsDto) {
    return this.views.page(user, await this.snippets.list(user, id, q));
  }

  @ApiOkResponse({ type: SnippetResponse })
  @Get(':snippetId')
  async show(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Param('snippetId', IdParam) snippetId: number) {
    return this.views.one(user, (await this.snippets.findReadable(user, id, snippetId)).snippet);
  }

  /** The content as `text/plain` (never sniffed or rendered by a browser). */
  @ApiTextResponse('the snippet content')
  @Get(':snippetId/raw')
  @Header('X-Content-Type-Options', 'nosniff')
  async raw(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Param('snippetId', IdParam) snippetId: number) {
    return presentSnippetRaw((await this.snippets.findReadable(user, id, snippetId)).snippet);
  }

  @ApiCreated(SnippetResponse)
  @Post()
  async create(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Input() dto: CreateSnippetDto) {
    return this.views.one(user, await this.snippets.create(user, id, dto));
  }

  @ApiOkResponse({ type: SnippetResponse })
  @Put(':snippetId')
  async update(
    @CurrentUser() user: Caller,
    @Param('id', ProjectRefParam) id: ProjectRef,
    @Param('snippetId', IdParam) snippetId: number,
    @Input() dto: UpdateSnippetDto,
  ) {
    return this.views.one(user, await this.snippets.update(user, id, snippetId, dto));
  }

  /** 200 even when the snippet does not exist (spec): the record when deleted, no body otherwise. */
  @ApiOkResponse({ type: SnippetRecordResponse, description: 'the deleted snippet record' })
  @Delete(':snippetId')
  async remove(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Param('snippetId', IdParam) snippetId: number) {
    return presentSnippetRecord(await this.snippets.remove(user, id, snippetId));
  }
}
