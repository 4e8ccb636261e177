import { AccessLevel, NO_ACCESS, PolicyProject, PolicyUser, ProjectAbility, ProjectAccess, projectAbilities, Visibility } from './policy';

/**
 * The ability table against GitLab 8.8's app/models/ability.rb (project_abilities and
 * anonymous_project_abilities), transcribed below as a reference model and compared over every
 * combination of caller, role, visibility, archived state, public builds and disabled feature.
 *
 * Sources: gitlab-compat.md §3.5 (8.8, which decides) and the ability.rb stored for gitlabhq, a later
 * 8.x (it adds environments, deployments, request_access, `read_pipeline`/`read_container_image` for
 * non-members and a reporter floor for confidential issues — none of which 8.8 had, so they are left out).
 */

const GUEST: ProjectAbility[] = [
  'read_project', 'read_wiki', 'read_issue', 'read_label', 'read_milestone', 'read_project_snippet',
  'read_project_member', 'read_merge_request', 'read_note', 'create_project', 'create_issue', 'create_note',
  'upload_file',
];
const PUBLIC: ProjectAbility[] = [...GUEST, 'download_code', 'fork_project', 'read_commit_status'];
const REPORTER: ProjectAbility[] = [
  ...GUEST, 'download_code', 'fork_project', 'create_project_snippet', 'update_issue', 'admin_issue', 'admin_label',
  'read_commit_status', 'read_build', 'read_container_image', 'read_pipeline',
];
const DEVELOPER: ProjectAbility[] = [
  ...REPORTER, 'admin_merge_request', 'update_merge_request', 'create_commit_status', 'update_commit_status',
  'create_build', 'update_build', 'create_pipeline', 'update_pipeline', 'create_merge_request', 'create_wiki',
  'push_code', 'create_container_image', 'update_container_image',
];
const MASTER: ProjectAbility[] = [
  ...DEVELOPER, 'push_code_to_protected_branches', 'update_project_snippet', 'admin_milestone',
  'admin_project_snippet', 'admin_project_member', 'admin_note', 'admin_wiki', 'admin_project',
  'admin_commit_status', 'admin_build', 'admin_container_image', 'admin_pipeline',
];
const OWNER: ProjectAbility[] = [
  ...MASTER, 'change_namespace', 'change_visibility_level', 'rename_project', 'remove_project', 'archive_project',
  'remove_fork_project', 'destroy_merge_request', 'destroy_issue',
];
const ANONYMOUS_PUBLIC: ProjectAbility[] = [
  'read_project', 'read_wiki', 'read_label', 'read_milestone', 'read_project_snippet', 'read_project_member',
  'read_merge_request', 'read_note', 'read_commit_status', 'download_code', 'read_issue',
];
const ARCHIVED: ProjectAbility[] = [
  'create_merge_request', 'push_code', 'push_code_to_protected_branches', 'update_merge_request', 'admin_merge_request',
];

/** ability.rb's `named_abilities(name)`: what a disabled feature takes away (not `destroy_*`). */
const named = (name: string) => ['read', 'create', 'update', 'admin'].map((v) => `${v}_${name}`);

function disabledFeatures(p: PolicyProject): string[] {
  const off: string[] = [];
  if (!p.issuesEnabled) off.push(...named('issue'));
  if (!p.mergeRequestsEnabled) off.push(...named('merge_request'));
  if (!p.issuesEnabled && !p.mergeRequestsEnabled) off.push(...named('label'), ...named('milestone'));
  if (!p.snippetsEnabled) off.push(...named('project_snippet'));
  if (!p.wikiEnabled) off.push(...named('wiki'));
  if (!p.buildsEnabled) off.push(...named('build'), ...named('pipeline'));
  if (!p.containerRegistryEnabled) off.push(...named('container_image'));
  return off;
}

/** GitLab 8.8's project abilities. `level`: the caller's membership (50 = namespace or group owner). */
function gitlab88(user: PolicyUser | undefined, p: PolicyProject, level: number): Set<string> {
  let rules: string[] = [];
  if (!user) {
    if (p.visibilityLevel === Visibility.PUBLIC) {
      rules = [...ANONYMOUS_PUBLIC, ...(p.publicBuilds ? ['read_build'] : [])];
    }
  } else {
    if (level >= AccessLevel.MASTER) rules.push(...MASTER);
    else if (level === AccessLevel.DEVELOPER) rules.push(...DEVELOPER);
    else if (level === AccessLevel.REPORTER) rules.push(...REPORTER);
    else if (level === AccessLevel.GUEST) rules.push(...GUEST);
    if (user.admin || level >= AccessLevel.OWNER) rules.push(...OWNER);
    if (p.visibilityLevel === Visibility.PUBLIC || (p.visibilityLevel === Visibility.INTERNAL && !user.external)) {
      rules.push(...PUBLIC);
      if (p.publicBuilds) rules.push('read_build');
    }
    if (p.archived) rules = rules.filter((r) => !ARCHIVED.includes(r as ProjectAbility));
  }
  const off = disabledFeatures(p);
  return new Set(rules.filter((r) => !off.includes(r)));
}

