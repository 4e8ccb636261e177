import { Controller, Delete, Get, Param, Post, Put } from '@nestjs/common';
import { CurrentUser, Caller } from '../common/caller/caller';
import { API } from '../common/http/routes';
import { PaginationDto } from '../common/pagination/pagination.dto';
import { Input } from '../common/params/params';
import { BranchesService } from './branches.service';
import { CreateBranchDto, ProtectBranchDto } from './dto/branches.dto';
import { joinedPath } from './dto/path-param';
import { presentBranchView, presentDeletedBranch } from './repo-api.presenter';
import { ApiOkResponse } from '@nestjs/swagger';
import { ApiCreated, ApiPageResponse } from '../openapi/response-types';
import { BranchNameResponse, BranchResponse } from './repo-api.responses';
import { ProjectRef, ProjectRefParam } from '../common/params/refs';

@Controller(`${API}/projects/:id/repository/branches`)
export class BranchesController {
  constructor(private readonly branches: BranchesService) {}

  @ApiPageResponse(BranchResponse)
  @Get()
  async list(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Input() q: PaginationDto) {
    return (await this.branches.list(user, id, q)).map(presentBranchView);
  }

  @ApiCreated(BranchResponse)
  @Post()
  async create(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Input() dto: CreateBranchDto) {
    return presentBranchView(await this.branches.create(user, id, dto));
  }

  /** Branch names may contain `/`, sent raw or as `%2F`: the route takes the rest of the path. */
  @ApiOkResponse({ type: BranchResponse })
  @Get('*branch')
  async show(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Param('branch') branch: string | string[]) {
    return presentBranchView(await this.branches.get(user, id, joinedPath(branch)));
  }

  /** `PUT .../branches/:branch/protect` and `.../unprotect`. */
  @ApiOkResponse({ type: BranchResponse })
  @Put('*branch')
  async protect(
    @CurrentUser() user: Caller,
    @Param('id', ProjectRefParam) id: ProjectRef,
    @Param('branch') branch: string | string[],
    @Input() dto: ProtectBranchDto,
  ) {
    return presentBranchView(await this.branches.protection(user, id, joinedPath(branch), dto));
  }

  @ApiOkResponse({ type: BranchNameResponse })
  @Delete('*branch')
  async remove(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Param('branch') branch: string | string[]) {
    return presentDeletedBranch(await this.branches.remove(user, id, joinedPath(branch)));
  }
}
