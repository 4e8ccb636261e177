import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { PageRequest } from '../common/pagination/pagination';
import { Tx } from '../database/transactions';
import { Note, NoteableType } from './note.entity';

/**
 * A new note touches its noteable (`updated_at`), like GitLab's `belongs_to :noteable, touch: true`:
 * one fixed statement per kind, so no table name is ever built into SQL.
 */
const TOUCH: Readonly<Record<NoteableType, string>> = {
  Issue: 'UPDATE issues SET updated_at = now() WHERE id = $1',
  Snippet: 'UPDATE snippets SET updated_at = now() WHERE id = $1',
  MergeRequest: 'UPDATE merge_requests SET updated_at = now() WHERE id = $1',
};

/** Every query on `notes` of the notes area. Methods that write take the caller's transaction. */
@Injectable()
export class NotesRepository {
  constructor(@InjectRepository(Note) private readonly notes: Repository<Note>) {}

  private repo(tx?: Tx): Repository<Note> {
    return tx ? tx.getRepository(Note) : this.notes;
  }

  /** A page of one noteable's notes in insertion order, with the total. */
  list(type: NoteableType, noteableId: number, page: PageRequest): Promise<[Note[], number]> {
    return this.notes.findAndCount({
      where: { noteableType: type, noteableId },
      order: { id: 'ASC' },
      skip: page.offset,
      take: page.perPage,
    });
  }

  /** The note, when it belongs to that noteable. */
  findOn(type: NoteableType, noteableId: number, id: number): Promise<Note | null> {
    return this.notes.findOne({ where: { id, noteableType: type, noteableId } });
  }

  insert(tx: Tx, values: Partial<Note>): Promise<Note> {
    const repo = this.repo(tx);
    return repo.save(repo.create(values));
  }

  async touchNoteable(tx: Tx, type: NoteableType, noteableId: number): Promise<void> {
    await tx.query(TOUCH[type], [noteableId]);
  }

  async setBody(id: number, body: string): Promise<void> {
    await this.notes.update({ id }, { body });
  }

  byId(id: number): Promise<Note> {
    return this.notes.findOneByOrFail({ id });
  }

  /** Deletes the note; false when it was already gone. */
  async delete(id: number): Promise<boolean> {
    const result = await this.notes.delete({ id });
    return !!result.affected;
  }
}
