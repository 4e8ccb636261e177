import { Tx } from '../database/transactions';
import { Injectable } from '@nestjs/common';
import { ActivityRecord, DomainEventCatalogue, DomainEventMeta, OnDomainEvent } from '../domain-events/domain-events';
import { Paginated, pageRequest } from '../common/pagination/pagination';
import { Note } from '../notes/note.entity';
import { ProjectRecordsService } from '../projects/project-records.service';
import { ProjectResolver } from '../projects/project-resolver.service';
import { ProjectViews } from '../projects/project-views.service';
import { User } from '../users/user.entity';
import { UserDirectory } from '../users/user-directory.service';
import { PresentContext } from '../users/users.presenter';
import { ListEventsDto } from './dto/list-events.dto';
import { Event } from './event.entity';
import { eventVisibility } from './event-policy';
import { EventsRepository } from './events.repository';
import { ProjectRef } from '../common/params/refs';
import type { Caller } from '../common/caller/caller';

export interface EventRow {
  event: Event;
  author: User | null;
  /** The comment, for `commented` events. */
  note?: { note: Note; author: User | null };
}

/** A page of a feed with what its presenter needs. */
export interface EventFeed {
  page: Paginated<EventRow>;
  ctx: PresentContext;
}

export type NewEvent = ActivityRecord;

/**
 * The activity feed. Areas do not call it: they emit `activity.recorded` (domain-events/), which this
 * service records in the emitter's transaction (`emit(tx, …)`: part of the change) or, for a change
 * already committed (`emitCommitted`), in a transaction of its own whose failure is logged and never
 * undoes the change it describes. Feeds show only the events whose targets the caller may read
 * (event-policy.ts), filtered in SQL.
 */
@Injectable()
export class EventsService {
  constructor(
    private readonly events: EventsRepository,
    private readonly users: UserDirectory,
    private readonly projects: ProjectResolver,
    private readonly views: ProjectViews,
    private readonly projectRecords: ProjectRecordsService,
  ) {}

  /** Records the activity in the emitter's transaction (see domain-events.ts, `inTransaction`). */
  @OnDomainEvent('activity.recorded', { inTransaction: true })
  async onActivity(e: DomainEventCatalogue['activity.recorded'], meta: DomainEventMeta<'activity.recorded'>): Promise<void> {
    if (e.events.length) await this.insert(e.events, meta.tx);
  }

  /** The events' rows, then their projects' `last_activity_at` (the projects area's): two statements, in `tx` when given. */
  private async insert(events: NewEvent[], tx?: Tx): Promise<void> {
    const rows = events.map(eventRow);
    await this.events.insert(rows, tx);
    await this.projectRecords.touchActivity([...new Set(rows.map((r) => r.projectId))], tx);
  }

  /** `GET /projects/:id/events`: newest first, what the caller may see; the resolver's query, the page, the authors. */
  async projectFeed(user: Caller | undefined, ref: ProjectRef, q: ListEventsDto): Promise<EventFeed> {
    const { project, access, abilities } = await this.projects.resolve(user, ref, 'read_project');
    const page = pageRequest(q);
    const [[rows, total], ctx] = await Promise.all([this.events.feed(project.id, eventVisibility(user, abilities, access), page), this.views.context()]);
    const authors = await this.users.byIds(rows.flatMap((r) => [r.event.authorId, r.note?.authorId]));
    const author = (id: number | null | undefined) => (id ? (authors.get(id) ?? null) : null);
    return {
      page: new Paginated(
        rows.map(({ event, note }) => ({
          event,
          author: author(event.authorId),
          note: note ? { note, author: author(note.authorId) } : undefined,
        })),
        total,
        page,
      ),
      ctx,
    };
  }
}

function eventRow(e: NewEvent) {
  return {
    projectId: e.projectId,
    authorId: e.authorId,
    action: e.action,
    targetId: e.targetId ?? null,
    targetType: e.targetType ?? null,
    targetTitle: e.targetTitle ?? null,
    title: e.title ?? null,
    data: e.data ?? null,
  };
}
