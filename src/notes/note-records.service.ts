import { Injectable } from '@nestjs/common';
import { PageRequest } from '../common/pagination/pagination';
import { Tx } from '../database/transactions';
import { Note, NoteableType } from './note.entity';
import { NotesRepository, NoteWithAuthor } from './notes.repository';

export type { NoteWithAuthor };

/**
 * The notes table's rows for the notes API (notes-api/, which holds the rules: who may read, write and
 * edit): the notes area owns the table, and its API sits above the noteable areas it reads through.
 */
@Injectable()
export class NoteRecords {
  constructor(private readonly repo: NotesRepository) {}

  /** A page of one noteable's notes in insertion order with their authors, and the total. */
  listWithAuthors(type: NoteableType, noteableId: number, page: PageRequest): Promise<[NoteWithAuthor[], number]> {
    return this.repo.listWithAuthors(type, noteableId, page);
  }

  findOn(type: NoteableType, noteableId: number, id: number): Promise<Note | null> {
    return this.repo.findOn(type, noteableId, id);
  }

  insert(tx: Tx, values: Partial<Note>): Promise<Note> {
    return this.repo.insert(tx, values);
  }

  setBody(tx: Tx, id: number, body: string): Promise<void> {
    return this.repo.setBody(tx, id, body);
  }

  /** The note, or null when it is gone. */
  find(id: number): Promise<Note | null> {
    return this.repo.find(id);
  }

  byId(id: number): Promise<Note> {
    return this.repo.byId(id);
  }

  /** False when the note was already gone. */
  delete(id: number): Promise<boolean> {
    return this.repo.delete(id);
  }
}
