import { Injectable, OnModuleInit } from '@nestjs/common';
import { ApplicationSettingsService } from '../application-settings/application-settings.service';
import { SecretsService } from '../common/crypto/secrets.service';
import { MAX_SEARCH_LENGTH } from '../common/dto/fields';
import { Conflict, Forbidden, InvalidAttribute, isUniqueViolation, NotFound, NotModified, ValidationFailed } from '../common/errors/domain-errors';
import { Logger } from '../common/logging/logger';
import { checkOutboundUrl, CheckedUrl, OutboundUrlRefused, recheckPinned } from '../common/net/outbound-url';
import { PageRequest, Paginated, pageRequest } from '../common/pagination/pagination';
import { AccessLevel, groupAbilities } from '../common/policy/policy';
import { PolicyService } from '../common/policy/policy.service';
import { Transactions, Tx } from '../database/transactions';
import { DomainEvents, projectSnapshot } from '../domain-events/domain-events';
import { GitService } from '../git/git.service';
import { QueueService } from '../queue/queue.service';
import { Namespace } from '../namespaces/namespace.entity';
import { User } from '../users/user.entity';
import { MembershipsService } from '../members/memberships.service';
import { NamespacesService } from '../namespaces/namespaces.service';
import { UserDirectory } from '../users/user-directory.service';
import { CreateProjectDto, ListProjectsDto, UpdateProjectDto } from './dto/project.dto';
import { ProjectResolver, ResolvedProject } from './project-resolver.service';
import { parameterize, projectAttributes, ProjectAttributes } from './project-rules';
import { Project } from './project.entity';
import { ProjectListQuery, ProjectListScope, ProjectsRepository } from './projects.repository';
import { ProjectRef } from '../common/params/refs';

const VISIBILITY_NAMES: Record<string, number> = { private: 0, internal: 10, public: 20 };
const VISIBILITY_LABEL: Record<number, string> = { 0: 'Private', 10: 'Internal', 20: 'Public' };

export const IMPORT_QUEUE = 'projects.import';
interface ImportJob {
  projectId: number;
  /** The vetted import URL, sealed with the secret key (it may carry credentials). */
  url: string;
  /** The address vetted when the project was created: the clone connects to it (no second resolution). */
  address?: string;
}

export type ProjectScope = 'member' | 'owned' | 'starred' | 'all' | 'search';

function takenFields(e: unknown): Record<string, string[]> | undefined {
  if (isUniqueViolation(e, 'projects_namespace_path_key')) return { path: ['has already been taken'] };
  if (isUniqueViolation(e, 'projects_namespace_name_key')) return { name: ['has already been taken'] };
  return undefined;
}

/** Raises the 409 of a name or path another project took meanwhile (unique index), or rethrows. */
function rethrowTaken(e: unknown): never {
  const taken = takenFields(e);
  if (taken) throw new Conflict(taken);
  throw e;
}

/** Project CRUD: lists, create (and import), update, fork, star, archive, delete, transfer. */
@Injectable()
export class ProjectsService implements OnModuleInit {
  constructor(
    private readonly projects: ProjectsRepository,
    private readonly resolver: ProjectResolver,
    private readonly tx: Transactions,
    private readonly users: UserDirectory,
    private readonly policy: PolicyService,
    private readonly git: GitService,
    private readonly secrets: SecretsService,
    private readonly settings: ApplicationSettingsService,
    private readonly logger: Logger,
    private readonly domainEvents: DomainEvents,
    private readonly queue: QueueService,
    private readonly memberships: MembershipsService,
    private readonly namespaces: NamespacesService,
  ) {}

  onModuleInit(): void {
    this.queue
      .register<ImportJob>(IMPORT_QUEUE, {
        handler: (job) => this.runImport(job.data),
        // clone failures end in `failed` (the owner imports again); a lost worker or database is retried
        retryLimit: 3,
        retryDelay: 30,
        expireInSeconds: 15 * 60,
      })
      .catch((e) => this.logger.error('project import: queue setup failed', { error: e instanceof Error ? e.message : String(e) }));
  }

  /** `GET /projects/:id`: the project with the caller's access (one statement). */
  show(user: User, ref: ProjectRef): Promise<ResolvedProject> {
    return this.resolver.resolve(user, ref);
  }

