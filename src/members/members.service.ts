import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { Conflict, Forbidden, isUniqueViolation, NotFound, ValidationFailed } from '../common/errors/domain-errors';
import { Paginated, pageRequest } from '../common/pagination/pagination';
import { containsPattern, Params, parseId } from '../common/params/params';
import { AccessLevel } from '../common/policy/policy';
import { DomainEvents } from '../events/domain-events';
import { EventsService } from '../events/events.service';
import { Namespace } from '../namespaces/namespace.entity';
import { Project } from '../projects/project.entity';
import { User } from '../users/user.entity';
import { GroupMember, ProjectMember } from './member.entities';

/** Project members may be guest to master; group members guest to owner. */
const PROJECT_LEVELS = [10, 20, 30, 40];
const GROUP_LEVELS = [10, 20, 30, 40, 50];

export interface MemberRow {
  user: User;
  accessLevel: number;
}

type Target = { kind: 'project'; project: Project } | { kind: 'group'; group: Namespace };

/**
 * Memberships of projects and groups. Callers check the abilities (read_project_member /
 * admin_project_member, read_group / admin_group_member) before calling.
 */
@Injectable()
export class MembersService {
  constructor(
    private readonly ds: DataSource,
    private readonly events: EventsService,
    private readonly domainEvents: DomainEvents,
  ) {}

  private table(t: Target) {
    return t.kind === 'project'
      ? { name: 'project_members', key: 'project_id', id: t.project.id, levels: PROJECT_LEVELS }
      : { name: 'group_members', key: 'namespace_id', id: t.group.id, levels: GROUP_LEVELS };
  }

  /** Members with their users: one count and one joined page query. `query` filters on username or name. */
  async list(t: Target, p: Params): Promise<Paginated<MemberRow>> {
    const page = pageRequest(p);
    const tb = this.table(t);
    const search = (p.string('query') ?? p.string('search'))?.trim();
    const like = search ? containsPattern(search) : null;
    const where = `m.${tb.key} = $1 AND ($2::text IS NULL OR lower(u.username) LIKE $2 OR lower(u.name) LIKE $2)`;
    const [count, rows] = await Promise.all([
      this.ds.query(`SELECT count(*)::int AS n FROM ${tb.name} m JOIN users u ON u.id = m.user_id WHERE ${where}`, [tb.id, like]),
      this.ds.query(
        `SELECT m.user_id, m.access_level FROM ${tb.name} m JOIN users u ON u.id = m.user_id
          WHERE ${where} ORDER BY m.id ASC LIMIT $3 OFFSET $4`,
        [tb.id, like, page.perPage, page.offset],
      ) as Promise<{ user_id: number; access_level: number }[]>,
    ]);
    const users = await this.users(rows.map((r) => r.user_id));
    return new Paginated(
      rows.map((r) => ({ user: users.get(r.user_id) as User, accessLevel: r.access_level })),
      (count as { n: number }[])[0].n,
      page,
    );
  }

  private async users(ids: number[]): Promise<Map<number, User>> {
    if (ids.length === 0) return new Map();
    const users = await this.ds.getRepository(User).createQueryBuilder('u').where('u.id = ANY(:ids)', { ids }).getMany();
    return new Map(users.map((u) => [u.id, u]));
  }

  async get(t: Target, rawUserId: string): Promise<MemberRow> {
    const userId = parseId(rawUserId);
    const tb = this.table(t);
    const rows: { access_level: number }[] =
      userId === undefined
        ? []
        : await this.ds.query(`SELECT access_level FROM ${tb.name} WHERE ${tb.key} = $1 AND user_id = $2`, [tb.id, userId]);
    if (!rows.length) throw new NotFound('Member');
    const user = (await this.users([userId as number])).get(userId as number) as User;
    return { user, accessLevel: rows[0].access_level };
  }

  private readLevel(t: Target, p: Params): number {
    const level = p.int('access_level', { required: true }) as number;
    if (!this.table(t).levels.includes(level)) throw new ValidationFailed({ access_level: ['is not included in the list'] });
    return level;
  }

