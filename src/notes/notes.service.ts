import { Injectable } from '@nestjs/common';
import { DataSource, In } from 'typeorm';
import { Forbidden, NotFound, ValidationFailed } from '../common/errors/domain-errors';
import { Paginated, pageRequest } from '../common/pagination/pagination';
import { Params, parseId } from '../common/params/params';
import { ProjectAbility } from '../common/policy/policy';
import { EventsService } from '../events/events.service';
import { readTimestamp, rejectNul } from '../common/params/legacy-readers';
import { canSetTimestamps } from '../issues/issue-policy';
import { IssuesService } from '../issues/issues.service';
import { Project } from '../projects/project.entity';
import { SnippetsService } from '../snippets/snippets.service';
import { User } from '../users/user.entity';
import { Note, NoteableType } from './note.entity';

/** Kinds of noteables with routes today (merge requests join when they exist). */
export type NoteableKind = Extract<NoteableType, 'Issue' | 'Snippet'>;

const MAX_BODY = 1_000_000;

interface Noteable {
  project: Project;
  abilities: Set<ProjectAbility>;
  type: NoteableKind;
  id: number;
  title: string;
  table: 'issues' | 'snippets';
}

/**
 * Notes (comments) on issues and snippets, one implementation for every noteable: the noteable must
 * be readable by the caller (else its 404), notes are listed in insertion order, the author or a
 * master (admin_note) edits and deletes them, creating one records a `commented` event.
 */
@Injectable()
export class NotesService {
  constructor(
    private readonly ds: DataSource,
    private readonly issues: IssuesService,
    private readonly snippets: SnippetsService,
    private readonly events: EventsService,
  ) {}

  async list(user: User, kind: NoteableKind, ref: string, rawId: string, p: Params): Promise<Paginated<Note>> {
    const target = await this.noteable(user, kind, ref, rawId);
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

  async get(user: User, kind: NoteableKind, ref: string, rawId: string, rawNoteId: string): Promise<Note> {
    const target = await this.noteable(user, kind, ref, rawId);
    if (!target.abilities.has('read_note')) throw new Forbidden();
    return this.find(target, rawNoteId);
  }

  /** `body` (required); `created_at` on issue notes for owners and admins. 201 with the note. */
  async create(user: User, kind: NoteableKind, ref: string, rawId: string, p: Params): Promise<Note> {
    rejectNul(p);
    const target = await this.noteable(user, kind, ref, rawId);
    if (!target.abilities.has('create_note')) throw new Forbidden();
    const body = this.readBody(p);
    const createdAt = kind === 'Issue' && canSetTimestamps(target.abilities) ? readTimestamp(p, 'created_at') : undefined;
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
    return note;
  }

  /** `body` (required): the note's author or a master; system notes are not editable. */
  async update(user: User, kind: NoteableKind, ref: string, rawId: string, rawNoteId: string, p: Params): Promise<Note> {
    rejectNul(p);
    const target = await this.noteable(user, kind, ref, rawId);
    const note = await this.find(target, rawNoteId);
    this.assertCanAdmin(user, target, note);
    const body = this.readBody(p);
    if (body !== note.body) await this.ds.getRepository(Note).update({ id: note.id }, { body });
    return this.ds.getRepository(Note).findOneByOrFail({ id: note.id });
  }

  /** 200 with the deleted note; `404 Note Not Found` when it does not exist (not idempotent). */
  async remove(user: User, kind: NoteableKind, ref: string, rawId: string, rawNoteId: string): Promise<Note> {
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

  private async noteable(user: User, kind: NoteableKind, ref: string, rawId: string): Promise<Noteable> {
    if (kind === 'Issue') {
      const { project, abilities, issue } = await this.issues.findReadable(user, ref, rawId);
      return { project, abilities, type: 'Issue', id: issue.id, title: issue.title, table: 'issues' };
    }
    const { project, abilities, snippet } = await this.snippets.findReadable(user, ref, rawId);
    return { project, abilities, type: 'Snippet', id: snippet.id, title: snippet.title, table: 'snippets' };
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

  private readBody(p: Params): string {
    const body = p.requireString('body');
    if (body.length > MAX_BODY) throw new ValidationFailed({ note: ['is too long (maximum is 1000000 characters)'] });
    return body;
  }
}
