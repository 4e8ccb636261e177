import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager, SelectQueryBuilder } from 'typeorm';
import { ApplicationSettingsService } from '../application-settings/application-settings.service';
import { SecretsService } from '../common/crypto/secrets.service';
import {
  Conflict,
  ErrorWithBody,
  Forbidden,
  InvalidAttribute,
  isUniqueViolation,
  NotFound,
  NotModified,
  ValidationFailed,
} from '../common/errors/domain-errors';
import { Logger } from '../common/http/logger';
import { checkOutboundUrl, OutboundUrlRefused } from '../common/net/outbound-url';
import { Paginated, pageRequest } from '../common/pagination/pagination';
import { containsPattern, Params, parseId } from '../common/params/params';
import { AccessLevel, groupAbilities, ProjectAbility } from '../common/policy/policy';
import { PolicyService } from '../common/policy/policy.service';
import { DomainEvents } from '../events/domain-events';
import { EventsService } from '../events/events.service';
import { GitService } from '../git/git.service';
import { ProjectMember } from '../members/member.entities';
import { Namespace } from '../namespaces/namespace.entity';
import { User } from '../users/user.entity';
import { parameterize, readProjectAttributes, ProjectAttributes } from './project-attributes';
import { Project } from './project.entity';

const ORDER_COLUMNS: Record<string, string> = {
  id: 'p.id',
  name: 'p.name',
  path: 'p.path',
  created_at: 'p.created_at',
  updated_at: 'p.updated_at',
  last_activity_at: 'p.last_activity_at',
};
const VISIBILITY_NAMES: Record<string, number> = { private: 0, internal: 10, public: 20 };
const VISIBILITY_LABEL: Record<number, string> = { 0: 'Private', 10: 'Internal', 20: 'Public' };

export type ProjectScope = 'member' | 'owned' | 'starred' | 'all' | 'search';

function takenFields(e: unknown): Record<string, string[]> | undefined {
  if (isUniqueViolation(e, 'projects_namespace_path_key')) return { path: ['has already been taken'] };
  if (isUniqueViolation(e, 'projects_namespace_name_key')) return { name: ['has already been taken'] };
  return undefined;
}

@Injectable()
export class ProjectsService {
  constructor(
    private readonly ds: DataSource,
    private readonly policy: PolicyService,
    private readonly git: GitService,
    private readonly events: EventsService,
    private readonly secrets: SecretsService,
    private readonly settings: ApplicationSettingsService,
    private readonly logger: Logger,
    private readonly domainEvents: DomainEvents,
  ) {}

  private query(m: EntityManager = this.ds.manager): SelectQueryBuilder<Project> {
    return m.getRepository(Project).createQueryBuilder('p').innerJoinAndSelect('p.namespace', 'n');
  }

  /** A project by id or by `namespace/path` (case-insensitive), whatever the caller may see. */
  async findByRef(ref: string | number): Promise<Project> {
    if (typeof ref === 'string' && (ref.length > 512 || /[\x00-\x1f]/.test(ref))) throw new NotFound('Project');
    const qb = this.query();
    const id = typeof ref === 'number' ? ref : parseId(ref);
    if (id !== undefined) qb.where('p.id = :id', { id });
    else {
      const slash = String(ref).lastIndexOf('/');
      if (slash <= 0) throw new NotFound('Project');
      qb.where('lower(n.path) = lower(:ns) AND lower(p.path) = lower(:path)', {
        ns: String(ref).slice(0, slash),
        path: String(ref).slice(slash + 1),
      });
    }
    const project = await qb.getOne();
    if (!project) throw new NotFound('Project');
    return project;
  }

  /**
   * The project if the caller has `ability` on it: 404 when the caller cannot read it (or it does not
   * exist), 403 when it can read it but lacks the ability.
   */
  async authorize(user: User | undefined, ref: string | number, ability: ProjectAbility = 'read_project') {
    const project = await this.findByRef(ref);
    const abilities = await this.policy.authorize(user, project, ability);
    return { project, abilities };
  }

  // ---------------------------------------------------------------- lists

