import { Controller, Get, Param, Post } from '@nestjs/common';
import { CurrentUser } from '../common/auth/decorators';
import { API } from '../common/http/routes';
import { Input, Params } from '../common/params/params';
import { ProjectViews } from '../projects/project-views.service';
import { User } from '../users/user.entity';
import { CommitsService } from './commits.service';
import {
  presentCommit,
  presentCommitComment,
  presentCommitDetail,
  presentCommitStatus,
  presentDiff,
} from './repository.presenter';

@Controller(`${API}/projects/:id`)
export class CommitsController {
  constructor(
    private readonly commits: CommitsService,
    private readonly views: ProjectViews,
  ) {}

  @Get('repository/commits')
  async list(@CurrentUser() user: User, @Param('id') id: string, @Input() p: Params) {
    return (await this.commits.list(user, id, p)).map(presentCommit);
  }

  @Get('repository/commits/:sha')
  async show(@CurrentUser() user: User, @Param('id') id: string, @Param('sha') sha: string) {
    const { commit, status } = await this.commits.get(user, id, sha);
    return presentCommitDetail(commit, status);
  }

  @Get('repository/commits/:sha/diff')
  async diff(@CurrentUser() user: User, @Param('id') id: string, @Param('sha') sha: string) {
    return (await this.commits.diff(user, id, sha)).map(presentDiff);
  }

  @Get('repository/commits/:sha/comments')
  async comments(@CurrentUser() user: User, @Param('id') id: string, @Param('sha') sha: string, @Input() p: Params) {
    const ctx = await this.views.context();
    return (await this.commits.comments(user, id, sha, p)).map((c) => presentCommitComment(c.comment, c.author, ctx));
  }

  @Post('repository/commits/:sha/comments')
  async addComment(@CurrentUser() user: User, @Param('id') id: string, @Param('sha') sha: string, @Input() p: Params) {
    const c = await this.commits.addComment(user, id, sha, p);
    return presentCommitComment(c.comment, c.author, await this.views.context());
  }

  @Get('repository/commits/:sha/statuses')
  async statuses(@CurrentUser() user: User, @Param('id') id: string, @Param('sha') sha: string, @Input() p: Params) {
    const ctx = await this.views.context();
    return (await this.commits.statuses(user, id, sha, p)).map((s) => presentCommitStatus(s.status, s.author, ctx));
  }

  @Post('statuses/:sha')
  async setStatus(@CurrentUser() user: User, @Param('id') id: string, @Param('sha') sha: string, @Input() p: Params) {
    const s = await this.commits.setStatus(user, id, sha, p);
    return presentCommitStatus(s.status, s.author, await this.views.context());
  }
}
