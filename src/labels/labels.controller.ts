import { Controller, Delete, Get, Param, Post, Put } from '@nestjs/common';
import { CurrentUser } from '../common/auth/decorators';
import { API } from '../common/http/routes';
import { PaginationDto } from '../common/pagination/pagination.dto';
import { Input } from '../common/params/params';
import { User } from '../users/user.entity';
import { CreateLabelDto, DeleteLabelDto, UpdateLabelDto } from './dto/label.dto';
import { presentLabel, presentLabelRecord } from './labels.presenter';
import { LabelsService } from './labels.service';

@Controller(`${API}/projects/:id/labels`)
export class LabelsController {
  constructor(private readonly labels: LabelsService) {}

  /** Paged like every list, the whole list on the first page by default (GitLab answered it whole), title ascending. */
  @Get()
  async list(@CurrentUser() user: User, @Param('id') id: string, @Input() q: PaginationDto) {
    return (await this.labels.list(user, id, q)).map(presentLabel);
  }

  @Post()
  async create(@CurrentUser() user: User, @Param('id') id: string, @Input() dto: CreateLabelDto) {
    return presentLabel(await this.labels.create(user, id, dto));
  }

  @Put()
  async update(@CurrentUser() user: User, @Param('id') id: string, @Input() dto: UpdateLabelDto) {
    return presentLabel(await this.labels.update(user, id, dto));
  }

  @Delete()
  async remove(@CurrentUser() user: User, @Param('id') id: string, @Input() dto: DeleteLabelDto) {
    return presentLabelRecord(await this.labels.remove(user, id, dto));
  }

  @Post(':labelId/subscription')
  async subscribe(@CurrentUser() user: User, @Param('id') id: string, @Param('labelId') labelId: string) {
    return presentLabel(await this.labels.setSubscription(user, id, labelId, true));
  }

  @Delete(':labelId/subscription')
  async unsubscribe(@CurrentUser() user: User, @Param('id') id: string, @Param('labelId') labelId: string) {
    return presentLabel(await this.labels.setSubscription(user, id, labelId, false));
  }
}
