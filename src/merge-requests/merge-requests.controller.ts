import { Controller, Delete, Get, HttpCode, Param, Post, Put } from '@nestjs/common';
import { CurrentUser, Caller } from '../common/caller/caller';
import { API } from '../common/http/routes';
import { IdParam, Input } from '../common/params/params';
import { IssueViews } from '../issues/issue-views.service';
import { ClosingIssues } from './closing-issues.service';
import { PaginationDto } from '../common/pagination/pagination.dto';
import { CreateMergeRequestDto, ListMergeRequestsDto, MergeDto, UpdateMergeRequestDto } from './dto/merge-request.dto';
import { MergeRequestViews } from './merge-request-views.service';
import { presentMergeRequestCommits, presentMergeRequestRecord } from './merge-requests.presenter';
import { MergeRequestsService } from './merge-requests.service';
import { MergeService } from './merge.service';
import { MergeRequestUpdates } from './merge-request-updates.service';
import { ApiOkResponse } from '@nestjs/swagger';
import { IssueResponse } from '../issues/issues.responses';
import { ApiCreated, ApiNotModified, ApiPageResponse } from '../openapi/response-types';
import { CommitResponse } from '../repo-api/repo-api.responses';
import { MergeRequestChangesResponse, MergeRequestRecordResponse, MergeRequestResponse } from './merge-requests.responses';
import { ProjectRef, ProjectRefParam } from '../common/params/refs';

/** Each single-MR route also answers on the legacy singular path old clients use (`merge_request/:id`). */
const one = (suffix = '') => [`merge_requests/:mrId${suffix}`, `merge_request/:mrId${suffix}`];

@Controller(`${API}/projects/:id`)
export class MergeRequestsController {
  constructor(
    private readonly mrs: MergeRequestsService,
    private readonly updates: MergeRequestUpdates,
    private readonly merges: MergeService,
    private readonly closing: ClosingIssues,
    private readonly views: MergeRequestViews,
    private readonly issueViews: IssueViews,
  ) {}

  @ApiPageResponse(MergeRequestResponse)
  @Get('merge_requests')
  async list(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Input() dto: ListMergeRequestsDto) {
    return this.views.page(user, await this.mrs.list(user, id, dto));
  }

  @ApiCreated(MergeRequestResponse)
  @Post('merge_requests')
  async create(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Input() dto: CreateMergeRequestDto) {
    return this.views.one(user, await this.mrs.create(user, id, dto));
  }

  @ApiOkResponse({ type: MergeRequestResponse })
  @Get(one())
  async show(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Param('mrId', IdParam) mrId: number) {
    return this.views.one(user, await this.mrs.get(user, id, mrId));
  }

  @ApiPageResponse(CommitResponse)
  @Get(one('/commits'))
  async commits(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Param('mrId', IdParam) mrId: number, @Input() q: PaginationDto) {
    return presentMergeRequestCommits(await this.mrs.commits(user, id, mrId, q));
  }

  @ApiOkResponse({ type: MergeRequestChangesResponse })
  @Get(one('/changes'))
  async changes(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Param('mrId', IdParam) mrId: number) {
    return this.views.withChanges(user, await this.mrs.changes(user, id, mrId));
  }

  @ApiPageResponse(IssueResponse)
  @Get(one('/closes_issues'))
  async closesIssues(
    @CurrentUser() user: Caller,
    @Param('id', ProjectRefParam) id: ProjectRef,
    @Param('mrId', IdParam) mrId: number,
    @Input() dto: PaginationDto,
  ) {
    return this.issueViews.detailedPage(user, await this.closing.ofMergeRequest(user, id, mrId, dto));
  }

  @ApiOkResponse({ type: MergeRequestResponse })
  @Put(one())
  async update(
    @CurrentUser() user: Caller,
    @Param('id', ProjectRefParam) id: ProjectRef,
    @Param('mrId', IdParam) mrId: number,
    @Input() dto: UpdateMergeRequestDto,
  ) {
    return this.views.one(user, await this.updates.update(user, id, mrId, dto));
  }

  @ApiOkResponse({ type: MergeRequestRecordResponse })
  @Delete(one())
  async remove(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Param('mrId', IdParam) mrId: number) {
    return presentMergeRequestRecord(await this.mrs.remove(user, id, mrId));
  }

  @ApiOkResponse({ type: MergeRequestResponse })
  @Put(one('/merge'))
  async merge(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Param('mrId', IdParam) mrId: number, @Input() dto: MergeDto) {
    return this.views.one(user, await this.merges.merge(user, id, mrId, dto));
  }

  @ApiOkResponse({ type: MergeRequestResponse })
  @Put(one('/cancel_merge_when_build_succeeds'))
  async cancelAutoMerge(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Param('mrId', IdParam) mrId: number) {
    return this.views.one(user, await this.merges.cancelMergeWhenBuildSucceeds(user, id, mrId));
  }

  /** GitLab 8.8's own route is POST (spec-decisions 6: both); 200 like the PUT. */
  @ApiOkResponse({ type: MergeRequestResponse })
  @Post(one('/cancel_merge_when_build_succeeds'))
  @HttpCode(200)
  async cancelAutoMergePost(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Param('mrId', IdParam) mrId: number) {
    return this.views.one(user, await this.merges.cancelMergeWhenBuildSucceeds(user, id, mrId));
  }

  @ApiCreated(MergeRequestResponse)
  @ApiNotModified()
  @Post(one('/subscription'))
  async subscribe(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Param('mrId', IdParam) mrId: number) {
    return this.views.one(user, await this.mrs.setSubscription(user, id, mrId, true));
  }

  @ApiOkResponse({ type: MergeRequestResponse })
  @ApiNotModified()
  @Delete(one('/subscription'))
  async unsubscribe(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Param('mrId', IdParam) mrId: number) {
    return this.views.one(user, await this.mrs.setSubscription(user, id, mrId, false));
  }
}
