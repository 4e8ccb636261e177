import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Forbidden, NotFound } from '../errors/domain-errors';
import {
  AccessLevel,
  GroupAbility,
  groupAbilities,
  NO_ACCESS,
  PolicyProject,
  PolicyUser,
  ProjectAbility,
  projectAbilities,
  ProjectAccess,
} from './policy';

export interface PolicyProjectRow extends PolicyProject {
  id: number;
  namespaceId: number;
  namespace: { kind: string; ownerId: number | null };
}

/**
 * Loads memberships in a bounded number of queries and answers ability questions through the pure
 * rules of policy.ts. The SQL filters for lists live here too, so lists and single reads agree.
 */
@Injectable()
export class PolicyService {
  constructor(private readonly ds: DataSource) {}

  /** Access of `user` to each project: 1 query whatever the number of projects. */
  async projectAccess(user: PolicyUser | undefined, projects: PolicyProjectRow[]): Promise<Map<number, ProjectAccess>> {
    const out = new Map<number, ProjectAccess>();
    if (!user || projects.length === 0) {
      for (const p of projects) out.set(p.id, NO_ACCESS);
      return out;
    }
    const projectIds = [...new Set(projects.map((p) => p.id))];
    const namespaceIds = [...new Set(projects.map((p) => p.namespaceId))];
    // One round trip for both kinds of membership.
    const rows: { kind: 'p' | 'g'; id: number; access_level: number; notification_level: number }[] = await this.ds.query(
      `SELECT 'p' AS kind, project_id AS id, access_level, notification_level FROM project_members
        WHERE user_id = $1 AND project_id = ANY($2)
       UNION ALL
       SELECT 'g' AS kind, namespace_id AS id, access_level, notification_level FROM group_members
        WHERE user_id = $1 AND namespace_id = ANY($3)`,
      [user.id, projectIds, namespaceIds],
    );
    const byProject = new Map(rows.filter((r) => r.kind === 'p').map((r) => [r.id, r]));
    const byGroup = new Map(rows.filter((r) => r.kind === 'g').map((r) => [r.id, r]));
    for (const p of projects) {
      const m = byProject.get(p.id);
      const g = byGroup.get(p.namespaceId);
      const namespaceOwner = p.namespace.kind === 'user' && p.namespace.ownerId === user.id;
      out.set(p.id, {
        level: Math.max(m?.access_level ?? 0, g?.access_level ?? 0, namespaceOwner ? AccessLevel.OWNER : 0),
        projectMember: m ? { accessLevel: m.access_level, notificationLevel: m.notification_level } : null,
        groupMember: g ? { accessLevel: g.access_level, notificationLevel: g.notification_level } : null,
        namespaceOwner,
      });
    }
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
  async authorize(
    user: PolicyUser | undefined,
    project: PolicyProjectRow,
    ability: ProjectAbility,
  ): Promise<Set<ProjectAbility>> {
    const abilities = await this.projectAbilities(user, project);
    if (!abilities.has('read_project')) throw new NotFound('Project');
    if (!abilities.has(ability)) throw new Forbidden();
    return abilities;
  }

  /** The caller's level in a group (0 for none). */
  async groupLevel(user: PolicyUser | undefined, groupId: number): Promise<number> {
    if (!user) return 0;
    const rows: { access_level: number }[] = await this.ds.query(
      `SELECT access_level FROM group_members WHERE user_id = $1 AND namespace_id = $2`,
      [user.id, groupId],
    );
    return rows[0]?.access_level ?? 0;
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

  /**
   * SQL condition (on alias `p`, parameters `:policyUserId`) for projects the user is a member of:
   * personal namespace, direct membership or group membership — GitLab's "authorized projects".
   */
  memberProjectsCondition(user: PolicyUser): { sql: string; params: Record<string, unknown> } {
    return {
      sql: `(p.namespace_id IN (SELECT id FROM namespaces WHERE kind = 'user' AND owner_id = :policyUserId)
         OR p.id IN (SELECT project_id FROM project_members WHERE user_id = :policyUserId)
         OR p.namespace_id IN (SELECT namespace_id FROM group_members WHERE user_id = :policyUserId))`,
      params: { policyUserId: user.id },
    };
  }

  /** SQL condition (alias `p`) for every project the user may read. */
  readableProjectsCondition(user: PolicyUser | undefined): { sql: string; params: Record<string, unknown> } {
    if (user?.admin) return { sql: 'TRUE', params: {} };
    if (!user) return { sql: 'p.visibility_level = 20', params: {} };
    const member = this.memberProjectsCondition(user);
    const open = user.external ? 'p.visibility_level = 20' : 'p.visibility_level IN (10, 20)';
    return { sql: `(${open} OR ${member.sql})`, params: member.params };
  }
}
