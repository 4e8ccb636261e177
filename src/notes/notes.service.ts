import { Injectable } from '@nestjs/common';
import { DataSource, In } from 'typeorm';
import { Forbidden, NotFound, ValidationFailed } from '../common/errors/domain-errors';
import { Paginated, pageRequest } from '../common/pagination/pagination';
import { Params, parseId } from '../common/params/params';
import { ProjectAbility } from '../common/policy/policy';
import { DomainEvents } from '../events/domain-events';
import { EventsService } from '../events/events.service';
import { readTimestamp, rejectNul } from '../common/params/legacy-readers';
import { canSetTimestamps } from '../issues/issue-policy';
import { IssuesService } from '../issues/issues.service';
import { SnippetsService } from '../snippets/snippets.service';
import { User } from '../users/user.entity';
import { MergeRequestsService } from '../merge-requests/merge-requests.service';
import { Note, NoteableType } from './note.entity';
import { COMMENT_KINDS, Noteable, NoteableFinder, NOTEABLE_PATHS } from './noteables';

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
    private readonly ds: DataSource,
    private readonly issues: IssuesService,
    private readonly snippets: SnippetsService,
    private readonly mergeRequests: MergeRequestsService,
    private readonly events: EventsService,
    private readonly domainEvents: DomainEvents,
  ) {}

  private readonly finders: Record<NoteableType, NoteableFinder> = {
    Issue: async (user, ref, rawId) => {
      const { project, abilities, issue } = await this.issues.findReadable(user, ref, rawId);
      return { project, abilities, type: 'Issue', id: issue.id, title: issue.title, table: 'issues' };
    },
    Snippet: async (user, ref, rawId) => {
      const { project, abilities, snippet } = await this.snippets.findReadable(user, ref, rawId);
      return { project, abilities, type: 'Snippet', id: snippet.id, title: snippet.title, table: 'snippets' };
    },
    MergeRequest: async (user, ref, rawId) => {
      const { project, abilities, mr } = await this.mergeRequests.findReadable(user, ref, rawId);
      return { project, abilities, type: 'MergeRequest', id: mr.id, title: mr.title, table: 'merge_requests' };
    },
  };

  async list(user: User, kind: string, ref: string, rawId: string, p: Params, o: NoteOptions = {}): Promise<Paginated<Note>> {
    const target = await this.noteable(user, kind, ref, rawId, o);
    if (!target.abilities.has('read_note')) throw new Forbidden();
    const page = pageRequest(p);
    const [items, total] = await this.ds.getRepository(Note).findAndCount({
      where: { noteableType: target.type, noteableId: target.id },
      order: { id: 'ASC' },
      skip: page.offset,
      take: page.perPage,
    });
    return new Paginated(items, total, page);
  }

  async get(user: User, kind: string, ref: string, rawId: string, rawNoteId: string): Promise<Note> {
    const target = await this.noteable(user, kind, ref, rawId);
    if (!target.abilities.has('read_note')) throw new Forbidden();
    return this.find(target, rawNoteId);
  }

  /** `body` (required); `created_at` on issue notes for owners and admins. 201 with the note. */
  async create(user: User, kind: string, ref: string, rawId: string, p: Params, o: NoteOptions = {}): Promise<Note> {
    rejectNul(p);
    const target = await this.noteable(user, kind, ref, rawId, o);
    if (!target.abilities.has('create_note')) throw new Forbidden();
    const body = this.readBody(p, o.commentsOnly ? 'note' : 'body');
    const createdAt = target.type === 'Issue' && canSetTimestamps(target.abilities) ? readTimestamp(p, 'created_at') : undefined;
    const note = await this.ds.transaction(async (m) => {
      const repo = m.getRepository(Note);
      const saved = await repo.save(
        repo.create({
          projectId: target.project.id,
          noteableType: target.type,
          noteableId: target.id,
          authorId: user.id,
          body,
          system: false,
          attachment: null,
          ...(createdAt ? { createdAt, updatedAt: createdAt } : {}),
        }),
      );
      // a comment touches its noteable, like GitLab's `belongs_to :noteable, touch: true`
      await m.query(`UPDATE ${target.table} SET updated_at = now() WHERE id = $1`, [target.id]);
      return saved;
    });
    await this.events.record({
      projectId: target.project.id,
      authorId: user.id,
      action: 'commented',
      targetId: note.id,
      targetType: 'Note',
      targetTitle: target.title,
    });
    this.domainEvents.emit('note.created', { noteId: note.id, userId: user.id }); // project hooks
    return note;
  }

  /** `body` (required): the note's author or a master; system notes are not editable. */
  async update(user: User, kind: string, ref: string, rawId: string, rawNoteId: string, p: Params): Promise<Note> {
    rejectNul(p);
    const target = await this.noteable(user, kind, ref, rawId);
    const note = await this.find(target, rawNoteId);
    this.assertCanAdmin(user, target, note);
    const body = this.readBody(p);
    if (body !== note.body) await this.ds.getRepository(Note).update({ id: note.id }, { body });
    return this.ds.getRepository(Note).findOneByOrFail({ id: note.id });
  }

  /** 200 with the deleted note; `404 Note Not Found` when it does not exist (not idempotent). */
  async remove(user: User, kind: string, ref: string, rawId: string, rawNoteId: string): Promise<Note> {
    const target = await this.noteable(user, kind, ref, rawId);
    const note = await this.find(target, rawNoteId);
    this.assertCanAdmin(user, target, note);
    const result = await this.ds.getRepository(Note).delete({ id: note.id });
    if (!result.affected) throw new NotFound('Note');
    return note;
  }

  /** Authors by id: one query. */
  async authors(notes: Note[]): Promise<Map<number, User>> {
    const ids = [...new Set(notes.map((n) => n.authorId).filter((id): id is number => id !== null))];
    if (ids.length === 0) return new Map();
    const users = await this.ds.getRepository(User).findBy({ id: In(ids) });
    return new Map(users.map((u) => [u.id, u]));
  }

  // ---------------------------------------------------------------- helpers

  /** The readable noteable named by the route's kind segment; an unknown segment is an unknown route (404). */
  private async noteable(user: User, kind: string, ref: string, rawId: string, o: NoteOptions = {}): Promise<Noteable> {
    const type = Object.prototype.hasOwnProperty.call(NOTEABLE_PATHS, kind) ? NOTEABLE_PATHS[kind] : undefined;
    if (!type || (o.commentsOnly && !COMMENT_KINDS.has(type))) throw new NotFound();
    return this.finders[type](user, ref, rawId);
  }

  private async find(target: Noteable, rawNoteId: string): Promise<Note> {
    const id = parseId(rawNoteId);
    const note =
      id === undefined
        ? null
        : await this.ds.getRepository(Note).findOne({ where: { id, noteableType: target.type, noteableId: target.id } });
    if (!note) throw new NotFound('Note');
    return note;
  }

  private assertCanAdmin(user: User, target: Noteable, note: Note): void {
    if (note.system) throw new Forbidden('System notes cannot be changed');
    const isAuthor = note.authorId === user.id;
    if (!target.abilities.has('admin_note') && !(isAuthor && target.abilities.has('read_note'))) throw new Forbidden();
  }

  private readBody(p: Params, name: 'body' | 'note' = 'body'): string {
    const body = p.requireString(name);
    if (body.length > MAX_BODY) throw new ValidationFailed({ note: ['is too long (maximum is 1000000 characters)'] });
    return body;
  }
}
