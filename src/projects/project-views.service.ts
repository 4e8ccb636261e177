import { Inject, Injectable } from '@nestjs/common';
import { DataSource, In } from 'typeorm';
import { ApplicationSettingsService } from '../application-settings/application-settings.service';
import { SecretsService } from '../common/crypto/secrets.service';
import { Paginated } from '../common/pagination/pagination';
import { NO_ACCESS, projectAbilities } from '../common/policy/policy';
import { PolicyService } from '../common/policy/policy.service';
import { APP_CONFIG, AppConfig } from '../config/config';
import { User } from '../users/user.entity';
import { PresentContext } from '../users/users.presenter';
import { Project } from './project.entity';
import { ForkParent, presentProject } from './projects.presenter';

export interface ViewOptions {
  /** Add `permissions` (GitLab's ProjectWithAccess). */
  permissions?: boolean;
  /** Add `runners_token` where the viewer may administer the project (never in lists). */
  runnersToken?: boolean;
}

/** Presents projects: loads owners, fork parents, fork counts and the viewer's access in a fixed number of queries. */
@Injectable()
export class ProjectViews {
  constructor(
    private readonly ds: DataSource,
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
    const ownerIds = [...new Set(projects.filter((p) => p.namespace.kind === 'user').map((p) => p.namespace.ownerId))]
      .filter((id): id is number => id !== null);
    const parentIds = [...new Set(projects.map((p) => p.forkedFromProjectId).filter((id): id is number => id !== null))];
    const [owners, parents, forkCounts, access, openIssues] = await Promise.all([
      ownerIds.length ? this.ds.getRepository(User).findBy({ id: In(ownerIds) }) : Promise.resolve([]),
      parentIds.length ? this.parents(parentIds) : Promise.resolve([]),
      this.ds.query(
        `SELECT forked_from_project_id AS id, count(*)::int AS n FROM projects WHERE forked_from_project_id = ANY($1) GROUP BY 1`,
        [ids],
      ) as Promise<{ id: number; n: number }[]>,
      opts.permissions || opts.runnersToken ? this.policy.projectAccess(viewer, projects) : Promise.resolve(undefined),
      this.ds.query(
        `SELECT project_id AS id, count(*)::int AS n FROM issues
          WHERE project_id = ANY($1) AND state IN ('opened', 'reopened') AND deleted_at IS NULL GROUP BY 1`,
        [ids],
      ) as Promise<{ id: number; n: number }[]>,
    ]);
    const openIssuesById = new Map(openIssues.map((r) => [r.id, r.n]));
    const ownerById = new Map(owners.map((u) => [u.id, u]));
    const parentById = new Map(parents.map((p) => [p.project.id, p]));
    const forksById = new Map(forkCounts.map((r) => [r.id, r.n]));
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

  /** Fork parents with the name of their namespace's owner (for `name_with_namespace`): one query. */
  private async parents(ids: number[]): Promise<ForkParent[]> {
    const { entities, raw } = await this.ds
      .getRepository(Project)
      .createQueryBuilder('p')
      .innerJoinAndSelect('p.namespace', 'n')
      .leftJoin(User, 'owner', `owner.id = n.owner_id AND n.kind = 'user'`)
      .addSelect('owner.name', 'owner_name')
      .where('p.id IN (:...ids)', { ids })
      .orderBy('p.id')
      .getRawAndEntities<{ p_id: number; owner_name: string | null }>();
    const ownerNames = new Map(raw.map((r) => [Number(r.p_id), r.owner_name]));
    return entities.map((project) => ({ project, ownerName: ownerNames.get(project.id) ?? null }));
  }

  async one(viewer: User | undefined, project: Project, opts: ViewOptions = {}) {
    return (await this.many(viewer, [project], opts))[0];
  }

  async page(viewer: User | undefined, page: Paginated<Project>, opts: ViewOptions = {}) {
    return new Paginated(await this.many(viewer, page.items, opts), page.total, page.page);
  }
}
