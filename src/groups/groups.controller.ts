import { Controller, Delete, Get, Inject, Param, Post } from '@nestjs/common';
import { Admin, CurrentUser } from '../common/auth/decorators';
import { API } from '../common/http/routes';
import { Input, Params } from '../common/params/params';
import { APP_CONFIG, AppConfig } from '../config/config';
import { ProjectViews } from '../projects/project-views.service';
import { ProjectsService } from '../projects/projects.service';
import { User } from '../users/user.entity';
import { presentGroup } from './groups.presenter';
import { GroupsService } from './groups.service';

@Controller(`${API}/groups`)
export class GroupsController {
  constructor(
    private readonly groups: GroupsService,
    private readonly projects: ProjectsService,
    private readonly views: ProjectViews,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Get()
  async list(@CurrentUser() user: User, @Input() p: Params) {
    return (await this.groups.list(user, p)).map((g) => presentGroup(g, this.config.externalUrl));
  }

  @Post()
  async create(@CurrentUser() user: User, @Input() p: Params) {
    return presentGroup(await this.groups.create(user, p), this.config.externalUrl);
  }

  /** GroupDetail: the group with the projects the caller may read in it (first 100). */
  @Get(':id')
  async show(@CurrentUser() user: User, @Param('id') id: string) {
    const group = await this.groups.authorize(user, id);
    const projects = await this.groups.projects(user, String(group.id), new Params({ per_page: '100' }));
    return { ...presentGroup(group, this.config.externalUrl), projects: await this.views.many(user, projects.items) };
  }

  @Delete(':id')
  async remove(@CurrentUser() user: User, @Param('id') id: string) {
    return presentGroup(await this.groups.remove(user, id), this.config.externalUrl);
  }

  @Get(':id/projects')
  async projectsOf(@CurrentUser() user: User, @Param('id') id: string, @Input() p: Params) {
    return this.views.page(user, await this.groups.projects(user, id, p));
  }

  /** Transfers a project into the group (administrators). */
  @Admin()
  @Post(':id/projects/:projectId')
  async transfer(@CurrentUser() user: User, @Param('id') id: string, @Param('projectId') projectId: string) {
    const group = await this.groups.findByRef(id);
    return this.views.one(user, await this.projects.transfer(projectId, group), { runnersToken: true });
  }
}
