import { Inject, Injectable } from '@nestjs/common';
import { ApplicationSettingsService } from '../application-settings/application-settings.service';
import { SecretsService } from '../common/crypto/secrets.service';
import { Paginated } from '../common/pagination/pagination';
import { NO_ACCESS, ProjectAccess, projectAbilities } from '../common/policy/policy';
import { PolicyService } from '../common/policy/policy.service';
import { APP_CONFIG, AppConfig } from '../config/config';
import { User } from '../users/user.entity';
import { UsersRepository } from '../users/users.repository';
import { PresentContext } from '../users/users.presenter';
import { ResolvedProject } from './project-resolver.service';
import { Project } from './project.entity';
import { presentProject } from './projects.presenter';
import { ProjectsRepository } from './projects.repository';

export interface ViewOptions {
  /** Add `permissions` (GitLab's ProjectWithAccess). */
  permissions?: boolean;
  /** Add `runners_token` where the viewer may administer the project (never in lists). */
  runnersToken?: boolean;
  /** The viewer's access when already known (a resolved project): saves the membership query. */
  access?: ProjectAccess;
}

/** Presents projects: loads owners, fork parents, fork counts and the viewer's access in a fixed number of queries. */
@Injectable()
export class ProjectViews {
  constructor(
    private readonly projects: ProjectsRepository,
    private readonly users: UsersRepository,
    private readonly policy: PolicyService,
    private readonly secrets: SecretsService,
    private readonly settings: ApplicationSettingsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async context(): Promise<PresentContext> {
    return { externalUrl: this.config.externalUrl, gravatarEnabled: (await this.settings.get()).gravatarEnabled };
  }

  async many(viewer: User | undefined, projects: Project[], opts: ViewOptions = {}) {
    const ctx = await this.context();
    if (projects.length === 0) return [];
    const ids = projects.map((p) => p.id);
    const ownerIds = projects.filter((p) => p.namespace.kind === 'user').map((p) => p.namespace.ownerId);
    const parentIds = [...new Set(projects.map((p) => p.forkedFromProjectId).filter((id): id is number => id !== null))];
    const needsAccess = (opts.permissions || opts.runnersToken) && !(opts.access && projects.length === 1);
    const [ownerById, parents, forksById, access, openIssuesById] = await Promise.all([
      this.users.byIds(ownerIds),
      parentIds.length ? this.projects.forkParents(parentIds) : Promise.resolve([]),
      this.projects.forkCounts(ids),
      needsAccess ? this.policy.projectAccess(viewer, projects) : Promise.resolve(opts.access ? new Map([[projects[0].id, opts.access]]) : undefined),
      this.projects.openIssueCounts(ids),
    ]);
    const parentById = new Map(parents.map((p) => [p.project.id, p]));
    return projects.map((p) => {
      const a = access?.get(p.id) ?? NO_ACCESS;
      const canAdmin = opts.runnersToken && projectAbilities(viewer, p, a).has('admin_project');
      return presentProject(
        p,
        {
          owner: p.namespace.ownerId !== null ? ownerById.get(p.namespace.ownerId) ?? null : null,
          forkedFrom: p.forkedFromProjectId ? parentById.get(p.forkedFromProjectId) ?? null : null,
          forksCount: forksById.get(p.id) ?? 0,
          openIssuesCount: openIssuesById.get(p.id) ?? 0,
          access: opts.permissions ? a : undefined,
          runnersToken: canAdmin ? this.secrets.decrypt(p.runnersTokenEncrypted) : undefined,
        },
        ctx,
      );
    });
  }

  async one(viewer: User | undefined, project: Project, opts: ViewOptions = {}) {
    return (await this.many(viewer, [project], opts))[0];
  }

  /** A project the resolver returned, with the access it already loaded. */
  async resolved(viewer: User | undefined, r: ResolvedProject, opts: ViewOptions = {}) {
    return this.one(viewer, r.project, { ...opts, access: r.access });
  }

  async page(viewer: User | undefined, page: Paginated<Project>, opts: ViewOptions = {}) {
    return new Paginated(await this.many(viewer, page.items, opts), page.total, page.page);
  }
}
