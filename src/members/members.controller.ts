import { Controller, Delete, Get, Param, Post, Put } from '@nestjs/common';
import { CurrentUser, Caller } from '../common/caller/caller';
import { API } from '../common/http/routes';
import { IdParam, Input, NumberParam } from '../common/params/params';
import { AddMemberDto, ListMembersDto, UpdateMemberDto } from './dto/member.dto';
import { MemberSource, MemberSourceRef } from './member-source.decorator';
import { MemberViews } from './member-views.service';
import { MembersService } from './members.service';
import { ApiOkResponse } from '@nestjs/swagger';
import { ApiCreated, ApiOneOfResponse, ApiPageResponse } from '../openapi/response-types';
import { AccessRevokedResponse, MemberResponse } from './members.responses';

const LIST = ['projects/:id/members', 'groups/:id/members'];
const ONE = ['projects/:id/members/:userId', 'groups/:id/members/:userId'];

/** One route set for project and group members; the service checks access (read / admin members). */
@Controller(API)
export class MembersController {
  constructor(
    private readonly members: MembersService,
    private readonly views: MemberViews,
  ) {}

  @ApiPageResponse(MemberResponse)
  @Get(LIST)
  async list(@CurrentUser() user: Caller, @MemberSource() source: MemberSourceRef, @Input() q: ListMembersDto) {
    return this.views.page(await this.members.list(user, source, q));
  }

  @ApiOkResponse({ type: MemberResponse })
  @Get(ONE)
  async get(@CurrentUser() user: Caller, @MemberSource() source: MemberSourceRef, @Param('userId', IdParam) userId: number) {
    return this.views.one(await this.members.get(user, source, userId));
  }

  @ApiCreated(MemberResponse)
  @Post(LIST)
  async add(@CurrentUser() user: Caller, @MemberSource() source: MemberSourceRef, @Input() dto: AddMemberDto) {
    return this.views.one(await this.members.add(user, source, dto));
  }

  @ApiOkResponse({ type: MemberResponse })
  @Put(ONE)
  async update(@CurrentUser() user: Caller, @MemberSource() source: MemberSourceRef, @Param('userId', IdParam) userId: number, @Input() dto: UpdateMemberDto) {
    return this.views.one(await this.members.update(user, source, userId, dto));
  }

  /** 200 with the removed member; for a user who was not a member, GitLab's `{"message":"Access revoked"}`. */
  @ApiOneOfResponse([MemberResponse, AccessRevokedResponse], 'the removed member; `Access revoked` when the user was not a member')
  @Delete(ONE)
  async remove(
    @CurrentUser() user: Caller,
    @MemberSource() source: MemberSourceRef,
    @Param('userId', IdParam) userId: number,
    @Param('userId', NumberParam) echo: number | null,
  ) {
    return this.views.removal(await this.members.remove(user, source, userId, echo));
  }
}