/**
 * Where this server decides otherwise, on purpose (each one named, so a new difference fails):
 * - `destroy_label` (master+), an ability of this project: deleting a label takes it off every issue
 *   (issue 5's rule "a reporter cannot delete a label"); it goes with the label feature.
 * - a disabled issues / merge-requests feature also takes `destroy_issue` / `destroy_merge_request`
 *   (GitLab's named_abilities leave `destroy_*`, so an owner could still delete an issue of a
 *   project whose issues are off). Reported to the lead; harmless but not 8.8.
 * - a guest member gets `read_build` when the project has public builds, whatever its visibility
 *   (8.8 gives it only through the public/internal branch; later GitLab gives it to guests too).
 */
function expectedHere(user: PolicyUser | undefined, p: PolicyProject, level: number): Set<string> {
  const rules = gitlab88(user, p, level);
  const effective = user?.admin ? AccessLevel.OWNER : level;
  const labelsOn = p.issuesEnabled || p.mergeRequestsEnabled;
  if (user && effective >= AccessLevel.MASTER && labelsOn) rules.add('destroy_label');
  if (!p.issuesEnabled) rules.delete('destroy_issue');
  if (!p.mergeRequestsEnabled) rules.delete('destroy_merge_request');
  if (user && effective >= AccessLevel.GUEST && p.publicBuilds && p.buildsEnabled) rules.add('read_build');
  return rules;
}

const BASE: PolicyProject = {
  visibilityLevel: Visibility.PRIVATE,
  archived: false,
  issuesEnabled: true,
  mergeRequestsEnabled: true,
  wikiEnabled: true,
  snippetsEnabled: true,
  buildsEnabled: true,
  containerRegistryEnabled: true,
  publicBuilds: false,
};

const FEATURES: Array<Partial<PolicyProject>> = [
  {},
  { issuesEnabled: false },
  { mergeRequestsEnabled: false },
  { issuesEnabled: false, mergeRequestsEnabled: false },
  { snippetsEnabled: false },
  { wikiEnabled: false },
  { buildsEnabled: false },
  { containerRegistryEnabled: false },
];

const regular: PolicyUser = { id: 2, admin: false, external: false };
const external: PolicyUser = { id: 3, admin: false, external: true };
const admin: PolicyUser = { id: 1, admin: true, external: false };

function access(level: number): ProjectAccess {
  if (level === 0) return NO_ACCESS;
  if (level === AccessLevel.OWNER) return { level, projectMember: null, groupMember: null, namespaceOwner: true };
  return { level, projectMember: { accessLevel: level, notificationLevel: 3 }, groupMember: null, namespaceOwner: false };
}

const CALLERS: Array<[string, PolicyUser | undefined, number]> = [
  ['anonymous', undefined, 0],
  ['admin (not a member)', admin, 0],
  ...[0, 10, 20, 30, 40, 50].flatMap((level): Array<[string, PolicyUser, number]> => [
    [`user at ${level}`, regular, level],
    [`external user at ${level}`, external, level],
  ]),
];

const sorted = (s: Set<string>) => [...s].sort();

describe('projectAbilities against GitLab 8.8 ability.rb', () => {
  const cases: Array<[string, PolicyUser | undefined, number, PolicyProject]> = [];
  for (const [who, user, level] of CALLERS) {
    for (const visibilityLevel of [Visibility.PRIVATE, Visibility.INTERNAL, Visibility.PUBLIC]) {
      for (const archived of [false, true]) {
        for (const publicBuilds of [false, true]) {
          for (const features of FEATURES) {
            const project = { ...BASE, visibilityLevel, archived, publicBuilds, ...features };
            cases.push([`${who}, ${JSON.stringify({ visibilityLevel, archived, publicBuilds, ...features })}`, user, level, project]);
          }
        }
      }
    }
  }

  it(`matches the reference model (with the named deviations) in all ${cases.length} combinations`, () => {
    const mismatches: string[] = [];
    for (const [name, user, level, project] of cases) {
      const got = sorted(projectAbilities(user, project, access(level)));
      const want = sorted(expectedHere(user, project, level));
      if (got.join() !== want.join()) {
        const extra = got.filter((a) => !want.includes(a));
        const missing = want.filter((a) => !got.includes(a));
        mismatches.push(`${name}: extra [${extra}] missing [${missing}]`);
      }
    }
    expect(mismatches.slice(0, 10)).toEqual([]);
  });

  it('deviates from 8.8 only where named', () => {
    // destroy_label: master+, not in 8.8
    const master = projectAbilities(regular, BASE, access(AccessLevel.MASTER));
    expect(master.has('destroy_label')).toBe(true);
    expect(gitlab88(regular, BASE, AccessLevel.MASTER).has('destroy_label')).toBe(false);
    expect(projectAbilities(regular, BASE, access(AccessLevel.DEVELOPER)).has('destroy_label')).toBe(false);
    // a disabled issues feature takes destroy_issue here; 8.8 kept it
    const noIssues = { ...BASE, issuesEnabled: false };
    expect(projectAbilities(admin, noIssues, NO_ACCESS).has('destroy_issue')).toBe(false);
    expect(gitlab88(admin, noIssues, 0).has('destroy_issue')).toBe(true);
    // a guest of a private project with public builds reads builds here; 8.8 did not
    const publicBuilds = { ...BASE, publicBuilds: true };
    expect(projectAbilities(regular, publicBuilds, access(AccessLevel.GUEST)).has('read_build')).toBe(true);
    expect(gitlab88(regular, publicBuilds, AccessLevel.GUEST).has('read_build')).toBe(false);
  });
});

