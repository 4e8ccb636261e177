import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { DataSource, Repository } from 'typeorm';
import { PageRequest } from '../common/pagination/pagination';
import { JoinedEntity } from '../database/joined-rows';
import { Tx } from '../database/transactions';
import type { UserSummary } from '../users/users.presenter';
import { UserDirectory } from '../users/user-directory.service';
import { Note, NoteableType } from './note.entity';

/** A note with its author, read in one statement. */
export interface NoteWithAuthor {
  note: Note;
  author: UserSummary | null;
}

/** Every query on `notes` of the notes area. Methods that write take the caller's transaction. */
@Injectable()
export class NotesRepository {
  private readonly noteRow: JoinedEntity<Note>;

  constructor(
    @InjectRepository(Note) private readonly notes: Repository<Note>,
    private readonly users: UserDirectory,
    ds: DataSource,
  ) {
    this.noteRow = new JoinedEntity(ds, Note, 'n', 'n');
  }

  /**
   * A page of one noteable's notes in insertion order with their authors and the total (window
   * count): one statement; only a page past the end costs a second (count) one.
   */
  async listWithAuthors(type: NoteableType, noteableId: number, page: PageRequest): Promise<[NoteWithAuthor[], number]> {
    const rows: Record<string, unknown>[] = await this.notes.query(
      `SELECT count(*) OVER () AS "total", ${this.noteRow.columns}, ${this.users.joinedColumns('a', 'author')}
         FROM notes n LEFT JOIN users a ON a.id = n.author_id
        WHERE n.noteable_type = $1 AND n.noteable_id = $2
        ORDER BY n.id ASC OFFSET $3 LIMIT $4`,
      [type, noteableId, page.offset, page.perPage],
    );
    const items = rows.map((r) => ({ note: this.noteRow.from(r) as Note, author: this.users.joined(r, 'author') }));
    if (rows.length || page.offset === 0) return [items, rows.length ? Number(rows[0].total) : 0];
    return [[], await this.notes.countBy({ noteableType: type, noteableId })];
  }

  private repo(tx?: Tx): Repository<Note> {
    return tx ? tx.getRepository(Note) : this.notes;
  }

  /** The note, when it belongs to that noteable. */
  findOn(type: NoteableType, noteableId: number, id: number): Promise<Note | null> {
    return this.notes.findOne({ where: { id, noteableType: type, noteableId } });
  }

  insert(tx: Tx, values: Partial<Note>): Promise<Note> {
    const repo = this.repo(tx);
    return repo.save(repo.create(values));
  }

  async setBody(tx: Tx, id: number, body: string): Promise<void> {
    await this.repo(tx).update({ id }, { body });
  }

  find(id: number): Promise<Note | null> {
    return this.notes.findOneBy({ id });
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
