import { AccessLevel, groupAbilities, NO_ACCESS, PolicyProject, ProjectAccess, projectAbilities } from './policy';
import { accessFrom } from './policy.service';

/** The ability table against GitLab 8.8's ability.rb (project_guest_rules … project_owner_rules). */
const project = (over: Partial<PolicyProject> = {}): PolicyProject => ({
  visibilityLevel: 0,
  archived: false,
  issuesEnabled: true,
  mergeRequestsEnabled: true,
  wikiEnabled: true,
  snippetsEnabled: true,
  buildsEnabled: true,
  containerRegistryEnabled: false,
  publicBuilds: true,
  ...over,
});
const user = { id: 1, admin: false, external: false };
const at = (level: number): ProjectAccess => ({ ...NO_ACCESS, level });

describe('projectAbilities', () => {
  it('a private project: nothing for non-members, guest rules for guests (no code)', () => {
    expect(projectAbilities(user, project(), NO_ACCESS).size).toBe(0);
    const guest = projectAbilities(user, project(), at(AccessLevel.GUEST));
    expect(guest.has('read_issue')).toBe(true);
    expect(guest.has('create_issue')).toBe(true);
    expect(guest.has('download_code')).toBe(false);
    expect(guest.has('admin_issue')).toBe(false);
  });

  it('each role adds its rules: reporter reads code, developer pushes, master administers, owner removes', () => {
    const has = (level: number, a: Parameters<Set<string>['has']>[0]) => projectAbilities(user, project(), at(level)).has(a as never);
    expect(has(AccessLevel.REPORTER, 'download_code')).toBe(true);
    expect(has(AccessLevel.REPORTER, 'push_code')).toBe(false);
    expect(has(AccessLevel.DEVELOPER, 'push_code')).toBe(true);
    expect(has(AccessLevel.DEVELOPER, 'admin_project')).toBe(false);
    expect(has(AccessLevel.MASTER, 'admin_project')).toBe(true);
    expect(has(AccessLevel.MASTER, 'remove_project')).toBe(false);
    expect(has(AccessLevel.OWNER, 'remove_project')).toBe(true);
  });

  it('public projects: guest rules and code for everyone signed in; anonymous loses create_/upload_/fork_', () => {
    const pub = project({ visibilityLevel: 20 });
    const signedIn = projectAbilities(user, pub, NO_ACCESS);
    expect(signedIn.has('download_code')).toBe(true);
    expect(signedIn.has('fork_project')).toBe(true);
    expect(signedIn.has('create_issue')).toBe(true);
    const anonymous = projectAbilities(undefined, pub, NO_ACCESS);
    expect(anonymous.has('read_project')).toBe(true);
    expect(anonymous.has('create_issue')).toBe(false);
    expect(anonymous.has('fork_project')).toBe(false);
  });

  it('internal projects are invisible to external users and anonymous callers', () => {
    const internal = project({ visibilityLevel: 10 });
    expect(projectAbilities(user, internal, NO_ACCESS).has('read_project')).toBe(true);
    expect(projectAbilities({ ...user, external: true }, internal, NO_ACCESS).has('read_project')).toBe(false);
    expect(projectAbilities(undefined, internal, NO_ACCESS).has('read_project')).toBe(false);
  });

  it('archived projects refuse pushes and merge request changes; disabled features remove their abilities', () => {
    const archived = projectAbilities(user, project({ archived: true }), at(AccessLevel.MASTER));
    expect(archived.has('push_code')).toBe(false);
    expect(archived.has('admin_project')).toBe(true);
    const noIssues = projectAbilities(user, project({ issuesEnabled: false }), at(AccessLevel.MASTER));
    expect(noIssues.has('read_issue')).toBe(false);
    expect(noIssues.has('read_label')).toBe(true);
    expect(noIssues.has('read_project')).toBe(true);
  });

  it('administrators act as owners everywhere', () => {
    expect(projectAbilities({ ...user, admin: true }, project(), NO_ACCESS).has('remove_project')).toBe(true);
  });
});

describe('accessFrom', () => {
  const ns = (ownerId: number | null, kind = 'user') => ({ namespace: { kind, ownerId } });

  it('takes the highest of the direct and group levels; the personal namespace owner is owner', () => {
    expect(accessFrom(user, ns(2, 'group'), { accessLevel: 20, notificationLevel: 3 }, { accessLevel: 30, notificationLevel: 3 }).level).toBe(30);
    expect(accessFrom(user, ns(1), null, null)).toMatchObject({ level: 50, namespaceOwner: true });
    expect(accessFrom(user, ns(1, 'group'), null, null)).toMatchObject({ level: 0, namespaceOwner: false });
    expect(accessFrom(undefined, ns(1), { accessLevel: 40, notificationLevel: 3 }, null)).toBe(NO_ACCESS);
  });
});

describe('groupAbilities', () => {
  it('members read, masters create projects, owners administer; public groups are readable by anyone', () => {
    expect([...groupAbilities(user, { visibilityLevel: 0 }, 0)]).toEqual([]);
    expect([...groupAbilities(user, { visibilityLevel: 0 }, AccessLevel.MASTER)]).toEqual(['read_group', 'create_projects']);
    expect(groupAbilities(user, { visibilityLevel: 0 }, AccessLevel.OWNER).has('admin_group_member')).toBe(true);
    expect(groupAbilities(undefined, { visibilityLevel: 20 }, 0).has('read_group')).toBe(true);
  });
});
