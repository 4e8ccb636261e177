import { Injectable } from '@nestjs/common';
import { ApplicationSettingsService } from '../application-settings/application-settings.service';
import { NotFound } from '../common/errors/domain-errors';
import { ProjectRef } from '../common/params/refs';
import { AccessLevel } from '../common/policy/policy';
import { DomainEvents, projectSnapshot } from '../domain-events/domain-events';
import { GitService } from '../git/git.service';
import { MembershipsService } from '../members/memberships.service';
import { NamespacesService } from '../namespaces/namespaces.service';
import { UserDirectory } from '../users/user-directory.service';
import { CreateProjectDto } from './dto/project.dto';
import { ProjectImports } from './project-imports.service';
import { ProjectInsertion } from './project-insertion.service';
import { ProjectResolver } from './project-resolver.service';
import { assertVisibilityAllowed, parameterize, projectAttributes } from './project-rules';
import { Project } from './project.entity';
import { ProjectsRepository } from './projects.repository';
import type { Caller } from '../common/caller/caller';

/** New projects: `POST /projects` (and for a user, and from an `import_url`) and `POST /projects/fork/:id`. */
@Injectable()
export class ProjectCreation {
  constructor(
    private readonly projects: ProjectsRepository,
    private readonly resolver: ProjectResolver,
    private readonly users: UserDirectory,
    private readonly git: GitService,
    private readonly settings: ApplicationSettingsService,
    private readonly domainEvents: DomainEvents,
    private readonly memberships: MembershipsService,
    private readonly namespaces: NamespacesService,
    private readonly imports: ProjectImports,
    private readonly insertion: ProjectInsertion,
  ) {}

  /** `POST /projects` (`forUser`: an administrator's `POST /projects/user/:user_id`). */
  async create(caller: Caller, dto: CreateProjectDto, forUser?: number): Promise<Project> {
    const attrs = projectAttributes(dto, 'create');
    const settings = await this.settings.get();
    let creator = caller;
    if (forUser !== undefined) {
      const target = await this.users.byId(forUser);
      if (!target) throw new NotFound('User');
      creator = target;
      delete attrs.namespaceId;
      attrs.path = parameterize(attrs.name as string);
    }
    const namespace = await this.namespaces.creationTarget(caller, creator.id, attrs.namespaceId);
    const level = attrs.visibilityLevel ?? settings.defaultProjectVisibility;
    assertVisibilityAllowed(caller, level, settings.restrictedVisibilityLevels);
    const importUrl = attrs.importUrl ? await this.imports.vet(attrs.importUrl, settings.allowLocalRequestsFromHooksAndServices) : undefined;
    const project = await this.insertion.insert(
      creator,
      namespace,
      {
        ...attrs,
        visibilityLevel: level,
        importUrl: importUrl ? importUrl.display : undefined,
        // GitLab: the instance setting is the default of a new project's flag
        sharedRunnersEnabled: attrs.sharedRunnersEnabled ?? settings.sharedRunnersEnabled,
      },
      async (tx, created) => {
        await this.git.create(created.id);
        await this.domainEvents.emit(tx, 'project.created', { project: projectSnapshot(created), userId: creator.id, actorId: caller.id }); // system hooks
        if (namespace.kind === 'user') {
          await this.memberships.addProjectOwner(tx, created.id, creator.id, AccessLevel.MASTER);
          await this.domainEvents.emit(tx, 'project_member.added', { projectId: created.id, userId: creator.id, accessLevel: AccessLevel.MASTER });
        }
        // the clone is a job written by this transaction; the URL (it may hold credentials) sealed
        if (importUrl) await this.imports.enqueue(tx, created.id, importUrl);
      },
    );
    if (importUrl) this.imports.wake();
    await this.domainEvents.emitCommitted('activity.recorded', {
      events: [{ projectId: project.id, authorId: creator.id, action: importUrl ? 'imported' : 'created' }],
    });
    return this.resolver.find({ id: project.id });
  }

  /** `POST /projects/fork/:id`: into the caller's namespace, repository copied, `forked_from_project` set. */
  async fork(user: Caller, ref: ProjectRef): Promise<Project> {
    const { project: source } = await this.resolver.resolve(user, ref, 'fork_project');
    const namespace = await this.namespaces.creationTarget(user, user.id, undefined);
    const settings = await this.settings.get();
    let level = source.visibilityLevel;
    if (!user.admin && settings.restrictedVisibilityLevels?.includes(level)) level = 0;
    const fork = await this.insertion.insert(
      user,
      namespace,
      {
        name: source.name,
        path: source.path,
        description: source.description,
        visibilityLevel: level,
        issuesEnabled: source.issuesEnabled,
        mergeRequestsEnabled: source.mergeRequestsEnabled,
        wikiEnabled: source.wikiEnabled,
        buildsEnabled: source.buildsEnabled,
        snippetsEnabled: source.snippetsEnabled,
        containerRegistryEnabled: source.containerRegistryEnabled,
        sharedRunnersEnabled: source.sharedRunnersEnabled,
        publicBuilds: source.publicBuilds,
        forkedFromProjectId: source.id,
        defaultBranch: source.defaultBranch,
      },
      async (tx, created) => {
        // never more visible than the source as it is now (a concurrent restriction is waited for)
        const sourceLevel = await this.projects.lockVisibility(tx, source.id);
        if (sourceLevel === null) throw new NotFound('Project');
        if (created.visibilityLevel > sourceLevel) {
          await this.projects.update(created.id, { visibilityLevel: sourceLevel }, tx);
          created.visibilityLevel = sourceLevel;
        }
        await this.git.fork(source.id, created.id);
        await this.memberships.addProjectOwner(tx, created.id, user.id, AccessLevel.MASTER);
        await this.domainEvents.emit(tx, 'project.created', { project: projectSnapshot(created), userId: user.id }); // system hooks
      },
    );
    await this.domainEvents.emitCommitted('activity.recorded', { events: [{ projectId: fork.id, authorId: user.id, action: 'created' }] });
    return this.resolver.find({ id: fork.id });
  }
}
