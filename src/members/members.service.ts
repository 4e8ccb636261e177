import { Injectable } from '@nestjs/common';
import { DomainEvents } from '../domain-events/domain-events';
import { Conflict, Forbidden, isUniqueViolation, NotFound, Unprocessable } from '../common/errors/domain-errors';
import { Paginated, pageRequest } from '../common/pagination/pagination';
import { AccessLevel } from '../common/policy/policy';
import { Transactions, Tx } from '../database/transactions';
import { GroupsService } from '../groups/groups.service';
import { ProjectResolver } from '../projects/project-resolver.service';
import { UserDirectory } from '../users/user-directory.service';
import type { UserSummary } from '../users/users.presenter';
import { AddMemberDto, ListMembersDto, UpdateMemberDto } from './dto/member.dto';
import { MemberSourceKind, MemberSourceRef } from './member-source.decorator';
import { MemberTarget, MembersRepository } from './members.repository';
import type { Caller } from '../common/caller/caller';

/** Project members may be guest to master; group members guest to owner. */
const LEVELS: Record<MemberSourceKind, number[]> = { project: [10, 20, 30, 40], group: [10, 20, 30, 40, 50] };

/** A member as presented (GitLab's UserBasic plus the level): the list loads the summary columns only. */
export interface MemberRow {
  user: UserSummary;
  accessLevel: number;
}

/** What `DELETE .../members/:user_id` did: the removed member, or nothing for a user who was not one. */
export interface Removal {
  removed: MemberRow | undefined;
  userId: number | null;
}

/**
 * Memberships of projects and groups, one set of rules for both: reading needs read_project_member
 * (projects) or read_group, changing needs admin_project_member or admin_group_member. A group
 * always keeps an owner.
 */
@Injectable()
export class MembersService {
  constructor(
    private readonly members: MembersRepository,
    private readonly users: UserDirectory,
    private readonly tx: Transactions,
    private readonly projects: ProjectResolver,
    private readonly groups: GroupsService,
    private readonly domainEvents: DomainEvents,
  ) {}

  /** The project or group `:id`, checked for reading or for administering its members (404 / 403). */
  private async target(user: Caller, source: MemberSourceRef, write: boolean): Promise<MemberTarget> {
    if (source.kind === 'project') {
      const { project } = await this.projects.resolve(user, source.ref, write ? 'admin_project_member' : 'read_project_member');
      return { kind: 'project', id: project.id };
    }
    const group = await this.groups.resolve(user, source.ref, write ? 'admin_group_member' : 'read_group');
    return { kind: 'group', id: group.id };
  }

  /** Members with their users: one statement for the page and its total, one for the users. */
  async list(user: Caller, source: MemberSourceRef, q: ListMembersDto): Promise<Paginated<MemberRow>> {
    const t = await this.target(user, source, false);
    const page = pageRequest(q);
    const [rows, total] = await this.members.list(t, (q.query ?? q.search)?.trim() || undefined, page);
    return new Paginated(
      rows.map((r) => ({ user: r.user, accessLevel: r.accessLevel })),
      total,
      page,
    );
  }

  async get(user: Caller, source: MemberSourceRef, userId: number): Promise<MemberRow> {
    return this.member(await this.target(user, source, false), userId);
  }

  private async member(t: MemberTarget, userId: number): Promise<MemberRow> {
    const level = await this.members.levelOf(t, userId);
    const member = level === null ? undefined : (await this.users.byIds([userId])).get(userId);
    if (!member) throw new NotFound('Member');
    return { user: member, accessLevel: level as number };
  }

  /** 8.17's 422 `Access level is not known` (owner is a group level only). */
  private checkLevel(t: MemberTarget, level: number): number {
    if (!LEVELS[t.kind].includes(level)) throw new Unprocessable('Access level is not known');
    return level;
  }

