import type { UserSummary } from '../users/users.presenter';
import { PresentContext, presentAuthor } from '../users/users.presenter';
import { Note } from './note.entity';
import { MergeRequestCommentResponse, NoteResponse } from './notes.responses';
import type { Caller } from '../common/caller/caller';

/** The author object lives with the user views; re-exported for the areas that import it from here. */
export { presentAuthor };

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
export function presentNote(n: Note, author: UserSummary | null | undefined, viewer: Caller | undefined, ctx: PresentContext): NoteResponse {
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

/** The legacy merge request comment (GitLab's MRNote entity): `{note, author}`, the author like every other. */
export function presentComment(n: Note, author: UserSummary | null | undefined, viewer: Caller | undefined, ctx: PresentContext): MergeRequestCommentResponse {
  return { note: n.body, author: presentAuthor(author, viewer, ctx) };
}
