import { Injectable } from '@nestjs/common';
import { Forbidden, MissingAttribute, NotFound, ValidationFailed } from '../common/errors/domain-errors';
import { Paginated, pageRequest } from '../common/pagination/pagination';
import { Transactions, Tx } from '../database/transactions';
import { DomainEvents } from '../domain-events/domain-events';
import { canSetTimestamps } from '../common/policy/issue-policy';
import { IssuesService } from '../issues/issues.service';
import { SnippetsService } from '../snippets/snippets.service';
import { User } from '../users/user.entity';
import { UserDirectory } from '../users/user-directory.service';
import { MergeRequestsService } from '../merge-requests/merge-requests.service';
import { CrossReferences } from './cross-references.service';
import { CreateCommentDto, CreateNoteDto, ListNotesDto, UpdateNoteDto } from './dto/note.dto';
import { Note, NoteableType } from '../notes/note.entity';
import { COMMENT_KINDS, Noteable, NoteableFinder, NOTEABLE_PATHS } from './noteables';
import { NoteRecords, NoteWithAuthor } from '../notes/note-records.service';
import { ProjectRef } from '../common/params/refs';
import type { Caller } from '../common/caller/caller';

/** Legacy comment routes: the body arrives as `note`, and only kinds that had them answer. */
export interface NoteOptions {
  commentsOnly?: boolean;
}

const MAX_BODY = 1_000_000;

/**
 * Notes (comments) on issues, snippets and merge requests, one implementation for every noteable
 * kind (a kind plugs in with one finder in `finders`): the noteable must
 * be readable by the caller (else its 404), notes are listed in insertion order, the author or a
 * master (admin_note) edits and deletes them, creating one records a `commented` event.
 */
@Injectable()
export class NotesService {
  constructor(
    private readonly repo: NoteRecords,
    private readonly users: UserDirectory,
    private readonly transactions: Transactions,
    private readonly issues: IssuesService,
    private readonly snippets: SnippetsService,
    private readonly mergeRequests: MergeRequestsService,
    private readonly domainEvents: DomainEvents,
    private readonly crossReferences: CrossReferences,
  ) {}

  private readonly finders: Record<NoteableType, NoteableFinder> = {
    Issue: async (user, ref, id) => {
      const { project, abilities, issue } = await this.issues.findReadable(user, ref, id);
      return { project, abilities, type: 'Issue', id: issue.id, title: issue.title };
    },
    Snippet: async (user, ref, id) => {
      const { project, abilities, snippet } = await this.snippets.findReadable(user, ref, id);
      return { project, abilities, type: 'Snippet', id: snippet.id, title: snippet.title };
    },
    MergeRequest: async (user, ref, id) => {
      const { project, abilities, mr } = await this.mergeRequests.findReadable(user, ref, id);
      return { project, abilities, type: 'MergeRequest', id: mr.id, title: mr.title };
    },
  };

  /** Touches the noteable a note was added to: its owner area's service, in the note's transaction. */
  private readonly touchers: Record<NoteableType, (tx: Tx, id: number) => Promise<void>> = {
    Issue: (tx, id) => this.issues.touch(tx, id),
    Snippet: (tx, id) => this.snippets.touch(tx, id),
    MergeRequest: (tx, id) => this.mergeRequests.touch(tx, id),
  };

  async list(user: Caller, kind: string, ref: ProjectRef, id: number, dto: ListNotesDto, o: NoteOptions = {}): Promise<Paginated<NoteWithAuthor>> {
    const target = await this.noteable(user, kind, ref, id, o);
    if (!target.abilities.has('read_note')) throw new Forbidden();
    const page = pageRequest(dto);
    const [items, total] = await this.repo.listWithAuthors(target.type, target.id, page);
    // as GitLab's notes API: cross-references whose source the caller cannot see are left out of
    // the page after paging (the page may hold fewer than per_page; the total counts them)
    return new Paginated(await this.crossReferences.visible(user, target.project, items, (x) => x.note), total, page);
  }

  async get(user: Caller, kind: string, ref: ProjectRef, id: number, noteId: number): Promise<Note> {
    const target = await this.noteable(user, kind, ref, id);
    if (!target.abilities.has('read_note')) throw new Forbidden();
    const note = await this.find(target, noteId);
    if ((await this.crossReferences.visible(user, target.project, [note], (n) => n)).length === 0) throw new NotFound('Note');
    return note;
  }

  /** `body` (required); `created_at` on issue notes for owners and admins. 201 with the note. */
  async create(user: Caller, kind: string, ref: ProjectRef, id: number, dto: CreateNoteDto): Promise<Note> {
    const target = await this.noteable(user, kind, ref, id);
    if (!target.abilities.has('create_note')) throw new Forbidden();
    const body = this.readBody(dto.body, 'body');
    const createdAt = target.type === 'Issue' && canSetTimestamps(target.abilities) ? dto.created_at : undefined;
    return this.insert(user, target, body, createdAt);
  }

