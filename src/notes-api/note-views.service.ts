import { Injectable } from '@nestjs/common';
import { Paginated } from '../common/pagination/pagination';
import { ProjectViews } from '../projects/project-views.service';
import { User } from '../users/user.entity';
import { Note } from '../notes/note.entity';
import { presentComment, presentNote } from '../notes/notes.presenter';
import { NoteWithAuthor } from '../notes/note-records.service';
import { NotesService } from './notes.service';

/** Presents notes with their authors (one query for the whole page). */
@Injectable()
export class NoteViews {
  constructor(
    private readonly views: ProjectViews,
    private readonly notes: NotesService,
  ) {}

  async many(viewer: User, notes: Note[]) {
    const ctx = await this.views.context();
    const authors = await this.notes.authors(notes);
    return notes.map((n) => presentNote(n, n.authorId !== null ? authors.get(n.authorId) : null, viewer, ctx));
  }

  async one(viewer: User, note: Note) {
    return (await this.many(viewer, [note]))[0];
  }

  /** A page read with its authors (NotesRepository.listWithAuthors): no further query. */
  async page(viewer: User, page: Paginated<NoteWithAuthor>) {
    const ctx = await this.views.context();
    return page.map((x) => presentNote(x.note, x.author, viewer, ctx));
  }

  async comments(viewer: User, notes: Note[]) {
    const ctx = await this.views.context();
    const authors = await this.notes.authors(notes);
    return notes.map((n) => presentComment(n, n.authorId !== null ? authors.get(n.authorId) : null, viewer, ctx));
  }

  async commentPage(viewer: User, page: Paginated<NoteWithAuthor>) {
    const ctx = await this.views.context();
    return page.map((x) => presentComment(x.note, x.author, viewer, ctx));
  }

  async comment(viewer: User, note: Note) {
    return (await this.comments(viewer, [note]))[0];
  }
}
