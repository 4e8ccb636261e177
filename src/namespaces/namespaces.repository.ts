import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { PageRequest } from '../common/pagination/pagination';
import { Tx } from '../database/transactions';
import { Namespace } from './namespace.entity';
import { manyWithTotal } from '../database/joined-rows';

/**
 * Every query on `namespaces`. Users reach their personal namespace through this (exported by
 * NamespacesModule): created with the user, renamed with the username, removed with the user.
 */
@Injectable()
export class NamespacesRepository {
  constructor(@InjectRepository(Namespace) private readonly namespaces: Repository<Namespace>) {}

  /**
   * A page of namespaces, id descending: all of them, or (`memberId`) the user's own namespace and the
   * groups it belongs to; `pattern` (a LIKE pattern) matches name or path.
   */
  list(filter: { memberId?: number; pattern?: string }, page: PageRequest): Promise<[Namespace[], number]> {
    const qb = this.namespaces.createQueryBuilder('n');
    if (filter.memberId !== undefined) {
      qb.where(
        `((n.kind = 'user' AND n.owner_id = :uid) OR
          (n.kind = 'group' AND n.id IN (SELECT namespace_id FROM group_members WHERE user_id = :uid)))`,
        { uid: filter.memberId },
      );
    }
    if (filter.pattern !== undefined) qb.andWhere('(lower(n.name) LIKE :like OR lower(n.path) LIKE :like)', { like: filter.pattern });
    return manyWithTotal(qb.orderBy('n.id', 'DESC').offset(page.offset).limit(page.perPage));
  }

  /** A user's personal namespace. */
  personalOf(ownerId: number): Promise<Namespace | null> {
    return this.namespaces.findOne({ where: { ownerId, kind: 'user' } });
  }

  byId(id: number): Promise<Namespace | null> {
    return this.namespaces.findOne({ where: { id } });
  }

  /** Creates a user's personal namespace (path and name are the username; public). */
  async insertPersonal(tx: Tx, ownerId: number, username: string): Promise<void> {
    await tx.getRepository(Namespace).insert({
      name: username,
      path: username,
      kind: 'user',
      ownerId,
      description: '',
      visibilityLevel: 20,
    });
  }

  /** Follows a change of username. */
  async renamePersonal(tx: Tx, ownerId: number, username: string): Promise<void> {
    await tx.getRepository(Namespace).update({ ownerId, kind: 'user' }, { path: username, name: username });
  }

  /** Whether a namespace other than `ownerId`'s own has this path, case-insensitively. */
  async pathTaken(tx: Tx, path: string, ownerId: number | null = null): Promise<boolean> {
    const rows: { n: number }[] = await tx.query(
      `SELECT count(*)::int AS n FROM namespaces
        WHERE lower(path) = lower($1) AND NOT (kind = 'user' AND owner_id IS NOT DISTINCT FROM $2)`,
      [path, ownerId],
    );
    return rows[0].n > 0;
  }

  /** Removes a user's personal namespace (the projects area has deleted its projects' rows first). */
  async removePersonal(tx: Tx, ownerId: number): Promise<void> {
    await tx.query(`DELETE FROM namespaces WHERE kind = 'user' AND owner_id = $1`, [ownerId]);
  }
}
