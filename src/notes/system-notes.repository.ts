import { Injectable } from '@nestjs/common';
import { Tx } from '../database/transactions';
import { Note, NoteableType } from './note.entity';

/**
 * The writes on `notes` that the noteable areas' transactions make (SystemNotesService,
 * SystemNotesModule); the notes API's queries are NotesRepository's. Every method takes the caller's transaction.
 */
@Injectable()
export class SystemNotesRepository {
  /** System notes (`system: true`) by `authorId` on the target, in the caller's transaction. */
  async insertSystem(tx: Tx, target: { projectId: number; type: NoteableType; id: number }, authorId: number, bodies: string[]): Promise<void> {
    if (bodies.length === 0) return;
    await tx.getRepository(Note).insert(
      bodies.map((body) => ({
        projectId: target.projectId,
        noteableType: target.type,
        noteableId: target.id,
        authorId,
        body,
        system: true,
        attachment: null,
      })),
    );
  }

  /** Copies every note of issue `fromId` (system ones too, with their authors and times) onto `toId` in project `projectId`. */
  async copyIssueNotes(tx: Tx, fromId: number, toId: number, projectId: number): Promise<void> {
    await tx.query(
      `INSERT INTO notes (project_id, noteable_type, noteable_id, author_id, body, system, attachment, created_at, updated_at)
       SELECT $1, 'Issue', $2, author_id, body, system, attachment, created_at, updated_at
         FROM notes WHERE noteable_type = 'Issue' AND noteable_id = $3 ORDER BY id`,
      [projectId, toId, fromId],
    );
  }

  /** Deletes every note of one noteable, in the caller's transaction. */
  async deleteOf(tx: Tx, type: NoteableType, id: number): Promise<void> {
    await tx.query(`DELETE FROM notes WHERE noteable_type = $1 AND noteable_id = $2`, [type, id]);
  }
}
