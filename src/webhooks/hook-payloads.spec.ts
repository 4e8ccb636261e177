import { buildHookPayload, mergeRequestHookPayload, systemPushPayload } from './hook-payloads';
import { basicAuth, splitUserinfo } from './hook-url';

const project = {
  id: 3,
  name: 'Widget',
  path: 'widget',
  description: 'd',
  visibilityLevel: 0,
  defaultBranch: 'master',
  namespaceName: 'Team',
  namespacePath: 'team',
};
const user = { id: 9, name: 'Ann', username: 'ann', email: 'ann@example.com' };

describe('hook payloads', () => {
  it('build hook: GitLab 8.8 BuildDataBuilder shape with durations in seconds', () => {
    const started = new Date('2016-01-01T00:00:00Z');
    const finished = new Date('2016-01-01T00:01:30Z');
    const p = buildHookPayload({
      build: {
        id: 5,
        name: 'rspec',
        stage: 'test',
        status: 'success',
        ref: 'master',
        tag: false,
        beforeSha: null,
        sha: 'a'.repeat(40),
        startedAt: started,
        finishedAt: finished,
        allowFailure: false,
        userId: 9,
        commit: {
          id: 2,
          sha: 'a'.repeat(40),
          message: 'm',
          authorName: 'Ann',
          authorEmail: 'ann@example.com',
          status: 'success',
          startedAt: started,
          finishedAt: finished,
        },
      },
      project,
      user,
      externalUrl: 'http://git.example.com',
    });
    expect(p).toMatchObject({
      object_kind: 'build',
      build_id: 5,
      build_name: 'rspec',
      build_stage: 'test',
      build_status: 'success',
      build_duration: 90,
      project_id: 3,
      project_name: 'Team / Widget',
      user: { id: 9, name: 'Ann', email: 'ann@example.com' },
      commit: { id: 2, duration: 90 },
      repository: { name: 'Widget', git_http_url: 'http://git.example.com/team/widget.git', git_ssh_url: 'git@git.example.com:team/widget.git' },
    });
  });

  it('merge request hook: the MR area supplies object_attributes; action is added', () => {
    const p = mergeRequestHookPayload({ attributes: { id: 1, iid: 2 }, action: 'merge', project, user, assignee: null, externalUrl: 'http://g.test' });
    expect(p).toMatchObject({ object_kind: 'merge_request', object_attributes: { id: 1, iid: 2, action: 'merge' }, user: { username: 'ann' } });
    expect(p).not.toHaveProperty('assignee');
  });

  it('system hooks get push data without commits', () => {
    expect(systemPushPayload({ object_kind: 'push', commits: [{ id: 'x' }], total_commits_count: 1 })).toEqual({
      object_kind: 'push',
      commits: [],
      total_commits_count: 0,
    });
  });

  it('userinfo is split off the URL and sent as Basic auth', () => {
    expect(splitUserinfo('https://u%40x:p%3Aw@hooks.example.com/a?b=1')).toEqual({ url: 'https://hooks.example.com/a?b=1', userinfo: 'u%40x:p%3Aw' });
    expect(basicAuth('u%40x:p%3Aw')).toBe('Basic ' + Buffer.from('u@x:p:w').toString('base64'));
    expect(splitUserinfo('http://h.example.com/').userinfo).toBeNull();
    // the rest of the text is kept as written: no `/` added, case kept
    expect(splitUserinfo(' HTTP://u:p@H.example.com ')).toEqual({ url: 'HTTP://H.example.com', userinfo: 'u:p' });
    for (const bad of ['http:u:p@h.example.com', 'http:\\\\h.example.com/', 'http://h.exa mple.com/', 'http://h.example.com/\tx']) {
      expect(() => splitUserinfo(bad)).toThrow('is not a valid URL');
    }
  });
});