  // ---------------------------------------------------------------- lists

  /** `/projects`, `/projects/owned`, `/projects/starred`, `/projects/all`, `/projects/search/:q`: one count and one page query. */
  async list(user: User, scope: ProjectScope, q: ListProjectsDto, searchTerm?: string): Promise<Paginated<Project>> {
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

  private scope(user: User, scope: ProjectScope): ProjectListScope {
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
  readableInGroup(user: User | undefined, groupId: number, page: PageRequest): Promise<[Project[], number]> {
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
  async create(caller: User, dto: CreateProjectDto, forUser?: number): Promise<Project> {
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
    const namespace = await this.targetNamespace(caller, creator, attrs.namespaceId);
    const level = attrs.visibilityLevel ?? settings.defaultProjectVisibility;
    this.assertVisibilityAllowed(caller, level, settings.restrictedVisibilityLevels);
    const importUrl = attrs.importUrl ? await this.vetImportUrl(attrs.importUrl, settings.allowLocalRequestsFromHooksAndServices) : undefined;
    const token = this.secrets.generateToken(20);

    const project = await this.insertProject(
      creator,
      namespace,
      {
        ...attrs,
        visibilityLevel: level,
        importUrl: importUrl ? importUrl.display : undefined,
        // GitLab: the instance setting is the default of a new project's flag
        sharedRunnersEnabled: attrs.sharedRunnersEnabled ?? settings.sharedRunnersEnabled,
      },
      token,
      async (tx, created) => {
        await this.git.create(created.id);
        await this.domainEvents.emit(tx, 'project.created', { project: projectSnapshot(created), userId: creator.id, actorId: caller.id }); // system hooks
        if (namespace.kind === 'user') {
          await this.memberships.addProjectOwner(tx, created.id, creator.id, AccessLevel.MASTER);
          await this.domainEvents.emit(tx, 'project_member.added', { projectId: created.id, userId: creator.id, accessLevel: AccessLevel.MASTER });
        }
        // the clone is a job written by this transaction; the URL (it may hold credentials) sealed
        if (importUrl)
          await this.queue.send<ImportJob>(
            IMPORT_QUEUE,
            { projectId: created.id, url: this.secrets.encrypt(importUrl.url.url.toString()), address: importUrl.url.address },
            { tx },
          );
      },
    );
    if (importUrl) this.queue.wake(IMPORT_QUEUE);
    await this.domainEvents.emitCommitted('activity.recorded', {
      events: [{ projectId: project.id, authorId: creator.id, action: importUrl ? 'imported' : 'created' }],
    });
    return this.resolver.find({ id: project.id });
  }

  /**
   * Inserts a project in a transaction: the namespace owner's row is locked so that the project
   * limit holds under concurrency, taken names give 409, and `onCreated` (the repository on disk)
   * runs before commit so a failure leaves nothing behind.
   */
  private async insertProject(
    creator: User,
    namespace: Namespace,
    attrs: Omit<ProjectAttributes, 'defaultBranch'> & { forkedFromProjectId?: number; defaultBranch?: string | null },
    runnersToken: string,
    onCreated: (tx: Tx, p: Project) => Promise<void>,
  ): Promise<Project> {
    let createdId: number | undefined;
    try {
      return await this.tx.run(async (tx) => {
        if (namespace.kind === 'user' && namespace.ownerId !== null) {
          const limit = await this.projects.lockOwnerLimit(tx, namespace.ownerId);
          if (limit === null) throw new NotFound('Namespace');
          if ((await this.projects.countInNamespace(tx, namespace.id)) >= limit) {
            throw new Forbidden(undefined, `403 Your project limit is ${limit} projects! Please contact your administrator to increase it`);
          }
        }
        if (!(await this.projects.holdNamespace(tx, namespace.id))) throw new ValidationFailed({ namespace: ['is not valid'] });
        await this.assertFree(tx, namespace.id, attrs.name ?? null, attrs.path ?? null);
        const project = await this.projects.insert(tx, {
          name: attrs.name,
          path: attrs.path,
          description: attrs.description ?? null,
          namespaceId: namespace.id,
          creatorId: creator.id,
          visibilityLevel: attrs.visibilityLevel,
          defaultBranch: attrs.defaultBranch ?? null,
          issuesEnabled: attrs.issuesEnabled ?? true,
          mergeRequestsEnabled: attrs.mergeRequestsEnabled ?? true,
          wikiEnabled: attrs.wikiEnabled ?? true,
          buildsEnabled: attrs.buildsEnabled ?? true,
          snippetsEnabled: attrs.snippetsEnabled ?? true,
          containerRegistryEnabled: attrs.containerRegistryEnabled ?? false,
          sharedRunnersEnabled: attrs.sharedRunnersEnabled ?? true,
          publicBuilds: attrs.publicBuilds ?? true,
          archived: false,
          starCount: 0,
          forkedFromProjectId: attrs.forkedFromProjectId ?? null,
          importUrl: attrs.importUrl ?? null,
          importStatus: attrs.importUrl ? 'scheduled' : 'none',
          importError: null,
          runnersTokenDigest: this.secrets.digest(runnersToken),
          runnersTokenEncrypted: this.secrets.encrypt(runnersToken),
          lastActivityAt: new Date(),
        });
        createdId = project.id;
        await onCreated(tx, project);
        return project;
      });
    } catch (e) {
      if (createdId !== undefined) {
        const id = createdId;
        await this.git
          .remove(id)
          .catch((err) => this.logger.warn('project create: repository of the rolled-back project not removed', { project_id: id, error: String(err) }));
      }
      rethrowTaken(e);
    }
  }

  /** 409 with the fields (name, path) another project of the namespace already has. */
  private async assertFree(tx: Tx, namespaceId: number, name: string | null, path: string | null, exceptId = 0): Promise<void> {
    const clash = await this.projects.clash(tx, namespaceId, name, path, exceptId);
    const taken: Record<string, string[]> = {};
    if (clash.name) taken.name = ['has already been taken'];
    if (clash.path) taken.path = ['has already been taken'];
    if (Object.keys(taken).length) throw new Conflict(taken);
  }

  /** The namespace a new project goes to: the creator's own, or one the caller may create projects in. */
  private async targetNamespace(caller: User, creator: User, namespaceId?: number): Promise<Namespace> {
    if (namespaceId === undefined) {
      const own = await this.namespaces.personalOf(creator.id);
      if (!own) throw new NotFound('Namespace');
      return own;
    }
    const ns = await this.namespaces.byId(namespaceId);
    const invalid = new ValidationFailed({ namespace: ['is not valid'] });
    if (!ns) throw invalid;
    if (caller.admin) return ns;
    if (ns.kind === 'user') {
      if (ns.ownerId !== caller.id) throw invalid;
      return ns;
    }
    const level = await this.policy.groupLevel(caller, ns.id);
    if (!groupAbilities(caller, ns, level).has('create_projects')) throw invalid;
    return ns;
  }

  private assertVisibilityAllowed(user: User, level: number, restricted: number[] | null): void {
    if (user.admin || !restricted?.includes(level)) return;
    throw new ValidationFailed({
      visibility_level: [`${VISIBILITY_LABEL[level]} visibility has been restricted by your GitLab administrator`],
    });
  }

  /** Checks an import URL (http(s), no local network unless allowed); the stored copy has no credentials. */
  private async vetImportUrl(raw: string, allowLocal: boolean) {
    try {
      const checked = await checkOutboundUrl(raw, allowLocal);
      const display = new URL(checked.url.toString());
      display.username = '';
      display.password = '';
      return { url: checked, display: display.toString() };
    } catch (e) {
      if (e instanceof OutboundUrlRefused) throw new ValidationFailed({ import_url: [e.message] });
      throw e;
    }
  }

  /**
   * The import job: the URL is checked again (the address pinned now, the setting as it is now), then
   * cloned. A clone that fails marks the import `failed`; only errors of the database are retried.
   */
  private async runImport(job: ImportJob): Promise<void> {
    const projectId = job.projectId;
    const project = await this.projects.find({ id: projectId });
    if (!project || project.importStatus === 'finished' || project.importStatus === 'failed') return;
    try {
      await this.projects.update(projectId, { importStatus: 'started' });
      const allowLocal = (await this.settings.get()).allowLocalRequestsFromHooksAndServices;
      // the address vetted at creation, checked again against today's setting (never resolved again)
      const raw = this.secrets.decrypt(job.url);
      const checked: CheckedUrl = job.address ? recheckPinned(raw, job.address, allowLocal) : await checkOutboundUrl(raw, allowLocal);
      await this.git.importFrom(projectId, checked);
      const branch = await this.git.defaultBranch(projectId);
      await this.projects.update(projectId, { importStatus: 'finished', defaultBranch: branch, importError: null });
    } catch (e) {
      const message = e instanceof Error ? e.message.replace(/https?:\/\/[^\s@/]*@/g, 'https://[FILTERED]@') : 'import failed';
      this.logger.warn('project import failed', { project_id: projectId, error: message });
      const logged = (what: string) => (err: unknown) => this.logger.error(`project import: ${what}`, { project_id: projectId, error: String(err) });
      await this.projects.update(projectId, { importStatus: 'failed', importError: message.slice(0, 1000) }).catch(logged('failed state not recorded'));
      if (!this.git.exists(projectId)) await this.git.create(projectId).catch(logged('empty repository not created'));
    }
  }

  // ---------------------------------------------------------------- update

  /**
   * `PUT /projects/:id`: master+ (`admin_project`); as 8.17, a new `name` needs `rename_project` and a
   * new visibility `change_visibility_level` (the owner), while `path` is a master's to change. A
   * name or visibility resent unchanged is no change (8.17 asked the owner for any `name` or
   * `visibility_level` given; gitlab-compat.md says "changing").
   */
  async update(user: User, ref: ProjectRef, dto: UpdateProjectDto): Promise<Project> {
    const { project, abilities } = await this.resolver.resolve(user, ref, 'admin_project');
    const attrs = projectAttributes(dto, 'update');
    if (attrs.name !== undefined && attrs.name !== project.name && !abilities.has('rename_project')) throw new Forbidden();
    if (attrs.visibilityLevel !== undefined && attrs.visibilityLevel !== project.visibilityLevel) {
      if (!abilities.has('change_visibility_level')) throw new Forbidden();
      this.assertVisibilityAllowed(user, attrs.visibilityLevel, (await this.settings.get()).restrictedVisibilityLevels);
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
      'sharedRunnersEnabled',
      'publicBuilds',
      'visibilityLevel',
    ] as const) {
      if (attrs[key] !== undefined) (changes as Record<string, unknown>)[key] = attrs[key];
    }
    if (Object.keys(changes).length) {
      try {
        await this.tx.run(async (tx) => {
          await this.assertFree(tx, project.namespaceId, changes.name ?? null, changes.path ?? null, project.id);
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

  /** `POST /projects/fork/:id`: into the caller's namespace, repository copied, `forked_from_project` set. */
  async fork(user: User, ref: ProjectRef): Promise<Project> {
    const { project: source } = await this.resolver.resolve(user, ref, 'fork_project');
    const namespace = await this.targetNamespace(user, user, undefined);
    const settings = await this.settings.get();
    let level = source.visibilityLevel;
    if (!user.admin && settings.restrictedVisibilityLevels?.includes(level)) level = 0;
    const token = this.secrets.generateToken(20);
    const fork = await this.insertProject(
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
      token,
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

  /** Stars: 201 with the project, 304 when already starred. */
  async star(user: User, ref: ProjectRef): Promise<Project> {
    const { project } = await this.resolver.resolve(user, ref);
    if (!(await this.tx.run((tx) => this.projects.star(tx, user.id, project.id)))) throw new NotModified();
    return this.resolver.find({ id: project.id });
  }

  /** Unstars: 200 with the project, 304 when not starred. */
  async unstar(user: User, ref: ProjectRef): Promise<Project> {
    const { project } = await this.resolver.resolve(user, ref);
    if (!(await this.tx.run((tx) => this.projects.unstar(tx, user.id, project.id)))) throw new NotModified();
    return this.resolver.find({ id: project.id });
  }

  async setArchived(user: User, ref: ProjectRef, archived: boolean): Promise<Project> {
    const { project } = await this.resolver.resolve(user, ref, 'archive_project');
    if (project.archived !== archived) await this.projects.update(project.id, { archived });
    return this.resolver.find({ id: project.id });
  }

  /** `DELETE /projects/:id` (owners and admins): rows go in one transaction, then the repository. */
  async remove(user: User, ref: ProjectRef): Promise<true> {
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
