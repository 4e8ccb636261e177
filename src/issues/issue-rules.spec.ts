import { toDto } from '../common/dto/validation.pipe';
import { ProjectAbility, ProjectAccess } from '../common/policy/policy';
import { CreateIssueDto, ListProjectIssuesDto, MoveIssueDto, UpdateIssueDto } from './dto/issue.dto';
import { readableIssuesInProject, seesConfidentialIssues } from '../common/policy/visibility';
import { canReadIssue } from '../common/policy/issue-policy';
import { issueOrder, issueStates } from './issue-rules';

const err = (fn: () => unknown) => {
  try {
    fn();
  } catch (e) {
    return (e as { body(): unknown }).body();
  }
  throw new Error('no error');
};

const access = (level: number): ProjectAccess => ({ level, projectMember: null, groupMember: null, namespaceOwner: false });
const member = { id: 1, admin: false, external: false };
const outsider = { id: 2, admin: false, external: false };
const admin = { id: 3, admin: true, external: false };
const read = new Set<ProjectAbility>(['read_project', 'read_issue']);

describe('issue DTOs', () => {
  it('reads create inputs as GitLab clients send them', () => {
    const dto = toDto(CreateIssueDto, {
      title: 'T',
      confidential: 'true',
      labels: 'a, b,,c',
      assignee_id: '',
      milestone_id: '0',
      created_at: '2014-01-01T00:00:00Z',
      project_id: 5, // python-gitlab adds it: dropped
    });
    expect(dto).toEqual({
      title: 'T',
      confidential: true,
      labels: ['a', 'b', 'c'],
      assignee_id: null,
      milestone_id: null,
      created_at: new Date('2014-01-01T00:00:00Z'),
    });
    expect(toDto(CreateIssueDto, { title: 'T', assignee_id: '7' }).assignee_id).toBe(7);
    expect(err(() => toDto(CreateIssueDto, {}))).toEqual({ message: '400 (Bad request) "title" not given' });
    expect(err(() => toDto(CreateIssueDto, { title: 'a\u0000b' }))).toEqual({ message: '400 (Bad request) "title" is invalid' });
    expect(err(() => toDto(CreateIssueDto, { title: 'x', assignee_id: 99999999999 }))).toEqual({ message: '400 (Bad request) "assignee_id" is invalid' });
    expect(err(() => toDto(CreateIssueDto, { title: 'x', assignee_id: -1 }))).toEqual({ message: '400 (Bad request) "assignee_id" is invalid' });
    expect(err(() => toDto(CreateIssueDto, { title: 'x', created_at: 'yesterday' }))).toEqual({ message: '400 (Bad request) "created_at" is invalid' });
  });

  it('keeps absent update fields absent and checks state_event', () => {
    expect(toDto(UpdateIssueDto, { title: null, description: '' })).toEqual({ description: '' });
    expect(toDto(UpdateIssueDto, { state_event: 'close' }).state_event).toBe('close');
    expect(err(() => toDto(UpdateIssueDto, { state_event: 'merge' }))).toEqual({ message: '400 (Bad request) "state_event" is invalid' });
  });

  it('lists: iid in range, order_by known; move needs to_project_id', () => {
    expect(toDto(ListProjectIssuesDto, { iid: ['1', '2'], labels: 'x', per_page: 'abc' })).toMatchObject({ iid: [1, 2], labels: ['x'] });
    expect(err(() => toDto(ListProjectIssuesDto, { iid: '99999999999' }))).toEqual({ message: '400 (Bad request) "iid" is invalid' });
    expect(err(() => toDto(ListProjectIssuesDto, { order_by: 'title' }))).toEqual({ message: '400 (Bad request) "order_by" is invalid' });
    expect(err(() => toDto(MoveIssueDto, {}))).toEqual({ message: '400 (Bad request) "to_project_id" not given' });
    expect(toDto(MoveIssueDto, { to_project_id: '12' }).to_project_id).toBe(12);
  });
});

describe('issue rules', () => {
  it('order and state filters', () => {
    expect(issueOrder({})).toEqual({ column: 'created_at', direction: 'DESC' });
    expect(issueOrder({ order_by: 'updated_at', sort: 'ASC' })).toEqual({ column: 'updated_at', direction: 'ASC' });
    expect(err(() => issueOrder({ sort: 'up' }))).toEqual({ message: '400 (Bad request) "sort" is invalid' });
    expect(issueStates('opened')).toEqual(['opened', 'reopened']);
    expect(issueStates('closed')).toEqual(['closed']);
    expect(issueStates('all')).toBeUndefined();
  });

  it('confidential issues: the single read and the list condition agree, from the access alone', () => {
    const secret = { authorId: 9, assigneeId: null, confidential: true };
    const own = { authorId: outsider.id, assigneeId: null, confidential: true };
    const assigned = { authorId: 9, assigneeId: outsider.id, confidential: true };
    expect(seesConfidentialIssues(member, access(20))).toBe(true);
    expect(seesConfidentialIssues(member, access(10))).toBe(false); // a guest: 8.12+
    expect(seesConfidentialIssues(outsider, access(0))).toBe(false);
    expect(seesConfidentialIssues(admin, access(0))).toBe(true);
    expect(seesConfidentialIssues(undefined, access(0))).toBe(false);
    expect(canReadIssue(member, read, access(20), secret)).toBe(true);
    expect(canReadIssue(member, read, access(10), secret)).toBe(false);
    expect(canReadIssue(outsider, read, access(10), own)).toBe(true);
    expect(canReadIssue(outsider, read, access(10), assigned)).toBe(true);
    expect(canReadIssue(outsider, read, access(0), secret)).toBe(false);
    expect(canReadIssue(outsider, read, access(0), own)).toBe(true);
    expect(canReadIssue(undefined, read, access(0), secret)).toBe(false);
    expect(canReadIssue(member, new Set(['read_project']), access(20), { ...secret, confidential: false })).toBe(false);
    expect(canReadIssue(outsider, new Set(['read_project']), access(0), own)).toBe(false); // the project's read_issue first
    expect(readableIssuesInProject('i', member, access(20))).toEqual({ sql: 'TRUE', params: {} });
    expect(readableIssuesInProject('i', admin, access(0))).toEqual({ sql: 'TRUE', params: {} });
    expect(readableIssuesInProject('i', undefined, access(0))).toEqual({ sql: 'NOT i.confidential', params: {} });
    for (const c of [readableIssuesInProject('i', outsider, access(0)), readableIssuesInProject('i', member, access(10))]) {
      expect(c.sql).not.toMatch(/members|namespaces|authorizations/); // no membership subquery
      expect(c.sql).toContain('i.author_id = :confidentialViewerId OR i.assignee_id = :confidentialViewerId');
    }
    expect(readableIssuesInProject('i', outsider, access(0)).params).toEqual({ confidentialViewerId: outsider.id });
  });
});
