import { Controller, Delete, Get, Param, Post, Put } from '@nestjs/common';
import { CurrentUser, Caller } from '../common/caller/caller';
import { API } from '../common/http/routes';
import { IdParam, Input } from '../common/params/params';
import { CreateCommentDto, CreateNoteDto, ListNotesDto, UpdateNoteDto } from './dto/note.dto';
import { NoteViews } from './note-views.service';
import { NotesService } from './notes.service';
import { ApiOkResponse } from '@nestjs/swagger';
import { ApiCreated, ApiPageResponse } from '../openapi/response-types';
import { MergeRequestCommentResponse, NoteResponse } from '../notes/notes.responses';
import { ProjectRef, ProjectRefParam } from '../common/params/refs';

/**
 * Notes of every noteable kind on one route set: `:noteable` is the plural path segment of the kind
 * (`issues`, `snippets`, `merge_requests`, and the legacy `merge_request`), checked by the service
 * against the registered kinds (Express 5 routes take no inline pattern); anything else is 404.
 * Plus the legacy merge request `comments` (`{note, author}`) old clients use.
 */
@Controller(`${API}/projects/:id`)
export class NotesController {
  constructor(
    private readonly notes: NotesService,
    private readonly views: NoteViews,
  ) {}

  @ApiPageResponse(NoteResponse)
  @Get(':noteable/:noteableId/notes')
  async list(
    @CurrentUser() user: Caller,
    @Param('id', ProjectRefParam) id: ProjectRef,
    @Param('noteable') kind: string,
    @Param('noteableId', IdParam) nid: number,
    @Input() dto: ListNotesDto,
  ) {
    return this.views.page(user, await this.notes.list(user, kind, id, nid, dto));
  }

  @ApiOkResponse({ type: NoteResponse })
  @Get(':noteable/:noteableId/notes/:noteId')
  async show(
    @CurrentUser() user: Caller,
    @Param('id', ProjectRefParam) id: ProjectRef,
    @Param('noteable') kind: string,
    @Param('noteableId', IdParam) nid: number,
    @Param('noteId', IdParam) noteId: number,
  ) {
    return this.views.one(user, await this.notes.get(user, kind, id, nid, noteId));
  }

  @ApiCreated(NoteResponse)
  @Post(':noteable/:noteableId/notes')
  async create(
    @CurrentUser() user: Caller,
    @Param('id', ProjectRefParam) id: ProjectRef,
    @Param('noteable') kind: string,
    @Param('noteableId', IdParam) nid: number,
    @Input() dto: CreateNoteDto,
  ) {
    return this.views.one(user, await this.notes.create(user, kind, id, nid, dto));
  }

  @ApiOkResponse({ type: NoteResponse })
  @Put(':noteable/:noteableId/notes/:noteId')
  async update(
    @CurrentUser() user: Caller,
    @Param('id', ProjectRefParam) id: ProjectRef,
    @Param('noteable') kind: string,
    @Param('noteableId', IdParam) nid: number,
    @Param('noteId', IdParam) noteId: number,
    @Input() dto: UpdateNoteDto,
  ) {
    return this.views.one(user, await this.notes.update(user, kind, id, nid, noteId, dto));
  }

  @ApiOkResponse({ type: NoteResponse })
  @Delete(':noteable/:noteableId/notes/:noteId')
  async remove(
    @CurrentUser() user: Caller,
    @Param('id', ProjectRefParam) id: ProjectRef,
    @Param('noteable') kind: string,
    @Param('noteableId', IdParam) nid: number,
    @Param('noteId', IdParam) noteId: number,
  ) {
    return this.views.one(user, await this.notes.remove(user, kind, id, nid, noteId));
  }

  // --- legacy merge request comments: `{note, author}` ---

  @ApiPageResponse(MergeRequestCommentResponse)
  @Get(':noteable/:noteableId/comments')
  async comments(
    @CurrentUser() user: Caller,
    @Param('id', ProjectRefParam) id: ProjectRef,
    @Param('noteable') kind: string,
    @Param('noteableId', IdParam) nid: number,
    @Input() dto: ListNotesDto,
  ) {
    return this.views.commentPage(user, await this.notes.list(user, kind, id, nid, dto, { commentsOnly: true }));
  }

  @ApiCreated(MergeRequestCommentResponse)
  @Post(':noteable/:noteableId/comments')
  async comment(
    @CurrentUser() user: Caller,
    @Param('id', ProjectRefParam) id: ProjectRef,
    @Param('noteable') kind: string,
    @Param('noteableId', IdParam) nid: number,
    @Input() dto: CreateCommentDto,
  ) {
    return this.views.comment(user, await this.notes.comment(user, kind, id, nid, dto));
  }
}
