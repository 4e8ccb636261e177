import { Injectable } from '@nestjs/common';
import { DataSource, In } from 'typeorm';
import { Logger } from '../common/http/logger';
import { Paginated, PageRequest } from '../common/pagination/pagination';
import { Note } from '../notes/note.entity';
import { User } from '../users/user.entity';
import { Event, EventAction } from './event.entity';

export interface EventRow {
  event: Event;
  author: User | null;
  /** The comment, for `commented` events. */
  note?: { note: Note; author: User | null };
}

export interface NewEvent {
  projectId: number;
  authorId: number | null;
  action: EventAction;
  targetId?: number | null;
  targetType?: string | null;
  targetTitle?: string | null;
  title?: string | null;
  data?: Record<string, unknown> | null;
}

/**
 * The activity feed. Other areas call `record` after their transaction commits; a failure to record
 * is logged and never undoes the change it describes.
 */
@Injectable()
export class EventsService {
  constructor(
    private readonly ds: DataSource,
    private readonly logger: Logger,
  ) {}

  async record(...events: NewEvent[]): Promise<void> {
    if (events.length === 0) return;
    try {
      await this.ds.getRepository(Event).insert(
        events.map((e) => ({
          projectId: e.projectId,
          authorId: e.authorId,
          action: e.action,
          targetId: e.targetId ?? null,
          targetType: e.targetType ?? null,
          targetTitle: e.targetTitle ?? null,
          title: e.title ?? null,
          data: (e.data ?? null) as never,
        })),
      );
      const projectIds = [...new Set(events.map((e) => e.projectId))];
      await this.ds.query(`UPDATE projects SET last_activity_at = now() WHERE id = ANY($1)`, [projectIds]);
    } catch (e) {
      this.logger.error('event not recorded', { error: e instanceof Error ? e.message : String(e) });
    }
  }

  /** A project's events, newest first, with their authors and, for comments, the note: at most 5 queries. */
  async listForProject(projectId: number, page: PageRequest): Promise<Paginated<EventRow>> {
    const [events, total] = await this.ds.getRepository(Event).findAndCount({
      where: { projectId },
      order: { id: 'DESC' },
      skip: page.offset,
      take: page.perPage,
    });
    const authorIds = [...new Set(events.map((e) => e.authorId).filter((id): id is number => id !== null))];
    const noteIds = events.filter((e) => e.action === 'commented' && e.targetType === 'Note' && e.targetId).map((e) => e.targetId as number);
    const notes = noteIds.length ? await this.ds.getRepository(Note).findBy({ id: In(noteIds) }) : [];
    const noteById = new Map(notes.map((n) => [n.id, n]));
    for (const n of notes) if (n.authorId) authorIds.push(n.authorId);
    const authors = authorIds.length ? await this.ds.getRepository(User).findBy({ id: In([...new Set(authorIds)]) }) : [];
    const byId = new Map(authors.map((a) => [a.id, a]));
    return new Paginated(
      events.map((event) => {
        const note = event.targetId && event.targetType === 'Note' ? noteById.get(event.targetId) : undefined;
        return {
          event,
          author: event.authorId ? byId.get(event.authorId) ?? null : null,
          note: note ? { note, author: note.authorId ? byId.get(note.authorId) ?? null : null } : undefined,
        };
      }),
      total,
      page,
    );
  }
}
