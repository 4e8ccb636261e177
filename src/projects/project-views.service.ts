import { Inject, Injectable } from '@nestjs/common';
import { ApplicationSettingsService } from '../application-settings/application-settings.service';
import { SecretsService } from '../common/crypto/secrets.service';
import { Paginated } from '../common/pagination/pagination';
import { NO_ACCESS, ProjectAccess, projectAbilities } from '../common/policy/policy';
import { accessFrom } from '../common/policy/policy.service';
import { APP_CONFIG, AppConfig } from '../config/config';
import { PresentContext } from '../users/users.presenter';
import { ResolvedProject } from './project-resolver.service';
import { Project } from './project.entity';
import { presentProject } from './projects.presenter';
import { ProjectsRepository } from './projects.repository';
import type { Caller } from '../common/caller/caller';

export interface ViewOptions {
  /** Add `permissions` (GitLab's ProjectWithAccess). */
  permissions?: boolean;
  /**
   * `runners_token` where the viewer may administer the project (masters, owners, administrators):
   * on every view by default — single project, lists, star, group projects — as the spec's Project
   * has it; `false` leaves it out.
   */
  runnersToken?: boolean;
  /** The viewer's access when already known (a resolved project): saves the membership query. */
  access?: ProjectAccess;
}

/** Presents projects: loads owners, fork parents, fork counts and the viewer's access in a fixed number of queries. */
@Injectable()
export class ProjectViews {
  constructor(
    private readonly projects: ProjectsRepository,
    private readonly secrets: SecretsService,
    private readonly settings: ApplicationSettingsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async context(): Promise<PresentContext> {
    return {
      externalUrl: this.config.externalUrl,
      gravatarEnabled: (await this.settings.get()).gravatarEnabled,
      sshUrlPrefix: this.config.sshUrlPrefix,
      lfsEnabled: this.config.lfs.enabled,
    };
  }

  async many(viewer: Caller | undefined, projects: Project[], opts: ViewOptions = {}) {
    const ctx = await this.context();
    if (projects.length === 0) return [];
    const parentIds = [...new Set(projects.map((p) => p.forkedFromProjectId).filter((id): id is number => id !== null))];
    const withToken = opts.runnersToken ?? true;
    const needsAccess = (opts.permissions || withToken) && !(opts.access && projects.length === 1);
    // counts, owners and the viewer's memberships in one statement; fork parents (if any) in another
    const [extras, parents] = await Promise.all([
      this.projects.listExtras(projects, needsAccess && viewer ? viewer.id : null, viewer),
      parentIds.length ? this.projects.forkParents(parentIds) : Promise.resolve([]),
    ]);
    const parentById = new Map(parents.map((p) => [p.project.id, p]));
    const accessOf = (p: Project): ProjectAccess => {
      if (!needsAccess) return opts.access && p.id === projects[0].id ? opts.access : NO_ACCESS;
      const x = extras.get(p.id);
      return accessFrom(viewer, p, x?.projectMember ?? null, x?.groupMember ?? null);
    };
    return projects.map((p) => {
      const a = accessOf(p);
      const x = extras.get(p.id);
      const canAdmin = withToken && projectAbilities(viewer, p, a).has('admin_project');
      return presentProject(
        p,
        {
          owner: p.namespace.kind === 'user' ? (x?.owner ?? null) : null,
          forkedFrom: p.forkedFromProjectId ? (parentById.get(p.forkedFromProjectId) ?? null) : null,
          forksCount: x?.forksCount ?? 0,
          openIssuesCount: x?.openIssuesCount ?? 0,
          access: opts.permissions ? a : undefined,
          runnersToken: canAdmin ? this.secrets.decrypt(p.runnersTokenEncrypted) : undefined,
        },
        ctx,
      );
    });
  }

  async one(viewer: Caller | undefined, project: Project, opts: ViewOptions = {}) {
    return (await this.many(viewer, [project], opts))[0];
  }

  /** A project the resolver returned, with the access it already loaded. */
  async resolved(viewer: Caller | undefined, r: ResolvedProject, opts: ViewOptions = {}) {
    return this.one(viewer, r.project, { ...opts, access: r.access });
  }

  async page(viewer: Caller | undefined, page: Paginated<Project>, opts: ViewOptions = {}) {
    return new Paginated(await this.many(viewer, page.items, opts), page.total, page.page);
  }
}
