import { Controller, Delete, Get, Param, Post, Put } from '@nestjs/common';
import { CurrentUser } from '../common/auth/decorators';
import { API } from '../common/http/routes';
import { Input, Params } from '../common/params/params';
import { User } from '../users/user.entity';
import { NoteViews } from './note-views.service';
import { NotesService } from './notes.service';

/** Issue notes and snippet notes: the same five routes under each noteable. */
@Controller(`${API}/projects/:id`)
export class NotesController {
  constructor(
    private readonly notes: NotesService,
    private readonly views: NoteViews,
  ) {}

  // --- issues ---
  @Get('issues/:noteableId/notes')
  async issueNotes(@CurrentUser() user: User, @Param('id') id: string, @Param('noteableId') nid: string, @Input() p: Params) {
    return this.views.page(user, await this.notes.list(user, 'Issue', id, nid, p));
  }

  @Get('issues/:noteableId/notes/:noteId')
  async issueNote(@CurrentUser() user: User, @Param('id') id: string, @Param('noteableId') nid: string, @Param('noteId') noteId: string) {
    return this.views.one(user, await this.notes.get(user, 'Issue', id, nid, noteId));
  }

  @Post('issues/:noteableId/notes')
  async createIssueNote(@CurrentUser() user: User, @Param('id') id: string, @Param('noteableId') nid: string, @Input() p: Params) {
    return this.views.one(user, await this.notes.create(user, 'Issue', id, nid, p));
  }

  @Put('issues/:noteableId/notes/:noteId')
  async updateIssueNote(
    @CurrentUser() user: User,
    @Param('id') id: string,
    @Param('noteableId') nid: string,
    @Param('noteId') noteId: string,
    @Input() p: Params,
  ) {
    return this.views.one(user, await this.notes.update(user, 'Issue', id, nid, noteId, p));
  }

  @Delete('issues/:noteableId/notes/:noteId')
  async removeIssueNote(@CurrentUser() user: User, @Param('id') id: string, @Param('noteableId') nid: string, @Param('noteId') noteId: string) {
    return this.views.one(user, await this.notes.remove(user, 'Issue', id, nid, noteId));
  }

  // --- snippets ---
  @Get('snippets/:noteableId/notes')
  async snippetNotes(@CurrentUser() user: User, @Param('id') id: string, @Param('noteableId') nid: string, @Input() p: Params) {
    return this.views.page(user, await this.notes.list(user, 'Snippet', id, nid, p));
  }

  @Get('snippets/:noteableId/notes/:noteId')
  async snippetNote(@CurrentUser() user: User, @Param('id') id: string, @Param('noteableId') nid: string, @Param('noteId') noteId: string) {
    return this.views.one(user, await this.notes.get(user, 'Snippet', id, nid, noteId));
  }

  @Post('snippets/:noteableId/notes')
  async createSnippetNote(@CurrentUser() user: User, @Param('id') id: string, @Param('noteableId') nid: string, @Input() p: Params) {
    return this.views.one(user, await this.notes.create(user, 'Snippet', id, nid, p));
  }

  @Put('snippets/:noteableId/notes/:noteId')
  async updateSnippetNote(
    @CurrentUser() user: User,
    @Param('id') id: string,
    @Param('noteableId') nid: string,
    @Param('noteId') noteId: string,
    @Input() p: Params,
  ) {
    return this.views.one(user, await this.notes.update(user, 'Snippet', id, nid, noteId, p));
  }

  @Delete('snippets/:noteableId/notes/:noteId')
  async removeSnippetNote(@CurrentUser() user: User, @Param('id') id: string, @Param('noteableId') nid: string, @Param('noteId') noteId: string) {
    return this.views.one(user, await this.notes.remove(user, 'Snippet', id, nid, noteId));
  }
}
