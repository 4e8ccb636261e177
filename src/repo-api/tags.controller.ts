import { Controller, Delete, Get, Param, Post, Put } from '@nestjs/common';
import { CurrentUser, Caller } from '../common/caller/caller';
import { API } from '../common/http/routes';
import { PaginationDto } from '../common/pagination/pagination.dto';
import { Input } from '../common/params/params';
import { joinedPath } from './dto/path-param';
import { CreateTagDto, ReleaseDto } from './dto/tags.dto';
import { presentDeletedTag, presentRelease, presentTagView } from './repo-api.presenter';
import { TagsService } from './tags.service';
import { ApiOkResponse } from '@nestjs/swagger';
import { ApiCreated, ApiPageResponse } from '../openapi/response-types';
import { ReleaseResponse, TagNameResponse, TagResponse } from './repo-api.responses';
import { ProjectRef, ProjectRefParam } from '../common/params/refs';

@Controller(`${API}/projects/:id/repository/tags`)
export class TagsController {
  constructor(private readonly tags: TagsService) {}

  @ApiPageResponse(TagResponse)
  @Get()
  async list(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Input() q: PaginationDto) {
    return (await this.tags.list(user, id, q)).map(presentTagView);
  }

  @ApiCreated(TagResponse)
  @Post()
  async create(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Input() dto: CreateTagDto) {
    return presentTagView(await this.tags.create(user, id, dto));
  }

  @ApiOkResponse({ type: TagResponse })
  @Get('*tag')
  async show(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Param('tag') tag: string | string[]) {
    return presentTagView(await this.tags.get(user, id, joinedPath(tag)));
  }

  /** `POST .../tags/:tag/release`. */
  @ApiCreated(ReleaseResponse)
  @Post('*tag')
  async createRelease(
    @CurrentUser() user: Caller,
    @Param('id', ProjectRefParam) id: ProjectRef,
    @Param('tag') tag: string | string[],
    @Input() dto: ReleaseDto,
  ) {
    return presentRelease(await this.tags.createRelease(user, id, joinedPath(tag), dto));
  }

  /** `PUT .../tags/:tag/release`. */
  @ApiOkResponse({ type: ReleaseResponse })
  @Put('*tag')
  async updateRelease(
    @CurrentUser() user: Caller,
    @Param('id', ProjectRefParam) id: ProjectRef,
    @Param('tag') tag: string | string[],
    @Input() dto: ReleaseDto,
  ) {
    return presentRelease(await this.tags.updateRelease(user, id, joinedPath(tag), dto));
  }

  @ApiOkResponse({ type: TagNameResponse })
  @Delete('*tag')
  async remove(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Param('tag') tag: string | string[]) {
    return presentDeletedTag(await this.tags.remove(user, id, joinedPath(tag)));
  }
}
