import { Injectable } from '@nestjs/common';
import { Forbidden, NotFound } from '../common/errors/domain-errors';
import { NO_ACCESS, ProjectAbility, ProjectAccess, projectAbilities } from '../common/policy/policy';
import { PolicyService } from '../common/policy/policy.service';
import { User } from '../users/user.entity';
import { Project } from './project.entity';
import { ProjectsService } from './projects.service';

export interface ResolvedProject {
  project: Project;
  access: ProjectAccess;
  abilities: Set<ProjectAbility>;
}

/**
 * The one project resolver every area uses: `:id` (a number or `NAMESPACE%2FPATH`) → the project,
 * the caller's access and abilities, or `404 Project Not Found` when the caller cannot read it and
 * `403 Forbidden` when it can read it but lacks `ability`.
 */
@Injectable()
export class ProjectResolver {
  constructor(
    private readonly projects: ProjectsService,
    private readonly policy: PolicyService,
  ) {}

  async resolve(user: User | undefined, ref: string | number, ability: ProjectAbility = 'read_project'): Promise<ResolvedProject> {
    const project = await this.projects.findByRef(ref);
    const access = (await this.policy.projectAccess(user, [project])).get(project.id) ?? NO_ACCESS;
    const abilities = projectAbilities(user, project, access);
    if (!abilities.has('read_project')) throw new NotFound('Project');
    if (!abilities.has(ability)) throw new Forbidden();
    return { project, access, abilities };
  }
}