  /** Adds a member: 404 unknown user, 409 already a member, 400 bad level. */
  async add(actor: User, t: Target, p: Params): Promise<MemberRow> {
    const userId = p.int('user_id', { required: true }) as number;
    const level = this.readLevel(t, p);
    const user = (await this.users([userId])).get(userId);
    if (!user) throw new NotFound('User');
    try {
      if (t.kind === 'project') {
        await this.ds.getRepository(ProjectMember).insert({ projectId: t.project.id, userId, accessLevel: level, notificationLevel: 3 });
      } else {
        await this.ds.getRepository(GroupMember).insert({ namespaceId: t.group.id, userId, accessLevel: level, notificationLevel: 3 });
      }
    } catch (e) {
      if (isUniqueViolation(e)) throw new Conflict('Member already exists');
      throw e;
    }
    if (t.kind === 'project') await this.events.record({ projectId: t.project.id, authorId: userId, action: 'joined' });
    this.emitMember('added', t, userId, level); // system hooks
    return { user, accessLevel: level };
  }

  async update(t: Target, rawUserId: string, p: Params): Promise<MemberRow> {
    const current = await this.get(t, rawUserId);
    const level = this.readLevel(t, p);
    const tb = this.table(t);
    await this.ds.transaction(async (m) => {
      await this.lockOwners(m, t);
      // re-read under the lock: a concurrent change may have demoted or removed the member
      const rows: { access_level: number }[] = await m.query(
        `SELECT access_level FROM ${tb.name} WHERE ${tb.key} = $1 AND user_id = $2`,
        [tb.id, current.user.id],
      );
      if (!rows.length) throw new NotFound('Member');
      if (t.kind === 'group' && rows[0].access_level === AccessLevel.OWNER && level !== AccessLevel.OWNER) {
        await this.assertNotLastOwner(m, t.group.id, current.user.id);
      }
      await m.query(`UPDATE ${tb.name} SET access_level = $3, updated_at = now() WHERE ${tb.key} = $1 AND user_id = $2`, [
        tb.id,
        current.user.id,
        level,
      ]);
    });
    return { user: current.user, accessLevel: level };
  }

  /** Removes a member; the removed member, or undefined when the user was not one. A group keeps its last owner. */
  async remove(t: Target, rawUserId: string): Promise<MemberRow | undefined> {
    const userId = parseId(rawUserId);
    if (userId === undefined) return undefined;
    const tb = this.table(t);
    const removed = await this.ds.transaction(async (m) => {
      await this.lockOwners(m, t);
      const rows: { access_level: number }[] = await m.query(
        `SELECT access_level FROM ${tb.name} WHERE ${tb.key} = $1 AND user_id = $2 FOR UPDATE`,
        [tb.id, userId],
      );
      if (!rows.length) return undefined;
      if (t.kind === 'group' && rows[0].access_level === AccessLevel.OWNER) await this.assertNotLastOwner(m, tb.id, userId);
      await m.query(`DELETE FROM ${tb.name} WHERE ${tb.key} = $1 AND user_id = $2`, [tb.id, userId]);
      return rows[0].access_level;
    });
    if (removed === undefined) return undefined;
    if (t.kind === 'project') await this.events.record({ projectId: t.project.id, authorId: userId, action: 'left' });
    this.emitMember('removed', t, userId, removed); // system hooks
    const user = (await this.users([userId])).get(userId);
    return user ? { user, accessLevel: removed } : undefined;
  }

  private emitMember(what: 'added' | 'removed', t: Target, userId: number, accessLevel: number): void {
    if (t.kind === 'project') this.domainEvents.emit(`project_member.${what}`, { projectId: t.project.id, userId, accessLevel });
    else this.domainEvents.emit(`group_member.${what}`, { groupId: t.group.id, userId, accessLevel });
  }

  /**
   * Serializes the changes that can take owners away from a group (two owners removing or demoting
   * each other at once would otherwise both see the other one and leave the group without owner).
   */
  private async lockOwners(m: EntityManager, t: Target): Promise<void> {
    if (t.kind === 'group') await m.query(`SELECT id FROM namespaces WHERE id = $1 FOR NO KEY UPDATE`, [t.group.id]);
  }

  private async assertNotLastOwner(m: EntityManager, groupId: number, userId: number): Promise<void> {
    const owners: { n: number }[] = await m.query(
      `SELECT count(*)::int AS n FROM group_members WHERE namespace_id = $1 AND access_level = 50 AND user_id <> $2`,
      [groupId, userId],
    );
    if (owners[0].n === 0) throw new Forbidden('a group must keep at least one owner');
  }
}
