import { Injectable } from '@nestjs/common';
import { Tx } from '../database/transactions';
import { ProjectPath, rebaseCrossReference } from './cross-references';
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

  /**
   * The cross-reference note `body` (`mentioned in ...`) on the target by `authorId`, unless the
   * target has one from the same source already (`commitSha`: a commit's, under any project prefix).
   * In the caller's transaction; whether it was written.
   */
  addCrossReference(tx: Tx, target: SystemNoteTarget, authorId: number, body: string, source: { commitSha?: string } = {}): Promise<boolean> {
    return this.notes.insertUnlessReferenced(tx, target, authorId, body, source);
  }

  /**
   * Copies every note of issue `fromId` (system ones too, with their authors and times) onto `toId` in
   * project `to`; cross-reference notes are rewritten to name their source as seen from `to` (their
   * references were relative to `from`, and who may see them depends on what they name).
   */
  copyIssueNotes(tx: Tx, fromId: number, toId: number, from: ProjectPath, to: ProjectPath): Promise<void> {
    return this.notes.copyIssueNotes(tx, fromId, toId, to.id, (body) => rebaseCrossReference(body, from, to));
  }

  /** Deletes the notes of a snippet being deleted, in its transaction. */
  deleteSnippetNotes(tx: Tx, snippetId: number): Promise<void> {
    return this.notes.deleteOf(tx, 'Snippet', snippetId);
  }
}
