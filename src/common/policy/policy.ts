/**
 * Who may do what, decided once for the whole server (GitLab 8.8's ability.rb). Services ask for a
 * named ability; nobody compares access levels inline.
 */
export const AccessLevel = { NONE: 0, GUEST: 10, REPORTER: 20, DEVELOPER: 30, MASTER: 40, OWNER: 50 } as const;
export const Visibility = { PRIVATE: 0, INTERNAL: 10, PUBLIC: 20 } as const;
export const PROJECT_MEMBER_LEVELS = [10, 20, 30, 40, 50];
export const GROUP_MEMBER_LEVELS = [10, 20, 30, 40, 50];

export type ProjectAbility =
  | 'read_project'
  | 'read_wiki'
  | 'read_issue'
  | 'read_label'
  | 'read_milestone'
  | 'read_project_snippet'
  | 'read_project_member'
  | 'read_merge_request'
  | 'read_note'
  | 'create_project'
  | 'create_issue'
  | 'create_note'
  | 'upload_file'
  | 'download_code'
  | 'fork_project'
  | 'read_commit_status'
  | 'read_build'
  | 'create_project_snippet'
  | 'update_issue'
  | 'admin_issue'
  | 'admin_label'
  | 'read_container_image'
  | 'read_pipeline'
  | 'admin_merge_request'
  | 'update_merge_request'
  | 'create_commit_status'
  | 'update_commit_status'
  | 'create_build'
  | 'update_build'
  | 'create_pipeline'
  | 'update_pipeline'
  | 'create_merge_request'
  | 'create_wiki'
  | 'push_code'
  | 'create_container_image'
  | 'update_container_image'
  | 'push_code_to_protected_branches'
  | 'update_project_snippet'
  | 'admin_milestone'
  | 'admin_project_snippet'
  | 'admin_project_member'
  | 'admin_note'
  | 'admin_wiki'
  | 'admin_project'
  | 'admin_commit_status'
  | 'admin_build'
  | 'admin_container_image'
  | 'admin_pipeline'
  | 'destroy_label'
  | 'change_namespace'
  | 'change_visibility_level'
  | 'rename_project'
  | 'remove_project'
  | 'archive_project'
  | 'remove_fork_project'
  | 'destroy_merge_request'
  | 'destroy_issue'
  // GitLab 8.17's environments and deployments (issue 38)
  | 'read_environment'
  | 'read_deployment'
  | 'create_environment'
  | 'create_deployment'
  | 'update_environment'
  | 'update_deployment'
  | 'admin_environment'
  | 'admin_deployment';

const GUEST: ProjectAbility[] = [
  'read_project',
  'read_wiki',
  'read_issue',
  'read_label',
  'read_milestone',
  'read_project_snippet',
  'read_project_member',
  'read_merge_request',
  'read_note',
  'create_project',
  'create_issue',
  'create_note',
  'upload_file',
];
const PUBLIC_EXTRA: ProjectAbility[] = ['download_code', 'fork_project', 'read_commit_status'];
/**
 * What "public builds" opens on a project visible to non-members: its builds and (GitLab 8.11+) its
 * pipelines. (A guest member gets `read_build` with public builds whatever the visibility; pipelines
 * of a private project stay reporter+.)
 */
const PUBLIC_BUILDS: ProjectAbility[] = ['read_build', 'read_pipeline'];
const REPORTER: ProjectAbility[] = [
  'download_code',
  'fork_project',
  'create_project_snippet',
  'update_issue',
  'admin_issue',
  'admin_label',
  'read_commit_status',
  'read_build',
  'read_container_image',
  'read_pipeline',
  'read_environment',
  'read_deployment',
];
const DEVELOPER: ProjectAbility[] = [
  'admin_merge_request',
  'update_merge_request',
  'create_commit_status',
  'update_commit_status',
  'create_build',
  'update_build',
  'create_pipeline',
  'update_pipeline',
  'create_merge_request',
  'create_wiki',
  'push_code',
  'create_container_image',
  'update_container_image',
  'create_environment',
  'create_deployment',
];
const MASTER: ProjectAbility[] = [
  'push_code_to_protected_branches',
  'update_project_snippet',
  'admin_milestone',
  'admin_project_snippet',
  'admin_project_member',
  'admin_note',
  'admin_wiki',
  'admin_project',
  'admin_commit_status',
  'admin_build',
  'admin_container_image',
  'admin_pipeline',
  // Deleting a label takes it off every issue: master+ (the issue's rule: "a reporter cannot delete a label").
  'destroy_label',
  'update_environment',
  'update_deployment',
  'admin_environment',
  'admin_deployment',
];
const OWNER: ProjectAbility[] = [
  'change_namespace',
  'change_visibility_level',
  'rename_project',
  'remove_project',
  'archive_project',
  'remove_fork_project',
  'destroy_merge_request',
  'destroy_issue',
];
const ARCHIVED_REMOVES: ProjectAbility[] = [
  'create_merge_request',
  'push_code',
  'push_code_to_protected_branches',
  'update_merge_request',
  'admin_merge_request',
];
const ANONYMOUS_REMOVES = /^(create_|upload_|fork_)/;

