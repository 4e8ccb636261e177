import { Injectable } from '@nestjs/common';
import { Tx } from '../database/transactions';
import { NoteableType } from './note.entity';
import { SystemNotesRepository } from './system-notes.repository';

export interface SystemNoteTarget {
  projectId: number;
  type: NoteableType;
  id: number;
}

/**
 * The notes other areas write in their own transactions: system notes (`system: true`, the record of
 * state changes, moves, label, assignee, milestone and title changes that shows up in the note list),
 * the notes a moved issue takes along, and the notes of a deleted snippet. The notes area owns
 * `notes`; SystemNotesModule has no dependency on the noteable areas, so they can import it.
 */
@Injectable()
export class SystemNotesService {
  constructor(private readonly notes: SystemNotesRepository) {}

  /** Writes system notes by `authorId` on the target, in the caller's transaction (nothing for no bodies). */
  addSystemNotes(tx: Tx, target: SystemNoteTarget, authorId: number, bodies: string[]): Promise<void> {
    return this.notes.insertSystem(tx, target, authorId, bodies);
  }

  /** Copies every note of issue `fromId` (system ones too, with their authors and times) onto `toId` in project `projectId`. */
  copyIssueNotes(tx: Tx, fromId: number, toId: number, projectId: number): Promise<void> {
    return this.notes.copyIssueNotes(tx, fromId, toId, projectId);
  }

  /** Deletes the notes of a snippet being deleted, in its transaction. */
  deleteSnippetNotes(tx: Tx, snippetId: number): Promise<void> {
    return this.notes.deleteOf(tx, 'Snippet', snippetId);
  }
}