  /** `/projects`, `/projects/owned`, `/projects/starred`, `/projects/all`, `/projects/search/:q`: one count and one page query. */
  async list(user: User, scope: ProjectScope, p: Params, searchTerm?: string): Promise<Paginated<Project>> {
    const page = pageRequest(p);
    const qb = this.query();
    if (scope === 'member') {
      const c = this.policy.memberProjectsCondition(user);
      qb.where(c.sql, c.params);
    } else if (scope === 'owned') {
      // parenthesized as a whole: the filters below are ANDed onto it
      qb.where(
        `((n.kind = 'user' AND n.owner_id = :uid) OR
         (n.kind = 'group' AND n.id IN (SELECT namespace_id FROM group_members WHERE user_id = :uid AND access_level = 50)))`,
        { uid: user.id },
      );
    } else if (scope === 'starred') {
      const c = this.policy.readableProjectsCondition(user);
      qb.where(`p.id IN (SELECT project_id FROM users_star_projects WHERE user_id = :starUid)`, { starUid: user.id });
      qb.andWhere(c.sql, c.params);
    } else if (scope === 'search') {
      const c = this.policy.readableProjectsCondition(user);
      qb.where(c.sql, c.params);
    }
    const archived = p.bool('archived');
    if (archived !== undefined) qb.andWhere('p.archived = :archived', { archived });
    const visibility = p.string('visibility');
    if (visibility !== undefined) {
      const level = VISIBILITY_NAMES[visibility];
      if (level === undefined) throw new InvalidAttribute('visibility');
      qb.andWhere('p.visibility_level = :level', { level });
    }
    const search = searchTerm ?? p.string('search')?.trim();
    if (search) {
      const like = containsPattern(search);
      qb.andWhere(
        scope === 'search'
          ? 'lower(p.name) LIKE :like'
          : '(lower(p.name) LIKE :like OR lower(p.path) LIKE :like OR lower(coalesce(p.description, \'\')) LIKE :like OR lower(n.name) LIKE :like)',
        { like },
      );
    }
    const orderBy = p.string('order_by') ?? (scope === 'search' ? 'id' : 'created_at');
    const column = ORDER_COLUMNS[orderBy];
    if (!column) throw new InvalidAttribute('order_by');
    const sort = (p.string('sort') ?? (scope === 'search' ? 'asc' : 'desc')).toLowerCase();
    if (sort !== 'asc' && sort !== 'desc') throw new InvalidAttribute('sort');
    qb.orderBy(column, sort === 'asc' ? 'ASC' : 'DESC').addOrderBy('p.id', sort === 'asc' ? 'ASC' : 'DESC');
    qb.offset(page.offset).limit(page.perPage);
    const [items, total] = await qb.getManyAndCount();
    return new Paginated(items, total, page);
  }

  // ---------------------------------------------------------------- create

