import { Injectable } from '@nestjs/common';
import { RecordNotFound } from '../../common/errors/domain-errors';
import { PageParams, Paginated, pageRequest } from '../../common/pagination/pagination';
import { ProjectRef } from '../../common/params/refs';
import { ProjectResolver } from '../../projects/project-resolver.service';
import { Project } from '../../projects/project.entity';
import type { Caller } from '../../common/caller/caller';
import { ProjectBuildsService } from '../builds/project-builds.service';
import { DeploymentView } from './environments.presenter';
import { DeploymentRow, EnvironmentsRepository } from './environments.repository';

/**
 * `/projects/:id/deployments` (GitLab 8.17's lib/api/deployments.rb): reporters and above
 * (`read_deployment`). A page is two statements (the deployments with their environments and users,
 * their builds with runners) and the builds' commits from git.
 */
@Injectable()
export class DeploymentsService {
  constructor(
    private readonly projects: ProjectResolver,
    private readonly repo: EnvironmentsRepository,
    private readonly builds: ProjectBuildsService,
  ) {}

  async list(user: Caller, ref: ProjectRef, q: PageParams): Promise<Paginated<DeploymentView>> {
    const { project } = await this.projects.resolve(user, ref, 'read_deployment');
    const page = pageRequest(q);
    const [rows, total] = await this.repo.listDeployments(project.id, page);
    return new Paginated(await this.views(project, rows), total, page);
  }

  /** By id (8.17: `user_project.deployments.find`), `404 Not found` when the project has no such deployment. */
  async get(user: Caller, ref: ProjectRef, id: number): Promise<DeploymentView> {
    const { project } = await this.projects.resolve(user, ref, 'read_deployment');
    const row = await this.repo.findDeployment(project.id, id);
    if (!row) throw new RecordNotFound();
    return (await this.views(project, [row]))[0];
  }

  private async views(project: Project, rows: DeploymentRow[]): Promise<DeploymentView[]> {
    if (rows.length === 0) return [];
    const builds = await this.builds.viewsOf(
      project,
      rows.map((r) => r.deployableId).filter((id): id is number => id !== null),
    );
    return rows.map((deployment) => ({ deployment, build: deployment.deployableId === null ? undefined : builds.get(deployment.deployableId) }));
  }
}