export interface PolicyUser {
  id: number;
  admin: boolean;
  external: boolean;
}

export interface PolicyProject {
  visibilityLevel: number;
  archived: boolean;
  issuesEnabled: boolean;
  mergeRequestsEnabled: boolean;
  wikiEnabled: boolean;
  snippetsEnabled: boolean;
  buildsEnabled: boolean;
  containerRegistryEnabled: boolean;
  publicBuilds: boolean;
}

/** The caller's membership in a project: direct, through its group, or as the namespace owner. */
export interface ProjectAccess {
  /** The highest of the levels below, 0 for none. */
  level: number;
  projectMember: { accessLevel: number; notificationLevel: number } | null;
  groupMember: { accessLevel: number; notificationLevel: number } | null;
  namespaceOwner: boolean;
}

export const NO_ACCESS: ProjectAccess = { level: 0, projectMember: null, groupMember: null, namespaceOwner: false };

function featureOff(project: PolicyProject): RegExp[] {
  const off: RegExp[] = [];
  if (!project.issuesEnabled) off.push(/_issue$/);
  if (!project.mergeRequestsEnabled) off.push(/_merge_request$/);
  if (!project.issuesEnabled && !project.mergeRequestsEnabled) off.push(/_label$/, /_milestone$/);
  if (!project.snippetsEnabled) off.push(/_project_snippet$/);
  if (!project.wikiEnabled) off.push(/_wiki$/);
  if (!project.buildsEnabled) off.push(/_build$/, /_pipeline$/, /_environment$/, /_deployment$/);
  if (!project.containerRegistryEnabled) off.push(/_container_image$/);
  return off;
}

/** Whether the project is visible to a caller who is not a member. */
export function visibleToNonMember(user: PolicyUser | undefined, project: Pick<PolicyProject, 'visibilityLevel'>): boolean {
  if (project.visibilityLevel === Visibility.PUBLIC) return true;
  return project.visibilityLevel === Visibility.INTERNAL && !!user && !user.external;
}

/** Every ability `user` (undefined: anonymous) has on `project`. */
export function projectAbilities(user: PolicyUser | undefined, project: PolicyProject, access: ProjectAccess): Set<ProjectAbility> {
  const out = new Set<ProjectAbility>();
  const add = (list: ProjectAbility[]) => list.forEach((a) => out.add(a));
  const level = user?.admin ? AccessLevel.OWNER : access.level;
  if (level >= AccessLevel.GUEST) {
    add(GUEST);
    if (project.publicBuilds) out.add('read_build');
    if (visibleToNonMember(user, project)) {
      add(PUBLIC_EXTRA);
      if (project.publicBuilds) add(PUBLIC_BUILDS);
    }
  } else if (visibleToNonMember(user, project)) {
    add(GUEST);
    add(PUBLIC_EXTRA);
    if (project.publicBuilds) add(PUBLIC_BUILDS);
  }
  if (level >= AccessLevel.REPORTER) add(REPORTER);
  if (level >= AccessLevel.DEVELOPER) add(DEVELOPER);
  if (level >= AccessLevel.MASTER) add(MASTER);
  if (level >= AccessLevel.OWNER) add(OWNER);
  if (!user) for (const a of [...out]) if (ANONYMOUS_REMOVES.test(a)) out.delete(a);
  if (project.archived) ARCHIVED_REMOVES.forEach((a) => out.delete(a));
  const off = featureOff(project);
  if (off.length) for (const a of [...out]) if (a !== 'read_project' && off.some((r) => r.test(a))) out.delete(a);
  return out;
}

/**
 * What a deploy key may do on a project it is enabled on (GitLab 8.17's git_access: download, and push
 * with `can_push`; no other ability, it is no user). An archived project is read-only for it too.
 */
export function deployKeyAbilities(project: Pick<PolicyProject, 'archived'>, canPush: boolean): Set<ProjectAbility> {
  const out = new Set<ProjectAbility>(['read_project', 'download_code']);
  if (canPush) out.add('push_code');
  if (project.archived) ARCHIVED_REMOVES.forEach((a) => out.delete(a));
  return out;
}

export type GroupAbility = 'read_group' | 'create_projects' | 'admin_group' | 'admin_group_member';

/** Abilities on a group from the caller's group membership level (0 for none) and the group's visibility. */
export function groupAbilities(user: PolicyUser | undefined, group: { visibilityLevel: number }, memberLevel: number): Set<GroupAbility> {
  const out = new Set<GroupAbility>();
  const level = user?.admin ? AccessLevel.OWNER : memberLevel;
  if (level >= AccessLevel.GUEST || visibleToNonMember(user, group)) out.add('read_group');
  if (level >= AccessLevel.MASTER) out.add('create_projects');
  if (level >= AccessLevel.OWNER) {
    out.add('admin_group');
    out.add('admin_group_member');
  }
  return out;
}
