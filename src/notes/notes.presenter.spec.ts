import { User } from '../users/user.entity';
import { Note } from './note.entity';
import { presentNote } from './notes.presenter';

/** GitLab 8.8's Note entity (../shared/docs/gitlab-compat.md §2.8). */
const NOTE = ['id', 'body', 'attachment', 'author', 'created_at', 'updated_at', 'system', 'noteable_id', 'noteable_type', 'upvote', 'downvote'];

const ctx = { externalUrl: 'https://git.example.com', gravatarEnabled: false };
const author = { id: 7, username: 'alice', name: 'Alice', email: 'a@example.com', state: 'active', createdAt: new Date(0), admin: false } as unknown as User;
const note = (body: string, system = false) =>
  ({ id: 1, body, attachment: null, noteableId: 3, noteableType: 'Issue', system, createdAt: new Date(0), updatedAt: new Date(0) }) as unknown as Note;

describe('notes presenter', () => {
  it('keeps GitLab 8.8 key order', () => {
    expect(Object.keys(presentNote(note('hi'), author, author, ctx))).toEqual(NOTE);
  });

  it('award notes: +1 / -1 bodies are votes, system notes never are', () => {
    expect(presentNote(note('+1'), author, author, ctx)).toMatchObject({ upvote: true, downvote: false });
    expect(presentNote(note(':thumbsdown:'), author, author, ctx)).toMatchObject({ upvote: false, downvote: true });
    expect(presentNote(note('+1', true), author, author, ctx)).toMatchObject({ upvote: false, downvote: false });
    expect(presentNote(note('+1 agreed'), author, author, ctx).upvote).toBe(false);
  });

  it('a deleted author is null', () => {
    expect(presentNote(note('hi'), null, author, ctx).author).toBeNull();
  });
});
