import { Injectable } from '@nestjs/common';
import { DomainEvents } from '../events/domain-events';
import { DataSource } from 'typeorm';
import { ApplicationSettingsService, visibilityLevel } from '../application-settings/application-settings.service';
import { Forbidden, isUniqueViolation, NotFound, ValidationFailed, ValidationMap } from '../common/errors/domain-errors';
import { Paginated, pageRequest } from '../common/pagination/pagination';
import { containsPattern, Params, parseId } from '../common/params/params';
import { AccessLevel, GroupAbility } from '../common/policy/policy';
import { PolicyService } from '../common/policy/policy.service';
import { GitService } from '../git/git.service';
import { GroupMember } from '../members/member.entities';
import { Namespace } from '../namespaces/namespace.entity';
import { Project } from '../projects/project.entity';
import { User } from '../users/user.entity';
import { pathErrors } from '../users/user-attributes';

const TAKEN = () => new ValidationFailed({ path: ['has already been taken'] });

/** Groups: namespaces of kind `group` with members; their creator becomes the first owner. */
@Injectable()
export class GroupsService {
  constructor(
    private readonly ds: DataSource,
    private readonly policy: PolicyService,
    private readonly settings: ApplicationSettingsService,
    private readonly git: GitService,
    private readonly domainEvents: DomainEvents,
  ) {}

  /** A group by id or path, whatever the caller may see. */
  async findByRef(ref: string): Promise<Namespace> {
    const id = parseId(ref);
    const qb = this.ds.getRepository(Namespace).createQueryBuilder('n').where(`n.kind = 'group'`);
    if (id !== undefined) qb.andWhere('n.id = :id', { id });
    else qb.andWhere('lower(n.path) = lower(:path)', { path: ref });
    const group = await qb.getOne();
    if (!group) throw new NotFound('Group');
    return group;
  }

  /** The group when the caller has `ability` on it: 404 when it may not see it, 403 otherwise. */
  async authorize(user: User, ref: string, ability: GroupAbility = 'read_group'): Promise<Namespace> {
    const group = await this.findByRef(ref);
    await this.policy.authorizeGroup(user, group, ability);
    return group;
  }

  /** `GET /groups`: all for an administrator, the caller's groups otherwise; `search` on name or path. */
  async list(user: User, p: Params): Promise<Paginated<Namespace>> {
    const page = pageRequest(p);
    const qb = this.ds.getRepository(Namespace).createQueryBuilder('n').where(`n.kind = 'group'`);
    if (!user.admin) {
      qb.andWhere('n.id IN (SELECT namespace_id FROM group_members WHERE user_id = :uid)', { uid: user.id });
    }
    const search = p.string('search')?.trim();
    if (search) {
      const like = containsPattern(search);
      qb.andWhere('(lower(n.name) LIKE :like OR lower(n.path) LIKE :like)', { like });
    }
    qb.orderBy('n.name', 'ASC').addOrderBy('n.id', 'ASC').offset(page.offset).limit(page.perPage);
    const [rows, total] = await qb.getManyAndCount();
    return new Paginated(rows, total, page);
  }

  /** `POST /groups`: needs `can_create_group` (or admin); name and path required; path unique among namespaces. */
  async create(user: User, p: Params): Promise<Namespace> {
    if (!user.admin && !user.canCreateGroup) throw new Forbidden();
    const name = p.requireString('name').trim();
    const path = p.requireString('path').trim();
    const errors: ValidationMap = {};
    if (name.length > 255) errors.name = ['is too long (maximum is 255 characters)'];
    const pe = pathErrors(path);
    if (pe.length) errors.path = pe;
    const description = p.string('description') ?? '';
    let level = (await this.settings.get()).defaultGroupVisibility;
    const raw = (() => {
      try {
        return p.int('visibility_level');
      } catch {
        errors.visibility_level = ['is invalid'];
        return undefined;
      }
    })();
    if (raw !== undefined) {
      const mapped = visibilityLevel(raw);
      if (mapped === undefined) errors.visibility_level = ['is not included in the list'];
      else level = mapped;
    }
    if (Object.keys(errors).length) throw new ValidationFailed(errors);
    const restricted = (await this.settings.get()).restrictedVisibilityLevels;
    if (!user.admin && restricted?.includes(level)) {
      throw new ValidationFailed({ visibility_level: ['is restricted by your GitLab administrator'] });
    }
    try {
      const created = await this.ds.transaction(async (m) => {
        const clash: { n: number }[] = await m.query(`SELECT count(*)::int AS n FROM namespaces WHERE lower(path) = lower($1)`, [path]);
        if (clash[0].n > 0) throw TAKEN();
        const repo = m.getRepository(Namespace);
        const group = await repo.save(
          repo.create({ name, path, kind: 'group', ownerId: user.id, description, visibilityLevel: level }),
        );
        await m.getRepository(GroupMember).insert({
          namespaceId: group.id,
          userId: user.id,
          accessLevel: AccessLevel.OWNER,
          notificationLevel: 3,
        });
        return group;
      });
      this.domainEvents.emit('group.created', { group: created }); // system hooks
      this.domainEvents.emit('group_member.added', { groupId: created.id, userId: user.id, accessLevel: AccessLevel.OWNER });
      return created;
    } catch (e) {
      if (isUniqueViolation(e, 'namespaces_path_key')) throw TAKEN();
      throw e;
    }
  }

  /** `DELETE /groups/:id` (owners and admins): the group, its memberships and projects, then the repositories. */
  async remove(user: User, ref: string): Promise<Namespace> {
    const group = await this.authorize(user, ref, 'admin_group');
    const projectIds = await this.ds.transaction(async (m) => {
      // waits for project creations and transfers into the group to commit, so that they are seen below
      await m.query(`SELECT id FROM namespaces WHERE id = $1 FOR UPDATE`, [group.id]);
      const rows: { id: number }[] = await m.query(`SELECT id FROM projects WHERE namespace_id = $1`, [group.id]);
      await m.getRepository(Project).delete({ namespaceId: group.id });
      await m.getRepository(Namespace).delete({ id: group.id });
      return rows.map((r) => r.id);
    });
    await Promise.all(projectIds.map((id) => this.git.remove(id)));
    this.domainEvents.emit('group.destroyed', { group }); // system hooks
    return group;
  }

  /** Projects of the group that the caller may read. */
  async projects(user: User, ref: string, p: Params): Promise<Paginated<Project>> {
    const group = await this.authorize(user, ref);
    const page = pageRequest(p);
    const readable = this.policy.readableProjectsCondition(user);
    const [items, total] = await this.ds
      .getRepository(Project)
      .createQueryBuilder('p')
      .innerJoinAndSelect('p.namespace', 'n')
      .where('p.namespace_id = :gid', { gid: group.id })
      .andWhere(readable.sql, readable.params)
      .orderBy('p.id', 'DESC')
      .offset(page.offset)
      .limit(page.perPage)
      .getManyAndCount();
    return new Paginated(items, total, page);
  }
}
