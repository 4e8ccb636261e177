import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { PageRequest } from '../common/pagination/pagination';
import { Tx } from '../database/transactions';
import { Snippet } from './snippet.entity';
import { manyWithTotal } from '../database/joined-rows';

/** Every query on `snippets` (and the snippet rows of `notes`, deleted with their snippet). */
@Injectable()
export class SnippetsRepository {
  constructor(@InjectRepository(Snippet) private readonly snippets: Repository<Snippet>) {}

  /**
   * A page of the project's snippets, newest first (created_at, then id), with the total; `visible`
   * (alias `s`) narrows it for callers who do not see every snippet.
   */
  list(projectId: number, visible: { sql: string; params: Record<string, unknown> } | undefined, page: PageRequest): Promise<[Snippet[], number]> {
    const qb = this.snippets.createQueryBuilder('s').where('s.project_id = :projectId', { projectId });
    if (visible) qb.andWhere(visible.sql, visible.params);
    return manyWithTotal(qb.orderBy('s.created_at', 'DESC').addOrderBy('s.id', 'DESC').offset(page.offset).limit(page.perPage));
  }

  findInProject(projectId: number, id: number): Promise<Snippet | null> {
    return this.snippets.findOne({ where: { id, projectId } });
  }

  byId(id: number): Promise<Snippet> {
    return this.snippets.findOneByOrFail({ id });
  }

  insert(values: Partial<Snippet>): Promise<Snippet> {
    return this.snippets.save(this.snippets.create(values));
  }

  async update(id: number, changes: Partial<Snippet>): Promise<void> {
    await this.snippets.update({ id }, changes);
  }

  /** Deletes the snippet, in the caller's transaction (its notes: SystemNotesService.deleteSnippetNotes). */
  async delete(tx: Tx, id: number): Promise<void> {
    await tx.getRepository(Snippet).delete({ id });
  }

  /** Sets `updated_at` to now, in the caller's transaction: a note on it touches it (GitLab's `belongs_to :noteable, touch: true`). */
  async touch(tx: Tx, id: number): Promise<void> {
    await tx.query(`UPDATE snippets SET updated_at = now() WHERE id = $1`, [id]);
  }
}
