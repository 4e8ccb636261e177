import { presentAuthor } from '../notes/notes.presenter';
import { User } from '../users/user.entity';
import { PresentContext } from '../users/users.presenter';
import { Snippet } from './snippet.entity';

/** GitLab's ProjectSnippet entity (keys in its order). */
export function presentSnippet(s: Snippet, author: User | null | undefined, viewer: User | undefined, ctx: PresentContext) {
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

/** The DELETE answer: the snippet record. */
export function presentSnippetRecord(s: Snippet) {
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
