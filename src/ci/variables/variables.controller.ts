import { Controller, Delete, Get, Param, Post, Put } from '@nestjs/common';
import { CurrentUser, Caller } from '../../common/caller/caller';
import { API } from '../../common/http/routes';
import { PaginationDto } from '../../common/pagination/pagination.dto';
import { Input } from '../../common/params/params';
import { CreateVariableDto, UpdateVariableDto } from './dto/variables.dto';
import { presentVariable } from './variables.presenter';
import { VariablesService } from './variables.service';
import { ApiOkResponse } from '@nestjs/swagger';
import { ApiCreated, ApiPageResponse } from '../../openapi/response-types';
import { VariableResponse } from './variables.responses';
import { ProjectRef, ProjectRefParam } from '../../common/params/refs';

@Controller(`${API}/projects/:id/variables`)
export class VariablesController {
  constructor(private readonly variables: VariablesService) {}

  @ApiPageResponse(VariableResponse)
  @Get()
  async list(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Input() q: PaginationDto) {
    return (await this.variables.list(user, id, q)).map(presentVariable);
  }

  @ApiOkResponse({ type: VariableResponse })
  @Get(':key')
  async show(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Param('key') key: string) {
    return presentVariable(await this.variables.get(user, id, key));
  }

  @ApiCreated(VariableResponse)
  @Post()
  async create(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Input() dto: CreateVariableDto) {
    return presentVariable(await this.variables.create(user, id, dto));
  }

  @ApiOkResponse({ type: VariableResponse })
  @Put(':key')
  async update(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Param('key') key: string, @Input() dto: UpdateVariableDto) {
    return presentVariable(await this.variables.update(user, id, key, dto));
  }

  @ApiOkResponse({ type: VariableResponse })
  @Delete(':key')
  async remove(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Param('key') key: string) {
    return presentVariable(await this.variables.remove(user, id, key));
  }
}
