import { Controller, Delete, Get, Param, Post, Put } from '@nestjs/common';
import { Admin, CurrentUser } from '../common/auth/decorators';
import { API } from '../common/http/routes';
import { pageRequest } from '../common/pagination/pagination';
import { Input, Params } from '../common/params/params';
import { presentEvent } from '../events/events.presenter';
import { EventsService } from '../events/events.service';
import { User } from '../users/user.entity';
import { ProjectViews } from './project-views.service';
import { ProjectsService } from './projects.service';

@Controller(`${API}/projects`)
export class ProjectsController {
  constructor(
    private readonly projects: ProjectsService,
    private readonly views: ProjectViews,
    private readonly events: EventsService,
  ) {}

  @Get()
  async list(@CurrentUser() user: User, @Input() p: Params) {
    return this.views.page(user, await this.projects.list(user, 'member', p), { permissions: true });
  }

  @Get('owned')
  async owned(@CurrentUser() user: User, @Input() p: Params) {
    return this.views.page(user, await this.projects.list(user, 'owned', p), { permissions: true });
  }

  @Get('starred')
  async starred(@CurrentUser() user: User, @Input() p: Params) {
    return this.views.page(user, await this.projects.list(user, 'starred', p));
  }

  @Admin()
  @Get('all')
  async all(@CurrentUser() user: User, @Input() p: Params) {
    return this.views.page(user, await this.projects.list(user, 'all', p), { permissions: true });
  }

  @Get('search/:query')
  async search(@CurrentUser() user: User, @Param('query') query: string, @Input() p: Params) {
    return this.views.page(user, await this.projects.list(user, 'search', p, query));
  }

  @Post()
  async create(@CurrentUser() user: User, @Input() p: Params) {
    return this.views.one(user, await this.projects.create(user, p), { runnersToken: true });
  }

  @Admin()
  @Post('user/:userId')
  async createForUser(@CurrentUser() user: User, @Param('userId') userId: string, @Input() p: Params) {
    return this.views.one(user, await this.projects.create(user, p, userId), { runnersToken: true });
  }

  @Post('fork/:id')
  async fork(@CurrentUser() user: User, @Param('id') id: string) {
    return this.views.one(user, await this.projects.fork(user, id), { runnersToken: true });
  }

  @Get(':id')
  async show(@CurrentUser() user: User, @Param('id') id: string) {
    const { project } = await this.projects.authorize(user, id);
    return this.views.one(user, project, { permissions: true, runnersToken: true });
  }

  @Get(':id/events')
  async projectEvents(@CurrentUser() user: User, @Param('id') id: string, @Input() p: Params) {
    const { project } = await this.projects.authorize(user, id);
    const ctx = await this.views.context();
    return (await this.events.listForProject(project.id, pageRequest(p))).map((row) => presentEvent(row, user, ctx));
  }

  @Put(':id')
  async update(@CurrentUser() user: User, @Param('id') id: string, @Input() p: Params) {
    return this.views.one(user, await this.projects.update(user, id, p), { runnersToken: true });
  }

  @Post(':id/star')
  async star(@CurrentUser() user: User, @Param('id') id: string) {
    return this.views.one(user, await this.projects.star(user, id));
  }

  @Delete(':id/star')
  async unstar(@CurrentUser() user: User, @Param('id') id: string) {
    return this.views.one(user, await this.projects.unstar(user, id));
  }

  @Post(':id/archive')
  async archive(@CurrentUser() user: User, @Param('id') id: string) {
    return this.views.one(user, await this.projects.setArchived(user, id, true));
  }

  @Post(':id/unarchive')
  async unarchive(@CurrentUser() user: User, @Param('id') id: string) {
    return this.views.one(user, await this.projects.setArchived(user, id, false));
  }

  /** 200 with body `true` (sent as JSON by the global JSON response interceptor). */
  @Delete(':id')
  remove(@CurrentUser() user: User, @Param('id') id: string) {
    return this.projects.remove(user, id);
  }
}
