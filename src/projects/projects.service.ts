import { Injectable } from '@nestjs/common';
import { ApplicationSettingsService } from '../application-settings/application-settings.service';
import { MAX_SEARCH_LENGTH } from '../common/dto/fields';
import { Conflict, Forbidden, InvalidAttribute, NotFound, NotModified, ValidationFailed } from '../common/errors/domain-errors';
import { PageRequest, Paginated, pageRequest } from '../common/pagination/pagination';
import { Transactions, Tx } from '../database/transactions';
import { DomainEvents, projectSnapshot } from '../domain-events/domain-events';
import { GitService } from '../git/git.service';
import { Namespace } from '../namespaces/namespace.entity';
import { ListProjectsDto, UpdateProjectDto } from './dto/project.dto';
import { ProjectInsertion } from './project-insertion.service';
import { ProjectResolver, ResolvedProject } from './project-resolver.service';
import { assertVisibilityAllowed, projectAttributes, rethrowTaken, VISIBILITY_LABEL } from './project-rules';
import { Project } from './project.entity';
import { ProjectListQuery, ProjectListScope, ProjectsRepository } from './projects.repository';
import { ProjectRef } from '../common/params/refs';
import type { Caller } from '../common/caller/caller';

const VISIBILITY_NAMES: Record<string, number> = { private: 0, internal: 10, public: 20 };

export type ProjectScope = 'member' | 'owned' | 'starred' | 'all' | 'search';

/** Projects: lists, update, star, archive, delete, transfer (creation and forks: ProjectCreation; imports: ProjectImports). */
@Injectable()
export class ProjectsService {
  constructor(
    private readonly projects: ProjectsRepository,
    private readonly resolver: ProjectResolver,
    private readonly tx: Transactions,
    private readonly git: GitService,
    private readonly settings: ApplicationSettingsService,
    private readonly domainEvents: DomainEvents,
    private readonly insertion: ProjectInsertion,
  ) {}

  /** `GET /projects/:id`: the project with the caller's access (one statement). */
  show(user: Caller, ref: ProjectRef): Promise<ResolvedProject> {
    return this.resolver.resolve(user, ref);
  }

  // ---------------------------------------------------------------- lists

  /** `/projects`, `/projects/owned`, `/projects/starred`, `/projects/all`, `/projects/search/:q`: one count and one page query. */
  async list(user: Caller, scope: ProjectScope, q: ListProjectsDto, searchTerm?: string): Promise<Paginated<Project>> {
    const page = pageRequest(q);
    const sort = (q.sort ?? (scope === 'search' ? 'asc' : 'desc')).toLowerCase();
    if (sort !== 'asc' && sort !== 'desc') throw new InvalidAttribute('sort');
    if (searchTerm !== undefined && searchTerm.length > MAX_SEARCH_LENGTH) throw new InvalidAttribute('query');
    const search = searchTerm ?? q.search?.trim();
    const query: ProjectListQuery = {
      scope: this.scope(user, scope),
      archived: q.archived,
      visibilityLevel: q.visibility === undefined ? undefined : VISIBILITY_NAMES[q.visibility],
      search: search ? { term: search, nameOnly: scope === 'search' } : undefined,
      orderBy: q.order_by ?? (scope === 'search' ? 'id' : 'created_at'),
      ascending: sort === 'asc',
    };
    const [items, total] = await this.projects.list(query, page);
    return new Paginated(items, total, page);
  }

  private scope(user: Caller, scope: ProjectScope): ProjectListScope {
    switch (scope) {
      case 'member':
        return { kind: 'member', viewer: user };
      case 'owned':
        return { kind: 'owned', userId: user.id };
      case 'starred':
        return { kind: 'starred', viewer: user };
      case 'search':
        return { kind: 'readable', viewer: user };
      case 'all':
        return { kind: 'all' };
    }
  }

  /** A group's projects that `user` may read, id descending, with the total (the groups area's lists). */
  readableInGroup(user: Caller | undefined, groupId: number, page: PageRequest): Promise<[Project[], number]> {
    return this.projects.inNamespace(groupId, user, page);
  }

  /** Removes every project row of a group being deleted, in its transaction; their ids (repositories go after commit). */
  deleteAllInGroup(tx: Tx, groupId: number): Promise<number[]> {
    return this.projects.deleteInNamespace(tx, groupId);
  }

  /** Records the default branch the first push chose (git HEAD already points at it). */
  async recordDefaultBranch(projectId: number, branch: string): Promise<void> {
    await this.projects.update(projectId, { defaultBranch: branch });
  }

  // ---------------------------------------------------------------- create

  /** `POST /projects` (caller's namespace or a group it may create in) and `POST /projects/user/:id` (admin). */
  // ---------------------------------------------------------------- update

