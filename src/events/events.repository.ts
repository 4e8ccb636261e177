import { Tx } from '../database/transactions';
import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { PageRequest } from '../common/pagination/pagination';
import { confidentialIssueSql } from '../common/policy/visibility';
import { Note, NoteableType } from '../notes/note.entity';
import { Event, EventAction } from './event.entity';
import { EventVisibility } from './event-policy';

export interface NewEventRow {
  projectId: number;
  authorId: number | null;
  action: EventAction;
  targetId: number | null;
  targetType: string | null;
  targetTitle: string | null;
  title: string | null;
  data: Record<string, unknown> | null;
}

/** An event of the feed with the note it refers to (comment events). */
export interface FeedRow {
  event: Event;
  note: Note | null;
}

interface RawFeedRow {
  id: number;
  project_id: number | null;
  author_id: number | null;
  action: EventAction;
  target_id: number | null;
  target_type: string | null;
  target_title: string | null;
  title: string | null;
  data: Record<string, unknown> | null;
  created_at: Date;
  updated_at: Date;
  total: string;
  note_id: number | null;
  note_project_id: number | null;
  note_noteable_type: NoteableType | null;
  note_noteable_id: number | null;
  note_author_id: number | null;
  note_body: string | null;
  note_system: boolean | null;
  note_attachment: string | null;
  note_created_at: Date | null;
  note_updated_at: Date | null;
}

/**
 * The target joins and the visibility condition of a feed ($1 project, $2..$10 the caller's
 * EventVisibility). An issue event or an issue comment needs `read_issue` and, for a confidential
 * issue, the one rule of common/policy/visibility.ts (`confidentialIssueSql`); see event-policy.ts for every kind.
 */
const FEED_FROM = `
  FROM events e
  LEFT JOIN issues i ON e.target_type = 'Issue' AND i.id = e.target_id
  LEFT JOIN notes nt ON e.target_type = 'Note' AND nt.id = e.target_id
  LEFT JOIN issues ni ON nt.noteable_type = 'Issue' AND ni.id = nt.noteable_id
  LEFT JOIN snippets ns ON nt.noteable_type = 'Snippet' AND ns.id = nt.noteable_id
 WHERE e.project_id = $1
   AND coalesce(CASE e.target_type
     WHEN 'Issue' THEN $3::boolean AND i.id IS NOT NULL
       AND ${confidentialIssueSql('i', '$2::int', '$4::boolean')}
     WHEN 'Note' THEN $5::boolean AND nt.id IS NOT NULL AND CASE nt.noteable_type
       WHEN 'Issue' THEN $3::boolean AND ni.id IS NOT NULL
         AND ${confidentialIssueSql('ni', '$2::int', '$4::boolean')}
       WHEN 'Snippet' THEN $6::boolean AND ns.id IS NOT NULL
         AND ($7::boolean OR ns.visibility_level = ANY($8::int[]) OR ns.author_id = $2::int)
       WHEN 'MergeRequest' THEN $10::boolean
       ELSE FALSE END
     WHEN 'Milestone' THEN $9::boolean
     WHEN 'MergeRequest' THEN $10::boolean
     ELSE TRUE END, FALSE)`;

function feedParams(projectId: number, v: EventVisibility): unknown[] {
  return [
    projectId,
    v.viewerId,
    v.readIssue,
    v.allConfidential,
    v.readNote,
    v.readSnippet,
    v.allSnippets,
    v.snippetLevels,
    v.readMilestone,
    v.readMergeRequest,
  ];
}

/** Every query on `events`. */
@Injectable()
export class EventsRepository {
  constructor(@InjectRepository(Event) private readonly events: Repository<Event>) {}

  /** Inserts the events (in `tx` when given): one statement. */
  async insert(rows: NewEventRow[], tx?: Tx): Promise<void> {
    const repo = tx ? tx.getRepository(Event) : this.events;
    await repo.insert(rows.map((r) => ({ ...r, data: r.data as never })));
  }

  /**
   * A page of a project's feed that the caller may see, newest first, with the notes of comment
   * events and the total (window count): one statement (a second, counting one, only for a page past the end).
   */
  async feed(projectId: number, v: EventVisibility, page: PageRequest): Promise<[FeedRow[], number]> {
    const params = feedParams(projectId, v);
    const rows: RawFeedRow[] = await this.events.query(
      `SELECT e.id, e.project_id, e.author_id, e.action, e.target_id, e.target_type, e.target_title, e.title, e.data,
              e.created_at, e.updated_at, count(*) OVER () AS total,
              nt.id AS note_id, nt.project_id AS note_project_id, nt.noteable_type AS note_noteable_type,
              nt.noteable_id AS note_noteable_id, nt.author_id AS note_author_id, nt.body AS note_body,
              nt.system AS note_system, nt.attachment AS note_attachment, nt.created_at AS note_created_at,
              nt.updated_at AS note_updated_at
       ${FEED_FROM}
        ORDER BY e.id DESC LIMIT $11 OFFSET $12`,
      [...params, page.perPage, page.offset],
    );
    let total: number;
    if (rows.length) total = Number(rows[0].total);
    else if (page.offset === 0) total = 0;
    else total = Number((await this.events.query<{ n: string }[]>(`SELECT count(*) AS n ${FEED_FROM}`, params))[0].n);
    return [rows.map((r) => ({ event: this.toEvent(r), note: this.toNote(r) })), total];
  }

  private toEvent(r: RawFeedRow): Event {
    return this.events.create({
      id: r.id,
      projectId: r.project_id,
      authorId: r.author_id,
      action: r.action,
      targetId: r.target_id,
      targetType: r.target_type,
      targetTitle: r.target_title,
      title: r.title,
      data: r.data,
      createdAt: r.created_at,
      updatedAt: r.updated_at,
    });
  }

  private toNote(r: RawFeedRow): Note | null {
    if (r.note_id === null || r.action !== 'commented') return null;
    return Object.assign(new Note(), {
      id: r.note_id,
      projectId: r.note_project_id as number,
      noteableType: r.note_noteable_type as NoteableType,
      noteableId: r.note_noteable_id as number,
      authorId: r.note_author_id,
      body: r.note_body as string,
      system: r.note_system as boolean,
      attachment: r.note_attachment,
      createdAt: r.note_created_at as Date,
      updatedAt: r.note_updated_at as Date,
    });
  }
}
