import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { IssueRow, NoteRow, ProjectRow, UserRow } from './hook-payloads';
import { WebHook } from './web-hook.entity';

/**
 * Read-only loads of the rows that hook payloads describe (projects, users, issues, notes,
 * namespaces), each one parameterised statement. Payloads are built from plain rows, so the hooks
 * area depends on no other area's service.
 */
@Injectable()
export class HookDataRepository {
  constructor(@InjectRepository(WebHook) private readonly repo: Repository<WebHook>) {}

  async project(id: number): Promise<(ProjectRow & { namespaceKind: string; namespaceOwnerId: number | null; createdAt: Date; updatedAt: Date }) | null> {
    const rows = await this.repo.query<(ProjectRow & { namespaceKind: string; namespaceOwnerId: number | null; createdAt: Date; updatedAt: Date })[]>(
      `SELECT p.id, p.name, p.path, p.description, p.visibility_level AS "visibilityLevel", p.default_branch AS "defaultBranch",
              p.created_at AS "createdAt", p.updated_at AS "updatedAt",
              n.name AS "namespaceName", n.path AS "namespacePath", n.kind AS "namespaceKind", n.owner_id AS "namespaceOwnerId"
         FROM projects p JOIN namespaces n ON n.id = p.namespace_id WHERE p.id = $1`,
      [id],
    );
    return rows[0] ?? null;
  }

  async namespace(
    id: number,
  ): Promise<{ id: number; name: string; path: string; kind: string; ownerId: number | null; createdAt: Date; updatedAt: Date } | null> {
    const rows = await this.repo.query<{ id: number; name: string; path: string; kind: string; ownerId: number | null; createdAt: Date; updatedAt: Date }[]>(
      `SELECT id, name, path, kind, owner_id AS "ownerId", created_at AS "createdAt", updated_at AS "updatedAt" FROM namespaces WHERE id = $1`,
      [id],
    );
    return rows[0] ?? null;
  }

  /** Users by id, one query. */
  async users(ids: (number | null | undefined)[]): Promise<Map<number, UserRow & { createdAt: Date; updatedAt: Date }>> {
    const unique = [...new Set(ids.filter((i): i is number => typeof i === 'number'))];
    if (unique.length === 0) return new Map();
    const rows = await this.repo.query<(UserRow & { createdAt: Date; updatedAt: Date })[]>(
      `SELECT id, name, username, email, created_at AS "createdAt", updated_at AS "updatedAt" FROM users WHERE id = ANY($1)`,
      [unique],
    );
    return new Map(rows.map((r) => [r.id, r]));
  }

  async issue(id: number): Promise<IssueRow | null> {
    const rows = await this.repo.query<IssueRow[]>(
      `SELECT id, iid, title, description, state, confidential, author_id AS "authorId", assignee_id AS "assigneeId",
              milestone_id AS "milestoneId", project_id AS "projectId", position, created_at AS "createdAt", updated_at AS "updatedAt"
         FROM issues WHERE id = $1 AND deleted_at IS NULL`,
      [id],
    );
    return rows[0] ?? null;
  }

  async note(id: number): Promise<NoteRow | null> {
    const rows = await this.repo.query<NoteRow[]>(
      `SELECT id, body, noteable_type AS "noteableType", noteable_id AS "noteableId", author_id AS "authorId", project_id AS "projectId",
              system, attachment, created_at AS "createdAt", updated_at AS "updatedAt"
         FROM notes WHERE id = $1`,
      [id],
    );
    return rows[0] ?? null;
  }

  async snippet(id: number): Promise<Record<string, unknown> | null> {
    const rows = await this.repo.query<Record<string, unknown>[]>(
      `SELECT id, title, content, author_id, project_id, created_at, updated_at, file_name, expires_at, 'ProjectSnippet' AS type,
              visibility_level FROM snippets WHERE id = $1`,
      [id],
    );
    return rows[0] ?? null;
  }
}
