import { Inject, Injectable } from '@nestjs/common';
import { Paginated } from '../common/pagination/pagination';
import { APP_CONFIG, AppConfig } from '../config/config';
import { Namespace } from '../namespaces/namespace.entity';
import { ProjectViews } from '../projects/project-views.service';
import { presentGroup } from './groups.presenter';
import { GroupDetail } from './groups.service';
import { GroupDetailResponse } from './groups.responses';
import type { Caller } from '../common/caller/caller';

/** Presents groups; GroupDetail with its projects through ProjectViews (bounded queries). */
@Injectable()
export class GroupViews {
  constructor(
    private readonly projects: ProjectViews,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  one(group: Namespace) {
    return presentGroup(group, this.config.externalUrl);
  }

  page(groups: Paginated<Namespace>) {
    return groups.map((g) => presentGroup(g, this.config.externalUrl));
  }

  async detail(viewer: Caller, d: GroupDetail): Promise<GroupDetailResponse> {
    return { ...presentGroup(d.group, this.config.externalUrl), projects: await this.projects.many(viewer, d.projects) };
  }
}
