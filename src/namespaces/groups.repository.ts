import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { PageRequest } from '../common/pagination/pagination';
import { containsPattern } from '../common/params/params';
import { Tx } from '../database/transactions';
import { Namespace } from './namespace.entity';
import { manyWithTotal } from '../database/joined-rows';

/** A group by id or by path (case-insensitive). */
export type GroupKey = { id: number } | { path: string };

/** Every query on groups (namespaces of kind `group`: the namespaces area owns the table; the groups area calls GroupNamespacesService). Methods that write take the caller's transaction. */
@Injectable()
export class GroupsRepository {
  constructor(@InjectRepository(Namespace) private readonly namespaces: Repository<Namespace>) {}

  find(key: GroupKey): Promise<Namespace | null> {
    const qb = this.namespaces.createQueryBuilder('n').where(`n.kind = 'group'`);
    if ('id' in key) qb.andWhere('n.id = :id', { id: key.id });
    else qb.andWhere('lower(n.path) = lower(:path)', { path: key.path });
    return qb.getOne();
  }

  /** The group with the caller's level in it (0 for none, or no caller): one statement. */
  async findWithLevel(key: GroupKey, userId: number | null): Promise<{ group: Namespace; level: number } | null> {
    const qb = this.namespaces
      .createQueryBuilder('n')
      .addSelect('(SELECT gm.access_level FROM group_members gm WHERE gm.namespace_id = n.id AND gm.user_id = :levelUid)', 'caller_level')
      .setParameter('levelUid', userId ?? 0)
      .where(`n.kind = 'group'`);
    if ('id' in key) qb.andWhere('n.id = :id', { id: key.id });
    else qb.andWhere('lower(n.path) = lower(:path)', { path: key.path });
    const { entities, raw } = await qb.getRawAndEntities();
    if (!entities.length) return null;
    return { group: entities[0], level: userId === null ? 0 : ((raw[0] as { caller_level: number | null }).caller_level ?? 0) };
  }

  /** A page of groups by name, with the total; `memberId` keeps the groups that user is a member of. */
  list(filter: { memberId?: number; search?: string }, page: PageRequest): Promise<[Namespace[], number]> {
    const qb = this.namespaces.createQueryBuilder('n').where(`n.kind = 'group'`);
    if (filter.memberId !== undefined) {
      qb.andWhere('n.id IN (SELECT namespace_id FROM group_members WHERE user_id = :uid)', { uid: filter.memberId });
    }
    if (filter.search) {
      qb.andWhere('(lower(n.name) LIKE :like OR lower(n.path) LIKE :like)', { like: containsPattern(filter.search) });
    }
    return manyWithTotal(qb.orderBy('n.name', 'ASC').addOrderBy('n.id', 'ASC').offset(page.offset).limit(page.perPage));
  }

  /** Whether any namespace (user or group) has this path, in any case. */
  async pathTaken(tx: Tx, path: string): Promise<boolean> {
    const rows: { n: number }[] = await tx.query(`SELECT count(*)::int AS n FROM namespaces WHERE lower(path) = lower($1)`, [path]);
    return rows[0].n > 0;
  }

  /** Inserts the group (its first member is the members area's: MembershipsService.addGroupOwner). */
  async insert(tx: Tx, values: Partial<Namespace>): Promise<Namespace> {
    const repo = tx.getRepository(Namespace);
    return repo.save(repo.create({ ...values, kind: 'group' }));
  }

  /** Locks the group's row until commit: project creations and transfers into it wait (or fail after). */
  async lock(tx: Tx, groupId: number): Promise<void> {
    await tx.query(`SELECT id FROM namespaces WHERE id = $1 FOR UPDATE`, [groupId]);
  }

  async delete(tx: Tx, groupId: number): Promise<void> {
    await tx.getRepository(Namespace).delete({ id: groupId });
  }
}