  /**
   * `PUT /projects/:id`: master+ (`admin_project`); as 8.17, a new `name` needs `rename_project` and a
   * new visibility `change_visibility_level` (the owner), while `path` is a master's to change. A
   * name or visibility resent unchanged is no change (8.17 asked the owner for any `name` or
   * `visibility_level` given; gitlab-compat.md says "changing").
   */
  async update(user: Caller, ref: ProjectRef, dto: UpdateProjectDto): Promise<Project> {
    const { project, abilities } = await this.resolver.resolve(user, ref, 'admin_project');
    const attrs = projectAttributes(dto, 'update');
    if (attrs.name !== undefined && attrs.name !== project.name && !abilities.has('rename_project')) throw new Forbidden();
    if (attrs.visibilityLevel !== undefined && attrs.visibilityLevel !== project.visibilityLevel) {
      if (!abilities.has('change_visibility_level')) throw new Forbidden();
      assertVisibilityAllowed(user, attrs.visibilityLevel, (await this.settings.get()).restrictedVisibilityLevels);
    }
    if (attrs.defaultBranch !== undefined && !(await this.git.branchExists(project.id, attrs.defaultBranch))) {
      throw new ValidationFailed({ default_branch: ['does not exist'] });
    }
    const changes: Partial<Project> = {};
    for (const key of [
      'name',
      'path',
      'description',
      'defaultBranch',
      'issuesEnabled',
      'mergeRequestsEnabled',
      'wikiEnabled',
      'buildsEnabled',
      'snippetsEnabled',
      'containerRegistryEnabled',
      'lfsEnabled',
      'sharedRunnersEnabled',
      'publicBuilds',
      'visibilityLevel',
    ] as const) {
      if (attrs[key] !== undefined) (changes as Record<string, unknown>)[key] = attrs[key];
    }
    if (Object.keys(changes).length) {
      try {
        await this.tx.run(async (tx) => {
          await this.insertion.assertFree(tx, project.namespaceId, changes.name ?? null, changes.path ?? null, project.id);
          if (changes.visibilityLevel !== undefined) await this.assertVisibleAsFork(tx, project, changes.visibilityLevel);
          await this.projects.update(project.id, changes, tx);
          // forks (and theirs) never stay more visible than their source: lowered in this transaction
          if (changes.visibilityLevel !== undefined) await this.projects.lowerForksVisibility(tx, project.id, changes.visibilityLevel);
          if (changes.path !== undefined && changes.path !== project.path) {
            const renamed = projectSnapshot({ ...project, ...changes, updatedAt: new Date() });
            await this.domainEvents.emit(tx, 'project.renamed', { project: renamed, oldPathWithNamespace: `${project.namespace.path}/${project.path}` });
          }
          if (changes.defaultBranch) await this.git.setDefaultBranch(project.id, changes.defaultBranch);
        });
      } catch (e) {
        rethrowTaken(e);
      }
    }
    return this.resolver.find({ id: project.id });
  }

  /**
   * GitLab's `visibility_level_allowed_as_fork`: a fork is never more visible than its source (read
   * share-locked, so a concurrent restriction of the source is waited for and seen).
   */
  private async assertVisibleAsFork(tx: Tx, project: Project, level: number): Promise<void> {
    if (project.forkedFromProjectId === null || level === project.visibilityLevel) return;
    const sourceLevel = await this.projects.lockVisibility(tx, project.forkedFromProjectId);
    if (sourceLevel !== null && level > sourceLevel) {
      throw new ValidationFailed({
        visibility_level: [`${VISIBILITY_LABEL[level].toLowerCase()} is not allowed since the fork source project has lower visibility.`],
      });
    }
  }

  // ---------------------------------------------------------------- fork, star, archive, delete

  /** Stars: 201 with the project, 304 when already starred. */
  async star(user: Caller, ref: ProjectRef): Promise<Project> {
    const { project } = await this.resolver.resolve(user, ref);
    if (!(await this.tx.run((tx) => this.projects.star(tx, user.id, project.id)))) throw new NotModified();
    return this.resolver.find({ id: project.id });
  }

  /** Unstars: 200 with the project, 304 when not starred. */
  async unstar(user: Caller, ref: ProjectRef): Promise<Project> {
    const { project } = await this.resolver.resolve(user, ref);
    if (!(await this.tx.run((tx) => this.projects.unstar(tx, user.id, project.id)))) throw new NotModified();
    return this.resolver.find({ id: project.id });
  }

  async setArchived(user: Caller, ref: ProjectRef, archived: boolean): Promise<Project> {
    const { project } = await this.resolver.resolve(user, ref, 'archive_project');
    if (project.archived !== archived) await this.projects.update(project.id, { archived });
    return this.resolver.find({ id: project.id });
  }

  /** `DELETE /projects/:id` (owners and admins): rows go in one transaction, then the repository. */
  async remove(user: Caller, ref: ProjectRef): Promise<true> {
    const { project } = await this.resolver.resolve(user, ref, 'remove_project');
    await this.tx.run(async (tx) => {
      await this.projects.delete(project.id, tx);
      await this.domainEvents.emit(tx, 'project.destroyed', { project: projectSnapshot(project) }); // system hooks (the row is gone)
    });
    await this.git.remove(project.id);
    return true;
  }

  /** Moves a project into a group (admin): 409 when the group already has that path or name. */
  async transfer(projectRef: ProjectRef, namespace: Namespace): Promise<Project> {
    const project = await this.resolver.find(projectRef);
    if (project.namespaceId === namespace.id) return project;
    try {
      await this.tx.run(async (tx) => {
        if (!(await this.projects.holdNamespace(tx, namespace.id))) throw new NotFound('Group');
        if (await this.projects.takenInNamespace(tx, namespace.id, project.path, project.name)) {
          throw new Conflict({ path: ['has already been taken'] });
        }
        await this.projects.update(project.id, { namespaceId: namespace.id }, tx);
        const moved = projectSnapshot({ ...project, namespaceId: namespace.id, updatedAt: new Date() });
        await this.domainEvents.emit(tx, 'project.transferred', { project: moved, oldPathWithNamespace: `${project.namespace.path}/${project.path}` });
      });
    } catch (e) {
      rethrowTaken(e);
    }
    return this.resolver.find({ id: project.id });
  }
}
