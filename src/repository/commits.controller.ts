import { Controller, Get, Param, Post } from '@nestjs/common';
import { CurrentUser } from '../common/auth/decorators';
import { API } from '../common/http/routes';
import { PaginationDto } from '../common/pagination/pagination.dto';
import { Input } from '../common/params/params';
import { User } from '../users/user.entity';
import { CommitsService } from './commits.service';
import { CreateCommitCommentDto, CreateCommitStatusDto, ListCommitsDto, ListCommitStatusesDto } from './dto/commits.dto';
import { presentCommitCommentView, presentCommitDetailView, presentCommitInList, presentCommitStatusView, presentDiff } from './repository.presenter';

@Controller(`${API}/projects/:id`)
export class CommitsController {
  constructor(private readonly commits: CommitsService) {}

  @Get('repository/commits')
  async list(@CurrentUser() user: User, @Param('id') id: string, @Input() q: ListCommitsDto) {
    return (await this.commits.list(user, id, q)).map(presentCommitInList);
  }

  @Get('repository/commits/:sha')
  async show(@CurrentUser() user: User, @Param('id') id: string, @Param('sha') sha: string) {
    return presentCommitDetailView(await this.commits.get(user, id, sha));
  }

  @Get('repository/commits/:sha/diff')
  async diff(@CurrentUser() user: User, @Param('id') id: string, @Param('sha') sha: string, @Input() q: PaginationDto) {
    return (await this.commits.diff(user, id, sha, q)).map(presentDiff);
  }

  @Get('repository/commits/:sha/comments')
  async comments(@CurrentUser() user: User, @Param('id') id: string, @Param('sha') sha: string, @Input() q: PaginationDto) {
    return (await this.commits.comments(user, id, sha, q)).map(presentCommitCommentView);
  }

  @Post('repository/commits/:sha/comments')
  async addComment(@CurrentUser() user: User, @Param('id') id: string, @Param('sha') sha: string, @Input() dto: CreateCommitCommentDto) {
    return presentCommitCommentView(await this.commits.addComment(user, id, sha, dto));
  }

  @Get('repository/commits/:sha/statuses')
  async statuses(@CurrentUser() user: User, @Param('id') id: string, @Param('sha') sha: string, @Input() q: ListCommitStatusesDto) {
    return (await this.commits.statuses(user, id, sha, q)).map(presentCommitStatusView);
  }

  @Post('statuses/:sha')
  async setStatus(@CurrentUser() user: User, @Param('id') id: string, @Param('sha') sha: string, @Input() dto: CreateCommitStatusDto) {
    return presentCommitStatusView(await this.commits.setStatus(user, id, sha, dto));
  }
}
