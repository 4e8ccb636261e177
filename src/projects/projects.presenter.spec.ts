import { Namespace } from '../namespaces/namespace.entity';
import { User } from '../users/user.entity';
import { Project } from './project.entity';
import { presentProject } from './projects.presenter';

/** GitLab 8.8's Project entity key order (../shared/docs/gitlab-compat.md §2.3), with this server's additions marked. */
const HEAD = ['id', 'description', 'default_branch', 'tag_list', 'public', 'archived', 'visibility_level', 'ssh_url_to_repo', 'http_url_to_repo', 'web_url'];
const MIDDLE = [
  'name',
  'name_with_namespace',
  'path',
  'path_with_namespace',
  'issues_enabled',
  'merge_requests_enabled',
  'wiki_enabled',
  'builds_enabled',
  'snippets_enabled',
  'container_registry_enabled',
  'created_at',
  'last_activity_at',
  'shared_runners_enabled',
  'lfs_enabled', // 8.17's v3 Entities::Project, after shared_runners_enabled
  'creator_id',
  'namespace',
];
const NAMESPACE = [
  'id',
  'name',
  'path',
  'kind',
  'owner_id',
  'created_at',
  'updated_at',
  'type',
  'description',
  'avatar',
  'share_with_group_lock',
  'visibility_level',
];

const ctx = { externalUrl: 'https://git.example.com', gravatarEnabled: false };
const owner = { id: 7, username: 'alice', name: 'Alice', email: 'a@example.com', state: 'active', createdAt: new Date(0) } as unknown as User;
const userNs = {
  id: 3,
  name: 'alice',
  path: 'alice',
  kind: 'user',
  ownerId: 7,
  createdAt: new Date(0),
  updatedAt: new Date(0),
  description: '',
  visibilityLevel: 20,
} as unknown as Namespace;
const groupNs = { ...userNs, id: 4, name: 'Tools', path: 'tools', kind: 'group', ownerId: null } as unknown as Namespace;
const project = (ns: Namespace, extra: Partial<Project> = {}) =>
  ({
    id: 11,
    name: 'Hello',
    path: 'hello',
    description: null,
    namespaceId: ns.id,
    creatorId: 7,
    visibilityLevel: 10,
    defaultBranch: 'master',
    issuesEnabled: true,
    mergeRequestsEnabled: true,
    wikiEnabled: true,
    buildsEnabled: true,
    snippetsEnabled: true,
    containerRegistryEnabled: false,
    sharedRunnersEnabled: true,
    publicBuilds: true,
    archived: false,
    starCount: 0,
    importStatus: 'none',
    lastActivityAt: new Date(0),
    createdAt: new Date(0),
    updatedAt: new Date(0),
    namespace: ns,
    ...extra,
  }) as unknown as Project;

describe('projects presenter', () => {
  it('a user-namespace project: 8.8 key order, owner after web_url, open_issues_count when issues are on', () => {
    const p = presentProject(project(userNs), { owner, forkedFrom: null, forksCount: 2, openIssuesCount: 5 }, ctx);
    expect(Object.keys(p)).toEqual([
      ...HEAD,
      'owner',
      ...MIDDLE,
      'avatar_url',
      'star_count',
      'forks_count',
      'open_issues_count',
      'public_builds',
      'import_status',
    ]);
    expect(Object.keys(p.namespace)).toEqual(NAMESPACE);
    expect(Object.keys(p.owner!)).toEqual(['name', 'username', 'id', 'state', 'avatar_url', 'web_url', 'created_at']);
    expect(p.name_with_namespace).toBe('Alice / Hello');
    expect(p.ssh_url_to_repo).toBe('git@git.example.com:alice/hello.git');
    expect(p.http_url_to_repo).toBe('https://git.example.com/alice/hello.git');
  });

  it('a group project has no owner; a fork shows forked_from_project; runners_token and permissions only when given', () => {
    const parent = project(userNs, { id: 9, name: 'Orig', path: 'orig' });
    const p = presentProject(
      project(groupNs, { issuesEnabled: false }),
      {
        owner: null,
        forkedFrom: { project: parent, ownerName: 'Alice' },
        forksCount: 0,
        openIssuesCount: 0,
        runnersToken: 'tok',
        access: { level: 40, projectMember: { accessLevel: 40, notificationLevel: 3 }, groupMember: null, namespaceOwner: false },
      },
      ctx,
    );
    expect(Object.keys(p)).toEqual([
      ...HEAD,
      ...MIDDLE,
      'forked_from_project',
      'avatar_url',
      'star_count',
      'forks_count',
      'runners_token',
      'public_builds',
      'import_status',
      'permissions',
    ]);
    expect(p.forked_from_project).toEqual({ id: 9, name: 'Orig', name_with_namespace: 'Alice / Orig', path: 'orig', path_with_namespace: 'alice/orig' });
    expect(p.permissions).toEqual({ project_access: { access_level: 40, notification_level: 3 }, group_access: null });
    expect(p.namespace.type).toBe('Group');
    expect(p.name_with_namespace).toBe('Tools / Hello');
  });

  it("lfs_enabled is 8.17's Project#lfs_enabled?: the project's flag, null following the instance's switch", () => {
    const at = (flag: boolean | null, instance?: boolean) =>
      presentProject({ ...project(userNs), lfsEnabled: flag }, { owner, forkedFrom: null, forksCount: 0, openIssuesCount: 0 }, { ...ctx, lfsEnabled: instance })
        .lfs_enabled;
    expect([at(null), at(true), at(false), at(null, false), at(true, false)]).toEqual([true, true, false, false, false]);
  });
});
