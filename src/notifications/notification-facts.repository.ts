import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';

/** An issue or merge request as the notification rules and mails read it. */
export interface IssuableFacts {
  kind: 'issue' | 'merge_request';
  id: number;
  iid: number;
  projectId: number;
  title: string;
  description: string | null;
  authorId: number | null;
  assigneeId: number | null;
  confidential: boolean;
}

export interface NoteFacts {
  id: number;
  projectId: number;
  noteableType: string;
  noteableId: number;
  authorId: number | null;
  body: string;
  system: boolean;
}

export interface BuildFacts {
  id: number;
  projectId: number;
  name: string;
  stage: string;
  ref: string;
  sha: string;
  userId: number | null;
}

/** `@username` mentions in a text (GitLab's user reference pattern, without groups). */
export function mentionedUsernames(text: string | null | undefined): string[] {
  if (!text) return [];
  const out = new Set<string>();
  for (const m of text.matchAll(/(?:^|[^\w`])@([a-zA-Z0-9_][a-zA-Z0-9_.-]*[a-zA-Z0-9_-]|[a-zA-Z0-9_])/g)) out.add(m[1].toLowerCase());
  return [...out];
}

/**
 * The read-only facts the notification rules need from other areas' tables (issues, merge requests,
 * notes, subscriptions, label links, memberships, builds), in a bounded number of statements per
 * event. Reads only: no other area's rows are written here.
 */
@Injectable()
export class NotificationFactsRepository {
  constructor(private readonly db: DataSource) {}

  async issuable(kind: 'issue' | 'merge_request', id: number): Promise<IssuableFacts | null> {
    const table = kind === 'issue' ? 'issues' : 'merge_requests';
    const confidential = kind === 'issue' ? 'confidential' : 'false';
    const rows: Record<string, unknown>[] = await this.db.query(
      `SELECT id, iid, project_id, title, description, author_id, assignee_id, ${confidential} AS confidential
         FROM ${table} WHERE id = $1 AND deleted_at IS NULL`,
      [id],
    );
    const r = rows[0];
    if (!r) return null;
    return {
      kind,
      id: r.id as number,
      iid: r.iid as number,
      projectId: r.project_id as number,
      title: r.title as string,
      description: (r.description as string | null) ?? null,
      authorId: (r.author_id as number | null) ?? null,
      assigneeId: (r.assignee_id as number | null) ?? null,
      confidential: r.confidential === true,
    };
  }

  async note(id: number): Promise<NoteFacts | null> {
    const rows: Record<string, unknown>[] = await this.db.query(
      `SELECT id, project_id, noteable_type, noteable_id, author_id, body, system FROM notes WHERE id = $1`,
      [id],
    );
    const r = rows[0];
    if (!r) return null;
    return {
      id: r.id as number,
      projectId: r.project_id as number,
      noteableType: r.noteable_type as string,
      noteableId: r.noteable_id as number,
      authorId: (r.author_id as number | null) ?? null,
      body: r.body as string,
      system: r.system as boolean,
    };
  }

  /** Commenters of the issue or MR and the users mentioned in its description and comments (ids). */
  async participants(t: IssuableFacts): Promise<number[]> {
    const type = t.kind === 'issue' ? 'Issue' : 'MergeRequest';
    const notes: { author_id: number | null; body: string }[] = await this.db.query(
      `SELECT author_id, body FROM notes WHERE noteable_type = $1 AND noteable_id = $2 AND NOT system`,
      [type, t.id],
    );
    const names = new Set<string>([...mentionedUsernames(t.title), ...mentionedUsernames(t.description)]);
    for (const n of notes) for (const u of mentionedUsernames(n.body)) names.add(u);
    const ids = new Set<number>();
    if (t.authorId) ids.add(t.authorId);
    if (t.assigneeId) ids.add(t.assigneeId);
    for (const n of notes) if (n.author_id) ids.add(n.author_id);
    for (const id of await this.userIdsByUsername([...names])) ids.add(id);
    return [...ids];
  }

  async userIdsByUsername(names: string[]): Promise<number[]> {
    if (names.length === 0) return [];
    const rows: { id: number }[] = await this.db.query(`SELECT id FROM users WHERE lower(username) = ANY($1)`, [names]);
    return rows.map((r) => r.id);
  }

  /** Explicit subscriptions of the issue or MR: subscribed and unsubscribed users. */
  async subscriptions(t: IssuableFacts): Promise<{ subscribed: number[]; unsubscribed: number[] }> {
    const rows: { user_id: number; subscribed: boolean }[] = await this.db.query(
      `SELECT user_id, subscribed FROM subscriptions WHERE subscribable_type = $1 AND subscribable_id = $2`,
      [t.kind === 'issue' ? 'Issue' : 'MergeRequest', t.id],
    );
    return { subscribed: rows.filter((r) => r.subscribed).map((r) => r.user_id), unsubscribed: rows.filter((r) => !r.subscribed).map((r) => r.user_id) };
  }

  /** Subscribers of the labels on the issue or MR. */
  async labelSubscribers(t: IssuableFacts): Promise<number[]> {
    const rows: { user_id: number }[] = await this.db.query(
      `SELECT DISTINCT s.user_id FROM label_links ll
         JOIN subscriptions s ON s.subscribable_type = 'Label' AND s.subscribable_id = ll.label_id AND s.subscribed
        WHERE ll.target_type = $1 AND ll.target_id = $2`,
      [t.kind === 'issue' ? 'Issue' : 'MergeRequest', t.id],
    );
    return rows.map((r) => r.user_id);
  }

  /** The project's namespace and the members of the project and of its group, with users whose setting there is not `global`. */
  async projectAudience(projectId: number): Promise<{ namespaceId: number; members: number[] } | null> {
    const rows: { namespace_id: number; members: number[] | null }[] = await this.db.query(
      `SELECT p.namespace_id,
              ARRAY(SELECT user_id FROM project_members WHERE project_id = p.id
                    UNION SELECT user_id FROM group_members WHERE namespace_id = p.namespace_id) AS members
         FROM projects p WHERE p.id = $1`,
      [projectId],
    );
    return rows[0] ? { namespaceId: rows[0].namespace_id, members: rows[0].members ?? [] } : null;
  }

  /** The owner of the project's personal namespace (null for a group's project). */
  async personalOwner(projectId: number): Promise<number | null> {
    const rows: { owner_id: number | null }[] = await this.db.query(
      `SELECT n.owner_id FROM projects p JOIN namespaces n ON n.id = p.namespace_id AND n.kind = 'user' WHERE p.id = $1`,
      [projectId],
    );
    return rows[0]?.owner_id ?? null;
  }

  /** The direct and group memberships of `userIds` in a project (the policy's inputs), one query. */
  async memberships(projectId: number, namespaceId: number, userIds: number[]): Promise<Map<number, { pm: number | null; gm: number | null }>> {
    const out = new Map<number, { pm: number | null; gm: number | null }>();
    if (userIds.length === 0) return out;
    const rows: { user_id: number; pm: number | null; gm: number | null }[] = await this.db.query(
      `SELECT u.id AS user_id, pm.access_level AS pm, gm.access_level AS gm
         FROM unnest($3::int[]) AS u(id)
         LEFT JOIN project_members pm ON pm.project_id = $1 AND pm.user_id = u.id
         LEFT JOIN group_members gm ON gm.namespace_id = $2 AND gm.user_id = u.id`,
      [projectId, namespaceId, userIds],
    );
    for (const r of rows) out.set(r.user_id, { pm: r.pm, gm: r.gm });
    return out;
  }

  async build(id: number): Promise<BuildFacts | null> {
    const rows: Record<string, unknown>[] = await this.db.query(
      `SELECT cs.id, cs.project_id, cs.name, cs.stage, cs.ref, cs.sha, COALESCE(b.user_id, p.user_id) AS user_id
         FROM commit_statuses cs JOIN ci_builds b ON b.id = cs.id JOIN ci_pipelines p ON p.id = b.pipeline_id WHERE cs.id = $1`,
      [id],
    );
    const r = rows[0];
    if (!r) return null;
    return {
      id: r.id as number,
      projectId: r.project_id as number,
      name: r.name as string,
      stage: (r.stage as string) ?? '',
      ref: (r.ref as string) ?? '',
      sha: r.sha as string,
      userId: (r.user_id as number | null) ?? null,
    };
  }

  async key(id: number): Promise<{ id: number; userId: number; title: string } | null> {
    const rows: { id: number; user_id: number | null; title: string }[] = await this.db.query(`SELECT id, user_id, title FROM keys WHERE id = $1`, [id]);
    return rows[0]?.user_id ? { id: rows[0].id, userId: rows[0].user_id, title: rows[0].title } : null;
  }

  async email(id: number): Promise<{ id: number; userId: number; email: string } | null> {
    const rows: { id: number; user_id: number; email: string }[] = await this.db.query(`SELECT id, user_id, email FROM emails WHERE id = $1`, [id]);
    return rows[0] ? { id: rows[0].id, userId: rows[0].user_id, email: rows[0].email } : null;
  }
}
