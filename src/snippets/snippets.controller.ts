import { Controller, Delete, Get, Param, Post, Put, Res } from '@nestjs/common';
import type { Response } from 'express';
import { CurrentUser } from '../common/auth/decorators';
import { API } from '../common/http/routes';
import { Input, Params } from '../common/params/params';
import { User } from '../users/user.entity';
import { SnippetViews } from './snippet-views.service';
import { presentSnippetRecord } from './snippets.presenter';
import { SnippetsService } from './snippets.service';

@Controller(`${API}/projects/:id/snippets`)
export class SnippetsController {
  constructor(
    private readonly snippets: SnippetsService,
    private readonly views: SnippetViews,
  ) {}

  @Get()
  async list(@CurrentUser() user: User, @Param('id') id: string, @Input() p: Params) {
    return this.views.page(user, await this.snippets.list(user, id, p));
  }

  @Get(':snippetId')
  async show(@CurrentUser() user: User, @Param('id') id: string, @Param('snippetId') snippetId: string) {
    return this.views.one(user, (await this.snippets.findReadable(user, id, snippetId)).snippet);
  }

  /** The content as `text/plain` (never sniffed or rendered by a browser). */
  @Get(':snippetId/raw')
  async raw(@CurrentUser() user: User, @Param('id') id: string, @Param('snippetId') snippetId: string, @Res() res: Response) {
    const body = Buffer.from((await this.snippets.findReadable(user, id, snippetId)).snippet.content, 'utf8');
    res.status(200);
    res.setHeader('Content-Type', 'text/plain; charset=utf-8');
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Content-Length', body.length);
    res.end(body);
  }

  @Post()
  async create(@CurrentUser() user: User, @Param('id') id: string, @Input() p: Params) {
    return this.views.one(user, await this.snippets.create(user, id, p));
  }

  @Put(':snippetId')
  async update(@CurrentUser() user: User, @Param('id') id: string, @Param('snippetId') snippetId: string, @Input() p: Params) {
    return this.views.one(user, await this.snippets.update(user, id, snippetId, p));
  }

  /** 200 even when the snippet does not exist (spec): the record when deleted, no body otherwise. */
  @Delete(':snippetId')
  async remove(@CurrentUser() user: User, @Param('id') id: string, @Param('snippetId') snippetId: string) {
    const removed = await this.snippets.remove(user, id, snippetId);
    return removed ? presentSnippetRecord(removed) : undefined;
  }
}
