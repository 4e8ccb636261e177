import { Milestone } from '../milestones/milestone.entity';
import { presentMilestone } from '../milestones/milestones.presenter';
import { User } from '../users/user.entity';
import { Issue } from './issue.entity';
import { presentIssue, presentIssueRecord } from './issues.presenter';

/** GitLab 8.8's Issue and Milestone entities (gitlab-compat.md §2.5, §2.6). */
const ISSUE = [
  'id',
  'iid',
  'project_id',
  'title',
  'description',
  'state',
  'created_at',
  'updated_at',
  'labels',
  'milestone',
  'assignee',
  'author',
  'subscribed',
  'user_notes_count',
];
const MILESTONE = ['id', 'iid', 'project_id', 'title', 'description', 'state', 'created_at', 'updated_at', 'due_date'];

const ctx = { externalUrl: 'https://git.example.com', gravatarEnabled: false };
const author = { id: 7, username: 'alice', name: 'Alice', email: 'a@example.com', state: 'active', createdAt: new Date(0), admin: false } as unknown as User;
const admin = { ...author, id: 1, admin: true };
const milestone = {
  id: 2,
  iid: 1,
  projectId: 5,
  title: 'v1',
  description: '',
  state: 'active',
  createdAt: new Date(0),
  updatedAt: new Date(0),
  dueDate: '2016-06-01',
} as unknown as Milestone;
const issue = (state: string) =>
  ({
    id: 3,
    iid: 1,
    projectId: 5,
    title: 'Bug',
    description: null,
    state,
    confidential: false,
    authorId: 7,
    assigneeId: null,
    milestoneId: 2,
    movedToId: null,
    position: null,
    createdAt: new Date(0),
    updatedAt: new Date(0),
    deletedAt: null,
  }) as unknown as Issue;
const extras = { labels: ['bug'], milestone, assignee: null, author, subscribed: true, userNotesCount: 0 };

describe('issues presenter', () => {
  it('Issue and its Milestone keep GitLab 8.8 key order', () => {
    const p = presentIssue(issue('opened'), extras, author, ctx);
    expect(Object.keys(p)).toEqual(ISSUE);
    expect(Object.keys(p.milestone!)).toEqual(MILESTONE);
    expect(Object.keys(presentMilestone(milestone))).toEqual(MILESTONE);
  });

  it('the author is the summary plus created_at, with email only for administrator viewers', () => {
    expect(Object.keys(presentIssue(issue('opened'), extras, author, ctx).author!)).toEqual([
      'name',
      'username',
      'id',
      'state',
      'avatar_url',
      'web_url',
      'created_at',
    ]);
    expect(presentIssue(issue('opened'), extras, admin, ctx).author).toHaveProperty('email', 'a@example.com');
  });

  it('a reopened issue reads opened (spec-decisions 8)', () => {
    expect(presentIssue(issue('reopened'), extras, author, ctx).state).toBe('opened');
    expect(presentIssue(issue('closed'), extras, author, ctx).state).toBe('closed');
  });

  it('the DELETE record', () => {
    expect(Object.keys(presentIssueRecord(issue('closed')))).toEqual([
      'id',
      'iid',
      'project_id',
      'title',
      'description',
      'state',
      'confidential',
      'author_id',
      'assignee_id',
      'milestone_id',
      'moved_to_id',
      'position',
      'created_at',
      'updated_at',
      'deleted_at',
    ]);
  });
});