describe('projectAbilities: the rules clients depend on', () => {
  const project = (p: Partial<PolicyProject> = {}) => ({ ...BASE, ...p });

  it('a non-member reads a public project and clones it, but cannot push', () => {
    const a = projectAbilities(regular, project({ visibilityLevel: Visibility.PUBLIC }), NO_ACCESS);
    expect(a.has('read_project')).toBe(true);
    expect(a.has('download_code')).toBe(true);
    expect(a.has('fork_project')).toBe(true);
    expect(a.has('push_code')).toBe(false);
    expect(a.has('read_build')).toBe(false);
  });

  it('a private project is invisible to a non-member (no read_project), internal ones only to non-external users', () => {
    expect(projectAbilities(regular, project(), NO_ACCESS).size).toBe(0);
    expect(projectAbilities(regular, project({ visibilityLevel: Visibility.INTERNAL }), NO_ACCESS).has('read_project')).toBe(true);
    expect(projectAbilities(external, project({ visibilityLevel: Visibility.INTERNAL }), NO_ACCESS).size).toBe(0);
    expect(projectAbilities(undefined, project({ visibilityLevel: Visibility.INTERNAL }), NO_ACCESS).size).toBe(0);
  });

  it('anonymous callers of a public project read but never create, upload or fork', () => {
    const a = projectAbilities(undefined, project({ visibilityLevel: Visibility.PUBLIC }), NO_ACCESS);
    expect(a.has('read_issue')).toBe(true);
    expect([...a].filter((x) => /^(create_|upload_|fork_|push_|admin_|update_)/.test(x))).toEqual([]);
  });

  it('roles climb guest < reporter < developer < master < owner, each keeping the abilities below', () => {
    const levels = [10, 20, 30, 40, 50];
    const sets = levels.map((l) => projectAbilities(regular, project(), access(l)));
    for (let i = 1; i < sets.length; i++) {
      expect([...sets[i - 1]].filter((a) => !sets[i].has(a))).toEqual([]);
      expect(sets[i].size).toBeGreaterThan(sets[i - 1].size);
    }
    expect(sets[0].has('create_issue') && !sets[0].has('download_code')).toBe(true); // guest: no code
    expect(sets[1].has('download_code') && !sets[1].has('push_code')).toBe(true); // reporter
    expect(sets[2].has('push_code') && !sets[2].has('push_code_to_protected_branches')).toBe(true); // developer
    expect(sets[3].has('admin_project') && !sets[3].has('remove_project')).toBe(true); // master
    expect(sets[4].has('remove_project') && sets[4].has('destroy_issue')).toBe(true); // owner
  });

  it('an administrator has the owner abilities on any project without being a member', () => {
    expect(sorted(projectAbilities(admin, project(), NO_ACCESS))).toEqual(sorted(projectAbilities(regular, project(), access(50))));
  });

  it('an archived project takes pushing and merge request writes away, even from owners', () => {
    const a = projectAbilities(admin, project({ archived: true }), NO_ACCESS);
    for (const x of ARCHIVED) expect(a.has(x)).toBe(false);
    expect(a.has('admin_project')).toBe(true);
  });

  it('a disabled feature takes its abilities away but never read_project', () => {
    const a = projectAbilities(admin, project({ issuesEnabled: false, mergeRequestsEnabled: false, buildsEnabled: false }), NO_ACCESS);
    expect(a.has('read_project')).toBe(true);
    expect([...a].filter((x) => /_(issue|merge_request|label|milestone|build|pipeline)$/.test(x))).toEqual([]);
    expect(a.has('push_code')).toBe(true);
  });
});