  /** `POST /projects` (caller's namespace or a group it may create in) and `POST /projects/user/:id` (admin). */
  async create(caller: User, p: Params, forUser?: string): Promise<Project> {
    const attrs = readProjectAttributes(p, 'create');
    const settings = await this.settings.get();
    let creator = caller;
    if (forUser !== undefined) {
      const id = parseId(forUser);
      const target = id === undefined ? null : await this.ds.getRepository(User).findOne({ where: { id } });
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

    const project = await this.insertProject(creator, namespace, {
      ...attrs,
      visibilityLevel: level,
      importUrl: importUrl ? importUrl.display : undefined,
    }, token, async (m, created) => {
      await this.git.create(created.id);
      if (namespace.kind === 'user') {
        await m.getRepository(ProjectMember).insert({
          projectId: created.id,
          userId: creator.id,
          accessLevel: AccessLevel.MASTER,
          notificationLevel: 3,
        });
      }
    });
    await this.events.record({ projectId: project.id, authorId: creator.id, action: importUrl ? 'imported' : 'created' });
    this.domainEvents.emit('project.created', { project }); // system hooks
    if (namespace.kind === 'user') this.domainEvents.emit('project_member.added', { projectId: project.id, userId: creator.id, accessLevel: AccessLevel.MASTER });
    if (importUrl) void this.runImport(project.id, importUrl.url);
    return this.findByRef(project.id);
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
    onCreated: (m: EntityManager, p: Project) => Promise<void>,
  ): Promise<Project> {
    let createdId: number | undefined;
    try {
      return await this.ds.transaction(async (m) => {
        if (namespace.kind === 'user' && namespace.ownerId !== null) {
          const owner = await m
            .getRepository(User)
            .createQueryBuilder('u')
            .setLock('pessimistic_write')
            .where('u.id = :id', { id: namespace.ownerId })
            .getOne();
          if (!owner) throw new NotFound('Namespace');
          const rows: { n: number }[] = await m.query(`SELECT count(*)::int AS n FROM projects WHERE namespace_id = $1`, [
            namespace.id,
          ]);
          if (rows[0].n >= owner.projectsLimit) {
            throw new ErrorWithBody(403, [
              `Your project limit is ${owner.projectsLimit} projects! Please contact your administrator to increase it`,
            ]);
          }
        }
        // the namespace must still exist and must not go away before commit (a group being deleted
        // locks its row; without this the insert would hit the foreign key and answer 500)
        const alive: unknown[] = await m.query(`SELECT id FROM namespaces WHERE id = $1 FOR KEY SHARE`, [namespace.id]);
        if (!alive.length) throw new ValidationFailed({ namespace: ['is not valid'] });
        const taken: Record<string, string[]> = {};
        const clash: { name: boolean; path: boolean }[] = await m.query(
          `SELECT bool_or(lower(name) = lower($2)) AS name, bool_or(lower(path) = lower($3)) AS path
             FROM projects WHERE namespace_id = $1`,
          [namespace.id, attrs.name, attrs.path],
        );
        if (clash[0]?.name) taken.name = ['has already been taken'];
        if (clash[0]?.path) taken.path = ['has already been taken'];
        if (Object.keys(taken).length) throw new Conflict(taken);
        const repo = m.getRepository(Project);
        const project = await repo.save(
          repo.create({
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
          }),
        );
        createdId = project.id;
        await onCreated(m, project);
        return project;
      });
    } catch (e) {
      if (createdId !== undefined) await this.git.remove(createdId).catch(() => undefined);
      const taken = takenFields(e);
      if (taken) throw new Conflict(taken);
      throw e;
    }
  }

  /** The namespace a new project goes to: the creator's own, or one the caller may create projects in. */
  private async targetNamespace(caller: User, creator: User, namespaceId?: number): Promise<Namespace> {
    const repo = this.ds.getRepository(Namespace);
    if (namespaceId === undefined) {
      const own = await repo.findOne({ where: { ownerId: creator.id, kind: 'user' } });
      if (!own) throw new NotFound('Namespace');
      return own;
    }
    const ns = await repo.findOne({ where: { id: namespaceId } });
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

  private async runImport(projectId: number, checked: Awaited<ReturnType<typeof checkOutboundUrl>>): Promise<void> {
    const repo = this.ds.getRepository(Project);
    try {
      await repo.update({ id: projectId }, { importStatus: 'started' });
      await this.git.importFrom(projectId, checked);
      const branch = await this.git.defaultBranch(projectId);
      await repo.update({ id: projectId }, { importStatus: 'finished', defaultBranch: branch, importError: null });
    } catch (e) {
      const message = e instanceof Error ? e.message.replace(/https?:\/\/[^\s@/]*@/g, 'https://[FILTERED]@') : 'import failed';
      this.logger.warn('project import failed', { project_id: projectId, error: message });
      await repo.update({ id: projectId }, { importStatus: 'failed', importError: message.slice(0, 1000) }).catch(() => undefined);
      if (!this.git.exists(projectId)) await this.git.create(projectId).catch(() => undefined);
    }
  }

  // ---------------------------------------------------------------- update

  /** `PUT /projects/:id`: master+; renaming and visibility changes need the owner. */
  async update(user: User, ref: string, p: Params): Promise<Project> {
    const { project, abilities } = await this.authorize(user, ref, 'admin_project');
    const attrs = readProjectAttributes(p, 'update');
    const renames = (attrs.name !== undefined && attrs.name !== project.name) || (attrs.path !== undefined && attrs.path !== project.path);
    if (renames && !abilities.has('rename_project')) throw new Forbidden();
    if (attrs.visibilityLevel !== undefined && attrs.visibilityLevel !== project.visibilityLevel) {
      if (!abilities.has('change_visibility_level')) throw new Forbidden();
      this.assertVisibilityAllowed(user, attrs.visibilityLevel, (await this.settings.get()).restrictedVisibilityLevels);
    }
    if (attrs.defaultBranch !== undefined && !(await this.git.branchExists(project.id, attrs.defaultBranch))) {
      throw new ValidationFailed({ default_branch: ['does not exist'] });
    }
    const changes: Partial<Project> = {};
    for (const key of [
      'name', 'path', 'description', 'defaultBranch', 'issuesEnabled', 'mergeRequestsEnabled', 'wikiEnabled',
      'buildsEnabled', 'snippetsEnabled', 'containerRegistryEnabled', 'sharedRunnersEnabled', 'publicBuilds',
      'visibilityLevel',
    ] as const) {
      if (attrs[key] !== undefined) (changes as Record<string, unknown>)[key] = attrs[key];
    }
    if (Object.keys(changes).length) {
      try {
        await this.ds.transaction(async (m) => {
          const taken: Record<string, string[]> = {};
          const clash: { name: boolean; path: boolean }[] = await m.query(
            `SELECT bool_or(lower(name) = lower($2)) AS name, bool_or(lower(path) = lower($3)) AS path
               FROM projects WHERE namespace_id = $1 AND id <> $4`,
            [project.namespaceId, changes.name ?? null, changes.path ?? null, project.id],
          );
          if (clash[0]?.name) taken.name = ['has already been taken'];
          if (clash[0]?.path) taken.path = ['has already been taken'];
          if (Object.keys(taken).length) throw new Conflict(taken);
          await m.getRepository(Project).update({ id: project.id }, changes);
          if (changes.defaultBranch) await this.git.setDefaultBranch(project.id, changes.defaultBranch);
        });
      } catch (e) {
        const taken = takenFields(e);
        if (taken) throw new Conflict(taken);
        throw e;
      }
    }
    const updated = await this.findByRef(project.id);
    if (changes.path !== undefined && changes.path !== project.path) this.domainEvents.emit('project.renamed', { project: updated, oldPathWithNamespace: `${project.namespace.path}/${project.path}` });
    return updated;
  }

  // ---------------------------------------------------------------- fork, star, archive, delete

  /** `POST /projects/fork/:id`: into the caller's namespace, repository copied, `forked_from_project` set. */
  async fork(user: User, ref: string): Promise<Project> {
    const { project: source } = await this.authorize(user, ref, 'fork_project');
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
      async (m, created) => {
        await this.git.fork(source.id, created.id);
        await m.getRepository(ProjectMember).insert({
          projectId: created.id,
          userId: user.id,
          accessLevel: AccessLevel.MASTER,
          notificationLevel: 3,
        });
      },
    );
    await this.events.record({ projectId: fork.id, authorId: user.id, action: 'created' });
    this.domainEvents.emit('project.created', { project: fork }); // system hooks
    return this.findByRef(fork.id);
  }

  /** Stars: 201 with the project, 304 when already starred. */
  async star(user: User, ref: string): Promise<Project> {
    const { project } = await this.authorize(user, ref);
    const added = await this.ds.transaction(async (m) => {
      const r: unknown[] = await m.query(
        `INSERT INTO users_star_projects (user_id, project_id) VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING id`,
        [user.id, project.id],
      );
      if (r.length) await m.query(`UPDATE projects SET star_count = star_count + 1 WHERE id = $1`, [project.id]);
      return r.length > 0;
    });
    if (!added) throw new NotModified();
    return this.findByRef(project.id);
  }

  /** Unstars: 200 with the project, 304 when not starred. */
  async unstar(user: User, ref: string): Promise<Project> {
    const { project } = await this.authorize(user, ref);
    const removed = await this.ds.transaction(async (m) => {
      const [rows] = (await m.query(`DELETE FROM users_star_projects WHERE user_id = $1 AND project_id = $2 RETURNING id`, [
        user.id,
        project.id,
      ])) as [unknown[], number];
      if (rows.length) {
        await m.query(`UPDATE projects SET star_count = greatest(star_count - 1, 0) WHERE id = $1`, [project.id]);
      }
      return rows.length > 0;
    });
    if (!removed) throw new NotModified();
    return this.findByRef(project.id);
  }

  async setArchived(user: User, ref: string, archived: boolean): Promise<Project> {
    const { project } = await this.authorize(user, ref, 'archive_project');
    if (project.archived !== archived) await this.ds.getRepository(Project).update({ id: project.id }, { archived });
    return this.findByRef(project.id);
  }

  /** `DELETE /projects/:id` (owners and admins): rows go in one transaction, then the repository. */
  async remove(user: User, ref: string): Promise<true> {
    const { project } = await this.authorize(user, ref, 'remove_project');
    await this.ds.getRepository(Project).delete({ id: project.id });
    await this.git.remove(project.id);
    this.domainEvents.emit('project.destroyed', { project }); // system hooks
    return true;
  }

  /** Moves a project into a group (admin): 409 when the group already has that path or name. */
  async transfer(projectRef: string, namespace: Namespace): Promise<Project> {
    const project = await this.findByRef(projectRef);
    if (project.namespaceId === namespace.id) return project;
    try {
      await this.ds.transaction(async (m) => {
        const alive: unknown[] = await m.query(`SELECT id FROM namespaces WHERE id = $1 FOR KEY SHARE`, [namespace.id]);
        if (!alive.length) throw new NotFound('Group');
        const clash: { n: number }[] = await m.query(
          `SELECT count(*)::int AS n FROM projects WHERE namespace_id = $1 AND (lower(path) = lower($2) OR lower(name) = lower($3))`,
          [namespace.id, project.path, project.name],
        );
        if (clash[0].n > 0) throw new Conflict({ path: ['has already been taken'] });
        await m.getRepository(Project).update({ id: project.id }, { namespaceId: namespace.id });
      });
    } catch (e) {
      const taken = takenFields(e);
      if (taken) throw new Conflict(taken);
      throw e;
    }
    const moved = await this.findByRef(project.id);
    this.domainEvents.emit('project.transferred', { project: moved, oldPathWithNamespace: `${project.namespace.path}/${project.path}` });
    return moved;
  }
}
