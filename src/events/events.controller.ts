import { Controller, Get, Param } from '@nestjs/common';
import { CurrentUser, Caller } from '../common/caller/caller';
import { API } from '../common/http/routes';
import { Input } from '../common/params/params';
import { ListEventsDto } from './dto/list-events.dto';
import { presentFeed } from './events.presenter';
import { EventsService } from './events.service';
import { ApiPageResponse } from '../openapi/response-types';
import { EventResponse } from './events.responses';
import { ProjectRef, ProjectRefParam } from '../common/params/refs';

@Controller(API)
export class EventsController {
  constructor(private readonly events: EventsService) {}

  /** A project's activity, newest first: only events whose targets the caller may read. */
  @ApiPageResponse(EventResponse)
  @Get('projects/:id/events')
  async projectEvents(@CurrentUser() user: Caller, @Param('id', ProjectRefParam) id: ProjectRef, @Input() q: ListEventsDto) {
    return presentFeed(await this.events.projectFeed(user, id, q), user);
  }
}
