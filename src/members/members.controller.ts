import { Controller, Delete, Get, Param, Post, Put } from '@nestjs/common';
import { CurrentUser } from '../common/auth/decorators';
import { API } from '../common/http/routes';
import { Input, Params } from '../common/params/params';
import { GroupsService } from '../groups/groups.service';
import { ProjectViews } from '../projects/project-views.service';
import { ProjectsService } from '../projects/projects.service';
import { User } from '../users/user.entity';
import { presentMember } from './members.presenter';
import { MembersService } from './members.service';

@Controller(API)
export class MembersController {
  constructor(
    private readonly members: MembersService,
    private readonly projects: ProjectsService,
    private readonly groups: GroupsService,
    private readonly views: ProjectViews,
  ) {}

  private async project(user: User, id: string, write: boolean) {
    const { project } = await this.projects.authorize(user, id, write ? 'admin_project_member' : 'read_project_member');
    return { kind: 'project' as const, project };
  }

  private async group(user: User, id: string, write: boolean) {
    return { kind: 'group' as const, group: await this.groups.authorize(user, id, write ? 'admin_group_member' : 'read_group') };
  }

  // --- project members ---
  @Get('projects/:id/members')
  async projectMembers(@CurrentUser() user: User, @Param('id') id: string, @Input() p: Params) {
    const ctx = await this.views.context();
    return (await this.members.list(await this.project(user, id, false), p)).map((m) => presentMember(m, ctx));
  }

  @Get('projects/:id/members/:userId')
  async projectMember(@CurrentUser() user: User, @Param('id') id: string, @Param('userId') userId: string) {
    return presentMember(await this.members.get(await this.project(user, id, false), userId), await this.views.context());
  }

  @Post('projects/:id/members')
  async addProjectMember(@CurrentUser() user: User, @Param('id') id: string, @Input() p: Params) {
    return presentMember(await this.members.add(user, await this.project(user, id, true), p), await this.views.context());
  }

  @Put('projects/:id/members/:userId')
  async updateProjectMember(@CurrentUser() user: User, @Param('id') id: string, @Param('userId') userId: string, @Input() p: Params) {
    return presentMember(await this.members.update(await this.project(user, id, true), userId, p), await this.views.context());
  }

  /** 200 with the removed member; for a user who was not a member, GitLab's `{"message":"Access revoked"}`. */
  @Delete('projects/:id/members/:userId')
  async removeProjectMember(@CurrentUser() user: User, @Param('id') id: string, @Param('userId') userId: string) {
    const removed = await this.members.remove(await this.project(user, id, true), userId);
    return removed ? presentMember(removed, await this.views.context()) : { message: 'Access revoked', id: Number(userId) || null };
  }

  // --- group members ---
  @Get('groups/:id/members')
  async groupMembers(@CurrentUser() user: User, @Param('id') id: string, @Input() p: Params) {
    const ctx = await this.views.context();
    return (await this.members.list(await this.group(user, id, false), p)).map((m) => presentMember(m, ctx));
  }

  @Get('groups/:id/members/:userId')
  async groupMember(@CurrentUser() user: User, @Param('id') id: string, @Param('userId') userId: string) {
    return presentMember(await this.members.get(await this.group(user, id, false), userId), await this.views.context());
  }

  @Post('groups/:id/members')
  async addGroupMember(@CurrentUser() user: User, @Param('id') id: string, @Input() p: Params) {
    return presentMember(await this.members.add(user, await this.group(user, id, true), p), await this.views.context());
  }

  @Put('groups/:id/members/:userId')
  async updateGroupMember(@CurrentUser() user: User, @Param('id') id: string, @Param('userId') userId: string, @Input() p: Params) {
    return presentMember(await this.members.update(await this.group(user, id, true), userId, p), await this.views.context());
  }

  @Delete('groups/:id/members/:userId')
  async removeGroupMember(@CurrentUser() user: User, @Param('id') id: string, @Param('userId') userId: string) {
    const removed = await this.members.remove(await this.group(user, id, true), userId);
    return removed ? presentMember(removed, await this.views.context()) : { message: 'Access revoked', id: Number(userId) || null };
  }
}
