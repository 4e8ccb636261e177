import { Injectable } from '@nestjs/common';
import { Paginated } from '../common/pagination/pagination';
import { ProjectViews } from '../projects/project-views.service';
import { presentMember, presentRemoval } from './members.presenter';
import { MemberRow, Removal } from './members.service';

/** Presents members with the instance's presentation context (external URL, gravatar). */
@Injectable()
export class MemberViews {
  constructor(private readonly projects: ProjectViews) {}

  async page(rows: Paginated<MemberRow>) {
    const ctx = await this.projects.context();
    return rows.map((m) => presentMember(m, ctx));
  }

  async one(m: MemberRow) {
    return presentMember(m, await this.projects.context());
  }

  async removal(r: Removal) {
    return presentRemoval(r, await this.projects.context());
  }
}
