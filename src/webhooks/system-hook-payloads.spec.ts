import { accessLevelName, groupEvent, keyEvent, projectEvent, SAMPLE_HOOK_DATA, xmlschema } from './system-hook-payloads';

describe('system hook payloads', () => {
  const at = new Date('2016-01-04T15:31:51.081Z');

  it('timestamps are xmlschema (seconds, Z)', () => {
    expect(xmlschema(at)).toBe('2016-01-04T15:31:51Z');
  });

  it('project events: owner email "" for a group owner, old path only on rename/transfer', () => {
    const p = { id: 7, name: 'W', path: 'w', visibilityLevel: 20, namespacePath: 'team', createdAt: at, updatedAt: at };
    expect(projectEvent('project_create', p, { name: 'Team', email: null })).toEqual({
      event_name: 'project_create',
      created_at: '2016-01-04T15:31:51Z',
      updated_at: '2016-01-04T15:31:51Z',
      name: 'W',
      path: 'w',
      path_with_namespace: 'team/w',
      project_id: 7,
      owner_name: 'Team',
      owner_email: '',
      project_visibility: 'public',
    });
    expect(projectEvent('project_rename', p, { name: 'A', email: 'a@x' }, 'team/old')).toMatchObject({ old_path_with_namespace: 'team/old' });
  });

  it('keys without a user have no username; groups without an owner have null owner fields', () => {
    expect(keyEvent('key_create', { id: 1, key: 'ssh-ed25519 AAA', createdAt: at, updatedAt: at }, null)).not.toHaveProperty('username');
    expect(groupEvent('group_destroy', { id: 2, name: 'G', path: 'g', createdAt: at, updatedAt: at }, null)).toMatchObject({
      owner_name: null,
      owner_email: null,
    });
  });

  it('access levels by their human names; the fixed test sample', () => {
    expect([10, 20, 30, 40, 50].map(accessLevelName)).toEqual(['Guest', 'Reporter', 'Developer', 'Master', 'Owner']);
    expect(SAMPLE_HOOK_DATA).toEqual({
      event_name: 'project_create',
      name: 'Ruby',
      path: 'ruby',
      project_id: 1,
      owner_name: 'Someone',
      owner_email: 'example@gitlabhq.com',
    });
  });
});
