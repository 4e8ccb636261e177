import { Injectable } from '@nestjs/common';
import { Forbidden, NotFound } from '../common/errors/domain-errors';
import { projectKey, ProjectRef } from '../common/params/refs';
import { ProjectAbility, ProjectAccess, projectAbilities } from '../common/policy/policy';
import { accessFrom } from '../common/policy/policy.service';
import { Project } from './project.entity';
import { ProjectsRepository } from './projects.repository';
import type { Caller } from '../common/caller/caller';

export interface ResolvedProject {
  project: Project;
  access: ProjectAccess;
  abilities: Set<ProjectAbility>;
}

/**
 * The one project resolver every area uses: a `ProjectRef` (`:id` parsed at the edge by `ProjectRefParam`,
 * or `{ id }` of a project already known) → the project,
 * the caller's access and abilities, or `404 Project Not Found` when the caller cannot read it and
 * `403 Forbidden` when it can read it but lacks `ability`. The project and the caller's
 * memberships come in one SQL statement.
 */
@Injectable()
export class ProjectResolver {
  constructor(private readonly projects: ProjectsRepository) {}

  async resolve(user: Caller | undefined, ref: ProjectRef, ability: ProjectAbility = 'read_project'): Promise<ResolvedProject> {
    const key = projectKey(ref);
    const found = key && (await this.projects.findWithMemberships(key, user?.id ?? null));
    if (!found) throw new NotFound('Project');
    const { project } = found;
    const access = accessFrom(user, project, found.projectMember, found.groupMember);
    const abilities = projectAbilities(user, project, access);
    if (!abilities.has('read_project')) throw new NotFound('Project');
    if (!abilities.has(ability)) throw new Forbidden();
    return { project, access, abilities };
  }

  /** A project by id or path whatever the caller may see (`404 Project Not Found` when absent). */
  async find(ref: ProjectRef): Promise<Project> {
    const key = projectKey(ref);
    const project = key && (await this.projects.find(key));
    if (!project) throw new NotFound('Project');
    return project;
  }
}
