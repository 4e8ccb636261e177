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

  /**
   * A system note unless the target already has one from the same source — the same body (either
   * capitalisation), or for a commit any body ending in its sha, whatever project prefix (GitLab's
   * `cross_reference_exists?`) — checked and written under a lock on the target for the rest of the
   * transaction, so two reactions at once never write it twice. Whether it was written.
   */
  async insertUnlessReferenced(
    tx: Tx,
    target: { projectId: number; type: NoteableType; id: number },
    authorId: number,
    body: string,
    source: { commitSha?: string },
  ): Promise<boolean> {
    await tx.query(`SELECT pg_advisory_xact_lock(hashtext($1), $2)`, [`notes.cross_reference.${target.type}`, target.id]);
    const same = source.commitSha
      ? { sql: `lower(body) LIKE 'mentioned in %' || $3`, param: source.commitSha.toLowerCase() }
      : { sql: `lower(body) = lower($3)`, param: body };
    const found: unknown[] = await tx.query(`SELECT 1 FROM notes WHERE noteable_type = $1 AND noteable_id = $2 AND system AND ${same.sql} LIMIT 1`, [
      target.type,
      target.id,
      same.param,
    ]);
    if (found.length) return false;
    await this.insertSystem(tx, target, authorId, [body]);
    return true;
  }

  /**
   * Copies every note of issue `fromId` (system ones too, with their authors and times) onto `toId` in
   * project `projectId`; `rewrite` gives the body a copied cross-reference note must have there.
   */
  async copyIssueNotes(tx: Tx, fromId: number, toId: number, projectId: number, rewrite?: (body: string) => string): Promise<void> {
    await tx.query(
      `INSERT INTO notes (project_id, noteable_type, noteable_id, author_id, body, system, attachment, created_at, updated_at)
       SELECT $1, 'Issue', $2, author_id, body, system, attachment, created_at, updated_at
         FROM notes WHERE noteable_type = 'Issue' AND noteable_id = $3 ORDER BY id`,
      [projectId, toId, fromId],
    );
    if (!rewrite) return;
    const copied: { id: number; body: string }[] = await tx.query(
      `SELECT id, body FROM notes WHERE noteable_type = 'Issue' AND noteable_id = $1 AND system AND body ILIKE 'mentioned in %'`,
      [toId],
    );
    for (const n of copied) {
      const body = rewrite(n.body);
      if (body !== n.body) await tx.query(`UPDATE notes SET body = $1 WHERE id = $2`, [body, n.id]);
    }
  }

  /** Deletes every note of one noteable, in the caller's transaction. */
  async deleteOf(tx: Tx, type: NoteableType, id: number): Promise<void> {
    await tx.query(`DELETE FROM notes WHERE noteable_type = $1 AND noteable_id = $2`, [type, id]);
  }
}
