import { Injectable } from '@nestjs/common';
import { Paginated } from '../common/pagination/pagination';
import { ProjectViews } from '../projects/project-views.service';
import { Note } from '../notes/note.entity';
import { presentComment, presentNote } from '../notes/notes.presenter';
import { NoteWithAuthor } from '../notes/note-records.service';
import { NotesService } from './notes.service';
import type { Caller } from '../common/caller/caller';

/** Presents notes with their authors (one query for the whole page). */
@Injectable()
export class NoteViews {
  constructor(
    private readonly views: ProjectViews,
    private readonly notes: NotesService,
  ) {}

  async many(viewer: Caller, notes: Note[]) {
    const ctx = await this.views.context();
    const authors = await this.notes.authors(notes);
    return notes.map((n) => presentNote(n, n.authorId !== null ? authors.get(n.authorId) : null, viewer, ctx));
  }

  async one(viewer: Caller, note: Note) {
    return (await this.many(viewer, [note]))[0];
  }

  /** A page read with its authors (NotesRepository.listWithAuthors): no further query. */
  async page(viewer: Caller, page: Paginated<NoteWithAuthor>) {
    const ctx = await this.views.context();
    return page.map((x) => presentNote(x.note, x.author, viewer, ctx));
  }

  async comments(viewer: Caller, notes: Note[]) {
    const ctx = await this.views.context();
    const authors = await this.notes.authors(notes);
    return notes.map((n) => presentComment(n, n.authorId !== null ? authors.get(n.authorId) : null, viewer, ctx));
  }

  async commentPage(viewer: Caller, page: Paginated<NoteWithAuthor>) {
    const ctx = await this.views.context();
    return page.map((x) => presentComment(x.note, x.author, viewer, ctx));
  }

  async comment(viewer: Caller, note: Note) {
    return (await this.comments(viewer, [note]))[0];
  }
}
