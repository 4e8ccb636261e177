import { Injectable } from '@nestjs/common';
import { Forbidden, NotFound } from '../common/errors/domain-errors';
import { parseId } from '../common/params/params';
import { ProjectAbility, ProjectAccess, projectAbilities } from '../common/policy/policy';
import { accessFrom } from '../common/policy/policy.service';
import { User } from '../users/user.entity';
import { Project } from './project.entity';
import { ProjectKey, ProjectsRepository } from './projects.repository';

export interface ResolvedProject {
  project: Project;
  access: ProjectAccess;
  abilities: Set<ProjectAbility>;
}

/**
 * The one project resolver every area uses: `:id` (a number or `NAMESPACE%2FPATH`) → the project,
 * the caller's access and abilities, or `404 Project Not Found` when the caller cannot read it and
 * `403 Forbidden` when it can read it but lacks `ability`. The project and the caller's
 * memberships come in one SQL statement.
 */
@Injectable()
export class ProjectResolver {
  constructor(private readonly projects: ProjectsRepository) {}

  /** `:id` as a key, or undefined when it cannot name a project (→ 404). */
  static key(ref: string | number): ProjectKey | undefined {
    if (typeof ref === 'number') return Number.isSafeInteger(ref) && ref > 0 ? { id: ref } : undefined;
    // eslint-disable-next-line no-control-regex -- a project path never holds control characters
    if (ref.length > 512 || /[\x00-\x1f]/.test(ref)) return undefined;
    const id = parseId(ref);
    if (id !== undefined) return { id };
    const slash = ref.lastIndexOf('/');
    if (slash <= 0) return undefined;
    return { namespace: ref.slice(0, slash), path: ref.slice(slash + 1) };
  }

  async resolve(user: User | undefined, ref: string | number, ability: ProjectAbility = 'read_project'): Promise<ResolvedProject> {
    const key = ProjectResolver.key(ref);
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
  async find(ref: string | number): Promise<Project> {
    const key = ProjectResolver.key(ref);
    const project = key && (await this.projects.find(key));
    if (!project) throw new NotFound('Project');
    return project;
  }
}
