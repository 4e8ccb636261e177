import { Injectable } from '@nestjs/common';
import { Paginated } from '../../common/pagination/pagination';
import { ProjectViews } from '../../projects/project-views.service';
import type { Caller } from '../../common/caller/caller';
import { presentEnvironment } from './environments.presenter';
import type { EnvironmentRow, EnvironmentsResult } from './environments.service';

/** Environments as the API shows them: each with its project, presented once per answer (the viewer's access already known). */
@Injectable()
export class EnvironmentViews {
  constructor(private readonly projects: ProjectViews) {}

  async one(viewer: Caller, r: EnvironmentsResult<EnvironmentRow>) {
    return presentEnvironment(r.result, await this.projects.resolved(viewer, r.resolved));
  }

  async page(viewer: Caller, r: EnvironmentsResult<Paginated<EnvironmentRow>>) {
    const project = await this.projects.resolved(viewer, r.resolved);
    return r.result.map((e) => presentEnvironment(e, project));
  }
}
