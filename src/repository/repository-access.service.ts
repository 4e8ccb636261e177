import { Injectable } from '@nestjs/common';
import { NotFound } from '../common/errors/domain-errors';
import { ProjectAbility } from '../common/policy/policy';
import { GitService } from '../git/git.service';
import { Commit } from '../git/objects';
import { Repository } from '../git/repository';
import { Project } from '../projects/project.entity';
import { ProjectsService } from '../projects/projects.service';
import { User } from '../users/user.entity';

export interface RepoContext {
  project: Project;
  abilities: Set<ProjectAbility>;
  repo: Repository;
}

/** Opens a project's repository for a caller holding `ability` (404 if unreadable, 403 if not allowed). */
@Injectable()
export class RepositoryAccess {
  constructor(
    private readonly projects: ProjectsService,
    private readonly git: GitService,
  ) {}

  async open(user: User, projectRef: string, ability: ProjectAbility = 'download_code'): Promise<RepoContext> {
    const { project, abilities } = await this.projects.authorize(user, projectRef, ability);
    return { project, abilities, repo: this.git.repository(project.id) };
  }

  /** The ref a read defaults to: the project's default branch, else HEAD's branch, else `master`. */
  async defaultRef(ctx: RepoContext): Promise<string> {
    return ctx.project.defaultBranch ?? (await ctx.repo.headBranch()) ?? 'master';
  }

  async commitOr404(ctx: RepoContext, ref: string, resource = 'Commit'): Promise<Commit> {
    const c = await ctx.repo.commit(ref);
    if (!c) throw new NotFound(resource);
    return c;
  }
}
