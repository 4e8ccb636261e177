import { Injectable } from '@nestjs/common';
import { DomainEvents, groupSnapshot } from '../domain-events/domain-events';
import { ApplicationSettingsService, visibilityLevel } from '../application-settings/application-settings.service';
import { invalidFields } from '../common/dto/fields';
import { Forbidden, isUniqueViolation, NotFound, ValidationFailed, ValidationMap } from '../common/errors/domain-errors';
import { Paginated, pageRequest, PageRequest } from '../common/pagination/pagination';
import { GroupRef, ProjectRef } from '../common/params/refs';
import { AccessLevel, GroupAbility, groupAbilities } from '../common/policy/policy';
import { Transactions } from '../database/transactions';
import { GitService } from '../git/git.service';
import { Namespace } from '../namespaces/namespace.entity';
import { Project } from '../projects/project.entity';
import { ProjectsService } from '../projects/projects.service';
import { pathErrors } from '../common/dto/namespace-path';
import { MembershipsService } from '../members/memberships.service';
import { CreateGroupDto, ListGroupProjectsDto, ListGroupsDto } from './dto/group.dto';
import { GroupNamespacesService } from '../namespaces/group-namespaces.service';
import type { Caller } from '../common/caller/caller';

const TAKEN = () => new ValidationFailed({ path: ['has already been taken'] });
/** GroupDetail lists the first 100 projects the caller may read. */
const DETAIL_PROJECTS: PageRequest = { page: 1, perPage: 100, offset: 0 };

/** A group with the projects the caller may read in it (`GET /groups/:id`). */
export interface GroupDetail {
  group: Namespace;
  projects: Project[];
}

/** Groups: namespaces of kind `group` with members; their creator becomes the first owner. */
@Injectable()
export class GroupsService {
  constructor(
    private readonly groups: GroupNamespacesService,
    private readonly projectsService: ProjectsService,
    private readonly tx: Transactions,
    private readonly settings: ApplicationSettingsService,
    private readonly git: GitService,
    private readonly domainEvents: DomainEvents,
    private readonly memberships: MembershipsService,
  ) {}

  /** A group by id or path, whatever the caller may see. */
  async findByRef(ref: GroupRef): Promise<Namespace> {
    const group = await this.groups.find(ref);
    if (!group) throw new NotFound('Group');
    return group;
  }

  /** The group when the caller has `ability` on it: 404 when it may not see it, 403 otherwise. */
  async resolve(user: Caller, ref: GroupRef, ability: GroupAbility = 'read_group'): Promise<Namespace> {
    // the group and the caller's level in one statement, judged by the policy's pure rules
    const found = await this.groups.findWithLevel(ref, user?.id ?? null);
    if (!found) throw new NotFound('Group');
    const abilities = groupAbilities(user, found.group, found.level);
    if (!abilities.has('read_group')) throw new NotFound('Group');
    if (!abilities.has(ability)) throw new Forbidden();
    return found.group;
  }

  /** `GET /groups`: all for an administrator, the caller's groups otherwise; `search` on name or path. */
  async list(user: Caller, q: ListGroupsDto): Promise<Paginated<Namespace>> {
    const page = pageRequest(q);
    const [rows, total] = await this.groups.list({ memberId: user.admin ? undefined : user.id, search: q.search?.trim() }, page);
    return new Paginated(rows, total, page);
  }

  /** `GET /groups/:id`: the group with the first 100 projects the caller may read. */
  async detail(user: Caller, ref: GroupRef): Promise<GroupDetail> {
    const group = await this.resolve(user, ref);
    const [projects] = await this.projectsService.readableInGroup(user, group.id, DETAIL_PROJECTS);
    return { group, projects };
  }

  /** `POST /groups`: needs `can_create_group` (or admin); name and path required; path unique among namespaces. */
  async create(user: Caller, dto: CreateGroupDto): Promise<Namespace> {
    if (!user.admin && !user.canCreateGroup) throw new Forbidden();
    // a required field given an invalid value (e.g. a NUL byte) arrives undefined, reported by invalidFields
    const name = (dto.name ?? '').trim();
    const path = (dto.path ?? '').trim();
    const errors: ValidationMap = {};
    if (name.length > 255) errors.name = ['is too long (maximum is 255 characters)'];
    const pe = pathErrors(path);
    if (pe.length) errors.path = pe;
    Object.assign(errors, invalidFields(dto));
    const settings = await this.settings.get();
    let level = settings.defaultGroupVisibility;
    if (dto.visibility_level !== undefined) {
      const mapped = visibilityLevel(dto.visibility_level);
      if (mapped === undefined) errors.visibility_level = ['is not included in the list'];
      else level = mapped;
    }
    if (Object.keys(errors).length) throw new ValidationFailed(errors);
    if (!user.admin && settings.restrictedVisibilityLevels?.includes(level)) {
      throw new ValidationFailed({ visibility_level: ['is restricted by your GitLab administrator'] });
    }
    try {
      const group = await this.tx.run(async (tx) => {
        if (await this.groups.pathTaken(tx, path)) throw TAKEN();
        const created = await this.groups.insert(tx, { name, path, ownerId: user.id, description: dto.description ?? '', visibilityLevel: level });
        await this.memberships.addGroupOwner(tx, created.id, user.id, AccessLevel.OWNER);
        await this.domainEvents.emit(tx, 'group.created', { group: groupSnapshot(created) }); // system hooks
        await this.domainEvents.emit(tx, 'group_member.added', { groupId: created.id, userId: user.id, accessLevel: AccessLevel.OWNER });
        return created;
      });
      return group;
    } catch (e) {
      if (isUniqueViolation(e, 'namespaces_path_key')) throw TAKEN();
      throw e;
    }
  }

  /** `DELETE /groups/:id` (owners and admins): the group, its memberships and projects, then the repositories. */
  async remove(user: Caller, ref: GroupRef): Promise<Namespace> {
    const group = await this.resolve(user, ref, 'admin_group');
    const projectIds = await this.tx.run(async (tx) => {
      // waits for project creations and transfers into the group to commit, so that they are deleted too
      await this.groups.lock(tx, group.id);
      const ids = await this.projectsService.deleteAllInGroup(tx, group.id);
      await this.groups.delete(tx, group.id);
      await this.domainEvents.emit(tx, 'group.destroyed', { group: groupSnapshot(group) }); // system hooks (the row is gone)
      return ids;
    });
    await Promise.all(projectIds.map((id) => this.git.remove(id)));
    return group;
  }

  /** `GET /groups/:id/projects`: the projects of the group that the caller may read, newest first. */
  async projectsOf(user: Caller, ref: GroupRef, q: ListGroupProjectsDto): Promise<Paginated<Project>> {
    const group = await this.resolve(user, ref);
    const page = pageRequest(q);
    const [items, total] = await this.projectsService.readableInGroup(user, group.id, page);
    return new Paginated(items, total, page);
  }

  /** `POST /groups/:id/projects/:project_id` (administrators): moves the project into the group. */
  async transfer(ref: GroupRef, projectRef: ProjectRef): Promise<Project> {
    const group = await this.findByRef(ref);
    return this.projectsService.transfer(projectRef, group);
  }
}
