import { User } from '../users/user.entity';
import { PresentContext, presentUserBasic } from '../users/users.presenter';
import { Note } from './note.entity';

/**
 * An author object (spec-decisions 18): the user summary plus `created_at`, and `email` only when
 * the viewer is an administrator. Used for note, issue and snippet authors.
 */
export function presentAuthor(u: User | null | undefined, viewer: User | undefined, ctx: PresentContext) {
  if (!u) return null;
  return { ...presentUserBasic(u, ctx), created_at: u.createdAt, ...(viewer?.admin ? { email: u.email } : {}) };
}

const UPVOTE = /^(?:\+1|:\+1:|:thumbsup:)$/;
const DOWNVOTE = /^(?:-1|:-1:|:thumbsdown:)$/;

/** Award notes: a body of just `+1` / `-1` (or the emoji spelling) is a vote. */
export function isUpvote(n: Note): boolean {
  return !n.system && UPVOTE.test(n.body.trim());
}

export function isDownvote(n: Note): boolean {
  return !n.system && DOWNVOTE.test(n.body.trim());
}

/** GitLab's Note entity, keys in its order. */
export function presentNote(n: Note, author: User | null | undefined, viewer: User | undefined, ctx: PresentContext) {
  return {
    id: n.id,
    body: n.body,
    attachment: n.attachment,
    author: presentAuthor(author, viewer, ctx),
    created_at: n.createdAt,
    updated_at: n.updatedAt,
    system: n.system,
    noteable_id: n.noteableId,
    noteable_type: n.noteableType,
    upvote: isUpvote(n),
    downvote: isDownvote(n),
  };
}

/** The legacy merge request comment (GitLab's MRNote entity): `{note, author}`. */
export function presentComment(n: Note, author: User | null | undefined, ctx: PresentContext) {
  return { note: n.body, author: author ? presentUserBasic(author, ctx) : null };
}
