import { StreamableFile } from '@nestjs/common';
import { presentAuthor } from '../users/users.presenter';
import { User } from '../users/user.entity';
import { PresentContext } from '../users/users.presenter';
import { Snippet } from './snippet.entity';
import { SnippetRecordResponse, SnippetResponse } from './snippets.responses';
import type { Caller } from '../common/caller/caller';

/** GitLab's ProjectSnippet entity (keys in its order). */
export function presentSnippet(s: Snippet, author: User | null | undefined, viewer: Caller | undefined, ctx: PresentContext): SnippetResponse {
  return {
    id: s.id,
    title: s.title,
    file_name: s.fileName,
    author: presentAuthor(author, viewer, ctx),
    updated_at: s.updatedAt,
    created_at: s.createdAt,
    expires_at: s.expiresAt,
  };
}

/** The DELETE answer: the snippet record, or no body when nothing was deleted. */
export function presentSnippetRecord(s: Snippet | undefined): SnippetRecordResponse | undefined {
  if (!s) return undefined;
  return {
    id: s.id,
    title: s.title,
    content: s.content,
    author_id: s.authorId,
    project_id: s.projectId,
    created_at: s.createdAt,
    updated_at: s.updatedAt,
    file_name: s.fileName,
    expires_at: s.expiresAt,
    type: 'ProjectSnippet',
    visibility_level: s.visibilityLevel,
  };
}

/** The raw content: `text/plain` in UTF-8 with its length (the route adds `X-Content-Type-Options: nosniff`). */
export function presentSnippetRaw(s: Snippet): StreamableFile {
  const body = Buffer.from(s.content, 'utf8');
  return new StreamableFile(body, { type: 'text/plain; charset=utf-8', length: body.length });
}