  /**
   * Adds a member, as 8.17's `members.rb`: a user who is already a member of a project is answered
   * with that member, unchanged (201; the level sent is not even checked); of a group, 409 `Member
   * already exists`. Then 422 for a level that is not known, 404 for an unknown user.
   */
  async add(actor: Caller, source: MemberSourceRef, dto: AddMemberDto): Promise<MemberRow> {
    const t = await this.target(actor, source, true);
    const existing = await this.existing(t, dto.user_id);
    if (existing) return existing;
    const level = this.checkLevel(t, dto.access_level);
    const user = (await this.users.byIds([dto.user_id])).get(dto.user_id);
    if (!user) throw new NotFound('User');
    try {
      await this.tx.run(async (tx) => {
        await this.members.insert(t, user.id, level, tx);
        await this.outboxMember(tx, 'added', t, user.id, level); // system hooks
      });
    } catch (e) {
      // added by a concurrent request: answered as if it had been there first
      const added = isUniqueViolation(e) ? await this.existing(t, user.id) : undefined;
      if (added) return added;
      throw e;
    }
    if (t.kind === 'project')
      await this.domainEvents.emitCommitted('activity.recorded', { events: [{ projectId: t.id, authorId: user.id, action: 'joined' }] });
    return { user, accessLevel: level };
  }

  /** The user's membership if there is one: returned for a project, 409 for a group. */
  private async existing(t: MemberTarget, userId: number): Promise<MemberRow | undefined> {
    const level = await this.members.levelOf(t, userId);
    if (level === null) return undefined;
    if (t.kind === 'group') throw new Conflict('Member already exists');
    const user = (await this.users.byIds([userId])).get(userId);
    return user ? { user, accessLevel: level } : undefined;
  }

  async update(actor: Caller, source: MemberSourceRef, userId: number, dto: UpdateMemberDto): Promise<MemberRow> {
    const t = await this.target(actor, source, true);
    const current = await this.member(t, userId);
    const level = this.checkLevel(t, dto.access_level);
    await this.tx.run(async (tx) => {
      if (t.kind === 'group') await this.members.lockGroup(tx, t.id);
      // re-read under the lock: a concurrent change may have demoted or removed the member
      const now = await this.members.levelOf(t, current.user.id, tx);
      if (now === null) throw new NotFound('Member');
      if (t.kind === 'group' && now === AccessLevel.OWNER && level !== AccessLevel.OWNER) {
        await this.assertNotLastOwner(tx, t.id, current.user.id);
      }
      await this.members.setLevel(tx, t, current.user.id, level);
    });
    return { user: current.user, accessLevel: level };
  }

  /**
   * Removes a member (the removed member, or none when the user was not one of a project's; for a
   * group, 8.17's 404 `Member: user_id:<id>`). A group keeps its last owner. `echo` is the id the
   * client sent, repeated in the answer for a project's non-member.
   */
  async remove(actor: Caller, source: MemberSourceRef, userId: number, echo: number | null): Promise<Removal> {
    const t = await this.target(actor, source, true);
    const removed = await this.tx.run(async (tx) => {
      if (t.kind === 'group') await this.members.lockGroup(tx, t.id);
      const level = await this.members.levelOf(t, userId, tx, true);
      if (level === null) return undefined;
      if (t.kind === 'group' && level === AccessLevel.OWNER) await this.assertNotLastOwner(tx, t.id, userId);
      await this.members.delete(tx, t, userId);
      await this.outboxMember(tx, 'removed', t, userId, level); // system hooks
      return level;
    });
    if (removed === undefined && t.kind === 'group') throw new NotFound(echo === null ? 'Member' : `Member: user_id:${echo}`);
    if (removed === undefined) return { removed: undefined, userId: echo };
    if (t.kind === 'project') await this.domainEvents.emitCommitted('activity.recorded', { events: [{ projectId: t.id, authorId: userId, action: 'left' }] });
    const user = (await this.users.byIds([userId])).get(userId);
    return { removed: user ? { user, accessLevel: removed } : undefined, userId: echo };
  }

  private async outboxMember(tx: Tx, what: 'added' | 'removed', t: { kind: string; id: number }, userId: number, accessLevel: number): Promise<void> {
    if (t.kind === 'project') await this.domainEvents.emit(tx, `project_member.${what}`, { projectId: t.id, userId, accessLevel });
    else await this.domainEvents.emit(tx, `group_member.${what}`, { groupId: t.id, userId, accessLevel });
  }

  private async assertNotLastOwner(tx: Tx, groupId: number, userId: number): Promise<void> {
    if ((await this.members.otherOwners(tx, groupId, userId, AccessLevel.OWNER)) === 0) {
      throw new Forbidden('a group must keep at least one owner');
    }
  }
}
