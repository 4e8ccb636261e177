import { Controller, Get, Param, Post } from '@nestjs/common';
import { CurrentUser } from '../common/caller/caller';
import { API } from '../common/http/routes';
import { PaginationDto } from '../common/pagination/pagination.dto';
import { Input } from '../common/params/params';
import { User } from '../users/user.entity';
import { CommitsService } from './commits.service';
import { CreateCommitCommentDto, CreateCommitStatusDto, ListCommitsDto, ListCommitStatusesDto } from './dto/commits.dto';
import { presentCommitCommentView, presentCommitDetailView, presentCommitInList, presentCommitStatusView, presentDiff } from './repo-api.presenter';
import { ApiOkResponse } from '@nestjs/swagger';
import { ApiCreated, ApiPageResponse } from '../openapi/response-types';
import { CommitCommentResponse, CommitDetailResponse, CommitResponse, CommitStatusResponse, DiffEntryResponse } from './repo-api.responses';
import { ProjectRef, ProjectRefParam } from '../common/params/refs';

@Controller(`${API}/projects/:id`)
export class CommitsController {
  constructor(private readonly commits: CommitsService) {}

  @ApiPageResponse(CommitResponse, 'newest first; paginated like every list (1-based `page`)')
  @Get('repository/commits')
  async list(@CurrentUser() user: User, @Param('id', ProjectRefParam) id: ProjectRef, @Input() q: ListCommitsDto) {
    return (await this.commits.list(user, id, q)).map(presentCommitInList);
  }

  @ApiOkResponse({ type: CommitDetailResponse })
  @Get('repository/commits/:sha')
  async show(@CurrentUser() user: User, @Param('id', ProjectRefParam) id: ProjectRef, @Param('sha') sha: string) {
    return presentCommitDetailView(await this.commits.get(user, id, sha));
  }

  @ApiPageResponse(DiffEntryResponse)
  @Get('repository/commits/:sha/diff')
  async diff(@CurrentUser() user: User, @Param('id', ProjectRefParam) id: ProjectRef, @Param('sha') sha: string, @Input() q: PaginationDto) {
    return (await this.commits.diff(user, id, sha, q)).map(presentDiff);
  }

  @ApiPageResponse(CommitCommentResponse)
  @Get('repository/commits/:sha/comments')
  async comments(@CurrentUser() user: User, @Param('id', ProjectRefParam) id: ProjectRef, @Param('sha') sha: string, @Input() q: PaginationDto) {
    return (await this.commits.comments(user, id, sha, q)).map(presentCommitCommentView);
  }

  @ApiCreated(CommitCommentResponse)
  @Post('repository/commits/:sha/comments')
  async addComment(@CurrentUser() user: User, @Param('id', ProjectRefParam) id: ProjectRef, @Param('sha') sha: string, @Input() dto: CreateCommitCommentDto) {
    return presentCommitCommentView(await this.commits.addComment(user, id, sha, dto));
  }

  @ApiPageResponse(CommitStatusResponse)
  @Get('repository/commits/:sha/statuses')
  async statuses(@CurrentUser() user: User, @Param('id', ProjectRefParam) id: ProjectRef, @Param('sha') sha: string, @Input() q: ListCommitStatusesDto) {
    return (await this.commits.statuses(user, id, sha, q)).map(presentCommitStatusView);
  }

  @ApiCreated(CommitStatusResponse)
  @Post('statuses/:sha')
  async setStatus(@CurrentUser() user: User, @Param('id', ProjectRefParam) id: ProjectRef, @Param('sha') sha: string, @Input() dto: CreateCommitStatusDto) {
    return presentCommitStatusView(await this.commits.setStatus(user, id, sha, dto));
  }
}
