import { Controller, Delete, Get, Param, Post, Put } from '@nestjs/common';
import { CurrentUser, Caller } from '../common/caller/caller';
import { API } from '../common/http/routes';
import { IdParam, Input } from '../common/params/params';
import { CreateIssueDto, ListIssuesDto, ListProjectIssuesDto, MoveIssueDto, UpdateIssueDto } from './dto/issue.dto';
import { IssueViews } from './issue-views.service';
import { presentIssueRecord } from './issues.presenter';
import { IssuesService } from './issues.service';
import { ApiOkResponse } from '@nestjs/swagger';
import { ApiCreated, ApiNotModified, ApiPageResponse } from '../openapi/response-types';
import { IssueRecordResponse, IssueResponse } from './issues.responses';
import { ProjectRef, ProjectRefParam } from '../common/params/refs';

@Controller(API)
export class IssuesController {
  constructor(
    private readonly issues: IssuesService,
    private readonly views: IssueViews,
  ) {}

  /** Issues the caller authored. */
  @ApiPageResponse(IssueResponse)
  @Get('issues')
  async mine(@CurrentUser() user: Caller, @Input() q: ListIssuesDto) {
    return this.views.detailedPage(user, await this.issues.listAuthored(user, q));
  }

  @ApiPageResponse(IssueResponse)
  @Get('projects/:id/issues')
  async list(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Input() q: ListProjectIssuesDto) {
    return this.views.detailedPage(user, await this.issues.listForProject(user, id, q));
  }

  @ApiPageResponse(IssueResponse)
  @Get('projects/:id/milestones/:milestoneId/issues')
  async ofMilestone(
    @CurrentUser() user: Caller,
    @Param('id', ProjectRefParam) id: ProjectRef,
    @Param('milestoneId', IdParam) milestoneId: number,
    @Input() q: ListIssuesDto,
  ) {
    return this.views.detailedPage(user, await this.issues.listForMilestone(user, id, milestoneId, q));
  }

  @ApiOkResponse({ type: IssueResponse })
  @Get('projects/:id/issues/:issueId')
  async show(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Param('issueId', IdParam) issueId: number) {
    return this.views.one(user, (await this.issues.findReadable(user, id, issueId)).issue);
  }

  @ApiCreated(IssueResponse)
  @Post('projects/:id/issues')
  async create(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Input() dto: CreateIssueDto) {
    return this.views.one(user, await this.issues.create(user, id, dto));
  }

  @ApiOkResponse({ type: IssueResponse })
  @Put('projects/:id/issues/:issueId')
  async update(
    @CurrentUser() user: Caller,
    @Param('id', ProjectRefParam) id: ProjectRef,
    @Param('issueId', IdParam) issueId: number,
    @Input() dto: UpdateIssueDto,
  ) {
    return this.views.one(user, await this.issues.update(user, id, issueId, dto));
  }

  @ApiOkResponse({ type: IssueRecordResponse })
  @Delete('projects/:id/issues/:issueId')
  async remove(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Param('issueId', IdParam) issueId: number) {
    return presentIssueRecord(await this.issues.remove(user, id, issueId));
  }

  @ApiCreated(IssueResponse)
  @Post('projects/:id/issues/:issueId/move')
  async move(
    @CurrentUser() user: Caller,
    @Param('id', ProjectRefParam) id: ProjectRef,
    @Param('issueId', IdParam) issueId: number,
    @Input() dto: MoveIssueDto,
  ) {
    return this.views.one(user, await this.issues.move(user, id, issueId, dto));
  }

  @ApiCreated(IssueResponse)
  @ApiNotModified()
  @Post('projects/:id/issues/:issueId/subscription')
  async subscribe(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Param('issueId', IdParam) issueId: number) {
    return this.views.one(user, await this.issues.setSubscription(user, id, issueId, true));
  }

  @ApiOkResponse({ type: IssueResponse })
  @ApiNotModified()
  @Delete('projects/:id/issues/:issueId/subscription')
  async unsubscribe(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Param('issueId', IdParam) issueId: number) {
    return this.views.one(user, await this.issues.setSubscription(user, id, issueId, false));
  }
}
