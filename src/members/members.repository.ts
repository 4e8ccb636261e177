import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository, SelectQueryBuilder } from 'typeorm';
import { PageRequest } from '../common/pagination/pagination';
import { containsPattern } from '../common/params/params';
import { Tx } from '../database/transactions';
import { User } from '../users/user.entity';
import type { UserSummary } from '../users/users.presenter';
import { GroupMember, ProjectMember } from './member.entities';
import { UserDirectory } from '../users/user-directory.service';

/** The project or group whose memberships a query is about. */
export type MemberTarget = { kind: 'project'; id: number } | { kind: 'group'; id: number };

export interface MemberLevelRow {
  userId: number;
  accessLevel: number;
}

/** A membership with its user's summary columns (what the member presenter reads), as a page of members reads it. */
export interface MemberWithUser extends MemberLevelRow {
  user: UserSummary;
}

type AnyMember = ProjectMember | GroupMember;

/**
 * The members API's queries on `project_members` and `group_members` (MembersModule); the first member
 * of a new project or group is MembershipsRepository's (MembershipsModule).
 */
@Injectable()
export class MembersRepository {
  constructor(
    @InjectRepository(ProjectMember) private readonly projectMembers: Repository<ProjectMember>,
    @InjectRepository(GroupMember) private readonly groupMembers: Repository<GroupMember>,
    private readonly users: UserDirectory,
  ) {}

  private repo(t: MemberTarget, tx?: Tx): Repository<AnyMember> {
    const entity = t.kind === 'project' ? ProjectMember : GroupMember;
    if (tx) return tx.getRepository<AnyMember>(entity);
    return (t.kind === 'project' ? this.projectMembers : this.groupMembers) as Repository<AnyMember>;
  }

  /** The target's memberships (alias `m`), by a fixed condition per kind. */
  private of(t: MemberTarget, tx?: Tx): SelectQueryBuilder<AnyMember> {
    return this.repo(t, tx)
      .createQueryBuilder('m')
      .where(t.kind === 'project' ? 'm.project_id = :target' : 'm.namespace_id = :target', { target: t.id });
  }

  private key(t: MemberTarget, userId: number): Partial<AnyMember> {
    return t.kind === 'project' ? { projectId: t.id, userId } : { namespaceId: t.id, userId };
  }

  /**
   * A page of memberships in joining order, `search` on username or name, with the total (window
   * count): one statement (a counting one only for a page past the end).
   */
  async list(t: MemberTarget, search: string | undefined, page: PageRequest): Promise<[MemberWithUser[], number]> {
    const qb = this.of(t).innerJoin(User, 'u', 'u.id = m.user_id');
    if (search) qb.andWhere('(lower(u.username) LIKE :like OR lower(u.name) LIKE :like)', { like: containsPattern(search) });
    const select = qb.clone().select('m.user_id', 'user_id').addSelect('m.access_level', 'access_level').addSelect('count(*) OVER ()', 'total');
    for (const [expr, name] of this.users.joinedSelections('u', 'user')) select.addSelect(expr, name);
    const rows = await select
      .orderBy('m.id', 'ASC')
      .offset(page.offset)
      .limit(page.perPage)
      .getRawMany<{ user_id: number; access_level: number; total: string } & Record<string, unknown>>();
    const total = rows.length ? Number(rows[0].total) : page.offset === 0 ? 0 : await qb.getCount();
    return [rows.map((r) => ({ userId: r.user_id, accessLevel: r.access_level, user: this.users.joined(r, 'user') as UserSummary })), total];
  }

  /** The user's level in the target, or null; `lock` holds the row until commit. */
  async levelOf(t: MemberTarget, userId: number, tx?: Tx, lock = false): Promise<number | null> {
    const qb = this.of(t, tx).select('m.access_level', 'access_level').andWhere('m.user_id = :uid', { uid: userId });
    if (lock) qb.setLock('pessimistic_write');
    const row = await qb.getRawOne<{ access_level: number }>();
    return row ? row.access_level : null;
  }

  async insert(t: MemberTarget, userId: number, accessLevel: number, tx?: Tx): Promise<void> {
    await this.repo(t, tx).insert({ ...this.key(t, userId), accessLevel, notificationLevel: 3 });
  }

  async setLevel(tx: Tx, t: MemberTarget, userId: number, accessLevel: number): Promise<void> {
    await this.repo(t, tx).update(this.key(t, userId), { accessLevel });
  }

  async delete(tx: Tx, t: MemberTarget, userId: number): Promise<void> {
    await this.repo(t, tx).delete(this.key(t, userId));
  }

  /**
   * Serializes the changes that can take owners away from a group (two owners removing or demoting
   * each other at once would otherwise both see the other one and leave the group without owner).
   */
  async lockGroup(tx: Tx, groupId: number): Promise<void> {
    await tx.query(`SELECT id FROM namespaces WHERE id = $1 FOR NO KEY UPDATE`, [groupId]);
  }

  /** Owners of the group other than `userId`. */
  otherOwners(tx: Tx, groupId: number, userId: number, ownerLevel: number): Promise<number> {
    return tx
      .getRepository(GroupMember)
      .createQueryBuilder('m')
      .where('m.namespace_id = :groupId AND m.access_level = :ownerLevel AND m.user_id <> :userId', { groupId, ownerLevel, userId })
      .getCount();
  }
}
