import { Injectable } from '@nestjs/common';
import { NotFound } from '../common/errors/domain-errors';
import { ProjectAbility } from '../common/policy/policy';
import { GitService } from '../git/git.service';
import { parseRef, RefName } from '../git/names';
import { Commit } from '../git/objects';
import { Repository } from '../git/repository';
import { Project } from '../projects/project.entity';
import { ProjectResolver } from '../projects/project-resolver.service';
import { ProjectRef } from '../common/params/refs';
import type { Caller } from '../common/caller/caller';

export interface RepoContext {
  project: Project;
  abilities: Set<ProjectAbility>;
  repo: Repository;
}

const MASTER = parseRef('master') as RefName;

/**
 * The area's way into git: resolves the project for a caller holding `ability` (404 if unreadable,
 * 403 if not allowed) and opens its repository; user-given revisions are parsed here into the
 * branded names of src/git before any read.
 */
@Injectable()
export class RepositoryAccess {
  constructor(
    private readonly projects: ProjectResolver,
    private readonly git: GitService,
  ) {}

  async open(user: Caller, projectRef: ProjectRef, ability: ProjectAbility = 'download_code'): Promise<RepoContext> {
    const { project, abilities } = await this.projects.resolve(user, projectRef, ability);
    return { project, abilities, repo: this.git.repository(project.id) };
  }

  /** The ref a read defaults to: the project's default branch, else HEAD's branch, else `master`. */
  async defaultRef(ctx: RepoContext): Promise<RefName> {
    return parseRef(ctx.project.defaultBranch) ?? (await ctx.repo.headBranch()) ?? MASTER;
  }

  /** The commit a user-given revision names, or `404 <resource> Not Found` (also for names that are no revision). */
  async commitOr404(ctx: RepoContext, rev: string, resource = 'Commit'): Promise<Commit> {
    const ref = parseRef(rev);
    const c = ref === null ? null : await ctx.repo.commit(ref);
    if (!c) throw new NotFound(resource);
    return c;
  }
}