  /** The legacy merge request comment: `note` (required). 201 with the note. */
  async comment(user: Caller, kind: string, ref: ProjectRef, id: number, dto: CreateCommentDto): Promise<Note> {
    const target = await this.noteable(user, kind, ref, id, { commentsOnly: true });
    if (!target.abilities.has('create_note')) throw new Forbidden();
    return this.insert(user, target, this.readBody(dto.note, 'note'));
  }

  /** `body` (required): the note's author or a master; system notes are not editable. */
  async update(user: Caller, kind: string, ref: ProjectRef, id: number, noteId: number, dto: UpdateNoteDto): Promise<Note> {
    const target = await this.noteable(user, kind, ref, id);
    const note = await this.find(target, noteId);
    this.assertCanAdmin(user, target, note);
    const body = this.readBody(dto.body, 'body');
    if (body !== note.body) {
      await this.transactions.run(async (tx) => {
        await this.repo.setBody(tx, note.id, body);
        // what the new text mentions gets its cross-reference (GitLab's Notes::UpdateService)
        await this.domainEvents.emit(tx, 'note.updated', { noteId: note.id, projectId: target.project.id, userId: user.id });
      });
    }
    return this.repo.byId(note.id);
  }

  /** 200 with the deleted note; `404 Note Not Found` when it does not exist (not idempotent). */
  async remove(user: Caller, kind: string, ref: ProjectRef, id: number, noteId: number): Promise<Note> {
    const target = await this.noteable(user, kind, ref, id);
    const note = await this.find(target, noteId);
    this.assertCanAdmin(user, target, note);
    if (!(await this.repo.delete(note.id))) throw new NotFound('Note');
    return note;
  }

  /** Authors by id: one query. */
  authors(notes: Note[]): Promise<Map<number, User>> {
    return this.users.byIds(notes.map((n) => n.authorId));
  }

  // ---------------------------------------------------------------- helpers

  private async insert(user: Caller, target: Noteable, body: string, createdAt?: Date): Promise<Note> {
    const note = await this.transactions.run(async (tx) => {
      const saved = await this.repo.insert(tx, {
        projectId: target.project.id,
        noteableType: target.type,
        noteableId: target.id,
        authorId: user.id,
        body,
        system: false,
        attachment: null,
        ...(createdAt ? { createdAt, updatedAt: createdAt } : {}),
      });
      // a comment touches its noteable, like GitLab's `belongs_to :noteable, touch: true`
      await this.touchers[target.type](tx, target.id);
      await this.domainEvents.emit(tx, 'note.created', { noteId: saved.id, projectId: target.project.id, userId: user.id }); // project hooks
      // in the same transaction: a crash cannot leave a note without its `commented` event
      await this.domainEvents.emit(tx, 'activity.recorded', {
        events: [{ projectId: target.project.id, authorId: user.id, action: 'commented', targetId: saved.id, targetType: 'Note', targetTitle: target.title }],
      });
      return saved;
    });
    return note;
  }

  /** The readable noteable named by the route's kind segment; an unknown segment is an unknown route (404). */
  private async noteable(user: Caller, kind: string, ref: ProjectRef, id: number, o: NoteOptions = {}): Promise<Noteable> {
    const type = Object.prototype.hasOwnProperty.call(NOTEABLE_PATHS, kind) ? NOTEABLE_PATHS[kind] : undefined;
    if (!type || (o.commentsOnly && !COMMENT_KINDS.has(type))) throw new NotFound();
    return this.finders[type](user, ref, id);
  }

  private async find(target: Noteable, noteId: number): Promise<Note> {
    const note = await this.repo.findOn(target.type, target.id, noteId);
    if (!note) throw new NotFound('Note');
    return note;
  }

  private assertCanAdmin(user: Caller, target: Noteable, note: Note): void {
    if (note.system) throw new Forbidden('System notes cannot be changed');
    const isAuthor = note.authorId === user.id;
    if (!target.abilities.has('admin_note') && !(isAuthor && target.abilities.has('read_note'))) throw new Forbidden();
  }

  /** The required text (`body`, or `note` on the legacy route): absent or blank is `"name" not given`. */
  private readBody(value: string | undefined, name: 'body' | 'note'): string {
    if (value === undefined || value.trim() === '') throw new MissingAttribute(name);
    if (value.length > MAX_BODY) throw new ValidationFailed({ note: ['is too long (maximum is 1000000 characters)'] });
    return value;
  }
}
