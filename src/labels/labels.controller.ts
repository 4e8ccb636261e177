import { Controller, Delete, Get, Param, Post, Put } from '@nestjs/common';
import { CurrentUser, Caller } from '../common/caller/caller';
import { API } from '../common/http/routes';
import { PaginationDto } from '../common/pagination/pagination.dto';
import { IdOrName, IdOrNameParam, Input } from '../common/params/params';
import { CreateLabelDto, DeleteLabelDto, UpdateLabelDto } from './dto/label.dto';
import { presentLabel, presentLabelRecord } from './labels.presenter';
import { LabelsService } from './labels.service';
import { ApiOkResponse } from '@nestjs/swagger';
import { ApiCreated, ApiNotModified, ApiPageResponse } from '../openapi/response-types';
import { LabelRecordResponse, LabelResponse } from './labels.responses';
import { ProjectRef, ProjectRefParam } from '../common/params/refs';

@Controller(`${API}/projects/:id/labels`)
export class LabelsController {
  constructor(private readonly labels: LabelsService) {}

  /** Paged like every list, the whole list on the first page by default (GitLab answered it whole), title ascending. */
  @ApiPageResponse(LabelResponse)
  @Get()
  async list(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Input() q: PaginationDto) {
    return (await this.labels.list(user, id, q)).map(presentLabel);
  }

  @ApiCreated(LabelResponse)
  @Post()
  async create(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Input() dto: CreateLabelDto) {
    return presentLabel(await this.labels.create(user, id, dto));
  }

  @ApiOkResponse({ type: LabelResponse })
  @Put()
  async update(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Input() dto: UpdateLabelDto) {
    return presentLabel(await this.labels.update(user, id, dto));
  }

  @ApiOkResponse({ type: LabelRecordResponse })
  @Delete()
  async remove(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Input() dto: DeleteLabelDto) {
    return presentLabelRecord(await this.labels.remove(user, id, dto));
  }

  @ApiCreated(LabelResponse)
  @ApiNotModified()
  @Post(':labelId/subscription')
  async subscribe(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Param('labelId', IdOrNameParam) labelId: IdOrName) {
    return presentLabel(await this.labels.setSubscription(user, id, labelId, true));
  }

  @ApiOkResponse({ type: LabelResponse })
  @ApiNotModified()
  @Delete(':labelId/subscription')
  async unsubscribe(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Param('labelId', IdOrNameParam) labelId: IdOrName) {
    return presentLabel(await this.labels.setSubscription(user, id, labelId, false));
  }
}
