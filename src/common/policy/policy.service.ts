import { Injectable } from '@nestjs/common';
import { Forbidden, NotFound } from '../errors/domain-errors';
import { AccessLevel, GroupAbility, groupAbilities, NO_ACCESS, PolicyProject, PolicyUser, ProjectAbility, projectAbilities, ProjectAccess } from './policy';
import { PolicyRepository } from './policy.repository';

export interface PolicyProjectRow extends PolicyProject {
  id: number;
  namespaceId: number;
  namespace: { kind: string; ownerId: number | null };
}

/** A membership as the policy reads it. */
export interface MembershipLevels {
  accessLevel: number;
  notificationLevel: number;
}

/**
 * The caller's access to a project from its direct and group memberships: the highest level, and
 * owner for the owner of the project's personal namespace.
 */
export function accessFrom(
  user: PolicyUser | undefined,
  project: Pick<PolicyProjectRow, 'namespace'>,
  projectMember: MembershipLevels | null,
  groupMember: MembershipLevels | null,
): ProjectAccess {
  if (!user) return NO_ACCESS;
  const namespaceOwner = project.namespace.kind === 'user' && project.namespace.ownerId === user.id;
  return {
    level: Math.max(projectMember?.accessLevel ?? 0, groupMember?.accessLevel ?? 0, namespaceOwner ? AccessLevel.OWNER : 0),
    projectMember,
    groupMember,
    namespaceOwner,
  };
}

/**
 * Loads memberships in a bounded number of queries and answers ability questions through the pure
 * rules of policy.ts. The SQL filters for lists live here too, so lists and single reads agree.
 */
@Injectable()
export class PolicyService {
  constructor(private readonly repo: PolicyRepository) {}

  /** Access of `user` to each project: 1 query whatever the number of projects. */
  async projectAccess(user: PolicyUser | undefined, projects: PolicyProjectRow[]): Promise<Map<number, ProjectAccess>> {
    const out = new Map<number, ProjectAccess>();
    if (!user || projects.length === 0) {
      for (const p of projects) out.set(p.id, NO_ACCESS);
      return out;
    }
    const projectIds = [...new Set(projects.map((p) => p.id))];
    const namespaceIds = [...new Set(projects.map((p) => p.namespaceId))];
    const rows = await this.repo.memberships(user.id, projectIds, namespaceIds);
    const levels = (r: { access_level: number; notification_level: number } | undefined): MembershipLevels | null =>
      r ? { accessLevel: r.access_level, notificationLevel: r.notification_level } : null;
    const byProject = new Map(rows.filter((r) => r.kind === 'p').map((r) => [r.id, r]));
    const byGroup = new Map(rows.filter((r) => r.kind === 'g').map((r) => [r.id, r]));
    for (const p of projects) out.set(p.id, accessFrom(user, p, levels(byProject.get(p.id)), levels(byGroup.get(p.namespaceId))));
    return out;
  }

  async projectAbilities(user: PolicyUser | undefined, project: PolicyProjectRow): Promise<Set<ProjectAbility>> {
    const access = (await this.projectAccess(user, [project])).get(project.id) ?? NO_ACCESS;
    return projectAbilities(user, project, access);
  }

  /**
   * Checks `ability` on a project: a caller who cannot even read the project gets 404
   * (`404 Project Not Found`), one who can read it but lacks the ability gets 403.
   */
  async authorize(user: PolicyUser | undefined, project: PolicyProjectRow, ability: ProjectAbility): Promise<Set<ProjectAbility>> {
    const abilities = await this.projectAbilities(user, project);
    if (!abilities.has('read_project')) throw new NotFound('Project');
    if (!abilities.has(ability)) throw new Forbidden();
    return abilities;
  }

  /** The caller's level in a group (0 for none). */
  async groupLevel(user: PolicyUser | undefined, groupId: number): Promise<number> {
    if (!user) return 0;
    return this.repo.groupLevel(user.id, groupId);
  }

  async groupAbilities(user: PolicyUser | undefined, group: { id: number; visibilityLevel: number }): Promise<Set<GroupAbility>> {
    return groupAbilities(user, group, await this.groupLevel(user, group.id));
  }

  /** Checks `ability` on a group: 404 (`404 Group Not Found`) if unreadable, 403 if not allowed. */
  async authorizeGroup(user: PolicyUser | undefined, group: { id: number; visibilityLevel: number }, ability: GroupAbility) {
    const abilities = await this.groupAbilities(user, group);
    if (!abilities.has('read_group')) throw new NotFound('Group');
    if (!abilities.has(ability)) throw new Forbidden();
    return abilities;
  }
}
