import { PresentContext, presentAuthor } from '../users/users.presenter';
import { presentNote } from '../notes/notes.presenter';
import { Event } from './event.entity';
import { EventFeed, EventRow } from './events.service';
import { Paginated } from '../common/pagination/pagination';
import { EventResponse } from './events.responses';
import type { Caller } from '../common/caller/caller';

/** GitLab's `Event#action_name`. */
export function actionName(e: Event): string {
  switch (e.action) {
    case 'pushed': {
      const d = e.data as { before?: string; after?: string } | null;
      if (d?.before && /^0+$/.test(d.before)) return 'pushed new';
      if (d?.after && /^0+$/.test(d.after)) return 'deleted';
      return 'pushed to';
    }
    case 'closed':
      return 'closed';
    case 'merged':
      return 'accepted';
    case 'joined':
      return 'joined';
    case 'left':
      return 'left';
    case 'destroyed':
      return 'destroyed';
    case 'commented':
      return 'commented on';
    case 'imported':
      return 'imported';
    case 'created':
      return e.targetType ? 'opened' : 'created';
    default:
      return 'opened';
  }
}

export function presentEvent(row: EventRow, viewer: Caller | undefined, ctx: PresentContext): EventResponse {
  const { event: e, author } = row;
  return {
    title: e.title,
    project_id: e.projectId,
    action_name: actionName(e),
    target_id: e.targetId,
    target_type: e.targetType,
    author_id: e.authorId,
    data: e.data,
    target_title: e.targetTitle,
    created_at: e.createdAt,
    ...(row.note ? { note: presentNote(row.note.note, row.note.author, viewer, ctx) } : {}),
    ...(author ? { author: presentAuthor(author, viewer, ctx), author_username: author.username } : {}),
  };
}

/** A page of a feed. */
export function presentFeed(feed: EventFeed, viewer: Caller | undefined): Paginated<EventResponse> {
  return feed.page.map((row) => presentEvent(row, viewer, feed.ctx));
}
