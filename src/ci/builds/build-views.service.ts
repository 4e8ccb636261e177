import { Injectable } from '@nestjs/common';
import { Paginated } from '../../common/pagination/pagination';
import { ProjectViews } from '../../projects/project-views.service';
import { BuildView, presentBuild } from './builds.presenter';

/** Builds as the API shows them: the presenter with the context it needs (external URL, gravatar setting). */
@Injectable()
export class BuildViews {
  constructor(private readonly projects: ProjectViews) {}

  async one(v: BuildView, opts: { erased?: boolean } = {}) {
    return presentBuild(v, await this.projects.context(), opts);
  }

  async page(page: Paginated<BuildView>) {
    const ctx = await this.projects.context();
    return page.map((v) => presentBuild(v, ctx));
  }
}
