import { ProjectAccess } from '../common/policy/policy';
import { Namespace } from '../namespaces/namespace.entity';
import type { UserSummary } from '../users/users.presenter';
import { PresentContext, presentUserBasic } from '../users/users.presenter';
import { Project } from './project.entity';
import { NamespaceRecordResponse } from '../namespaces/namespaces.responses';
import { ProjectResponse, ProjectSummaryResponse } from './projects.responses';

/** The project a fork was made from, with the name of its namespace's owner (user namespaces). */
export interface ForkParent {
  project: Project;
  ownerName: string | null;
}

/** Everything a project response needs besides the row, loaded by ProjectViews in bounded queries. */
export interface ProjectExtras {
  owner: UserSummary | null;
  forkedFrom: ForkParent | null;
  forksCount: number;
  openIssuesCount: number;
  /** Present for `ProjectWithAccess` responses (single project and the member lists). */
  access?: ProjectAccess;
  /** Present only where the caller may administer the project. */
  runnersToken?: string;
}

function host(ctx: PresentContext): string {
  return new URL(ctx.externalUrl).hostname;
}

export function projectFullPath(p: Project): string {
  return `${p.namespace.path}/${p.path}`;
}

function namespaceHumanName(ns: Namespace, owner: UserSummary | null): string {
  return ns.kind === 'user' && owner ? owner.name : ns.name;
}

export function presentNamespaceRow(ns: Namespace): NamespaceRecordResponse {
  return {
    id: ns.id,
    name: ns.name,
    path: ns.path,
    kind: ns.kind,
    owner_id: ns.ownerId,
    created_at: ns.createdAt,
    updated_at: ns.updatedAt,
    type: ns.kind === 'group' ? 'Group' : null,
    description: ns.description,
    avatar: null,
    share_with_group_lock: false,
    visibility_level: ns.visibilityLevel,
  };
}

function forkedFromView({ project: f, ownerName }: ForkParent): ProjectSummaryResponse {
  const human = f.namespace.kind === 'user' && ownerName !== null ? ownerName : f.namespace.name;
  return {
    id: f.id,
    name: f.name,
    name_with_namespace: `${human} / ${f.name}`,
    path: f.path,
    path_with_namespace: projectFullPath(f),
  };
}

/** GitLab 8.8's Project entity (keys in its order), plus `permissions` for ProjectWithAccess. */
export function presentProject(p: Project, x: ProjectExtras, ctx: PresentContext): ProjectResponse {
  const full = projectFullPath(p);
  return {
    id: p.id,
    description: p.description,
    default_branch: p.defaultBranch,
    tag_list: [] as string[],
    public: p.visibilityLevel === 20,
    archived: p.archived,
    visibility_level: p.visibilityLevel,
    ssh_url_to_repo: `${ctx.sshUrlPrefix ?? `git@${host(ctx)}:`}${full}.git`,
    http_url_to_repo: `${ctx.externalUrl}/${full}.git`,
    web_url: `${ctx.externalUrl}/${full}`,
    ...(p.namespace.kind === 'user' && x.owner ? { owner: { ...presentUserBasic(x.owner, ctx), created_at: x.owner.createdAt } } : {}),
    name: p.name,
    name_with_namespace: `${namespaceHumanName(p.namespace, x.owner)} / ${p.name}`,
    path: p.path,
    path_with_namespace: full,
    issues_enabled: p.issuesEnabled,
    merge_requests_enabled: p.mergeRequestsEnabled,
    wiki_enabled: p.wikiEnabled,
    builds_enabled: p.buildsEnabled,
    snippets_enabled: p.snippetsEnabled,
    container_registry_enabled: p.containerRegistryEnabled,
    created_at: p.createdAt,
    last_activity_at: p.lastActivityAt,
    shared_runners_enabled: p.sharedRunnersEnabled,
    // 8.17's Project#lfs_enabled?: the project's flag (null: the instance's) and the instance's switch
    lfs_enabled: ctx.lfsEnabled !== false && p.lfsEnabled !== false,
    creator_id: p.creatorId,
    namespace: presentNamespaceRow(p.namespace),
    ...(x.forkedFrom ? { forked_from_project: forkedFromView(x.forkedFrom) } : {}),
    avatar_url: null,
    star_count: p.starCount,
    forks_count: x.forksCount,
    ...(p.issuesEnabled ? { open_issues_count: x.openIssuesCount } : {}),
    ...(x.runnersToken !== undefined ? { runners_token: x.runnersToken } : {}),
    public_builds: p.publicBuilds,
    import_status: p.importStatus,
    ...(x.access
      ? {
          permissions: {
            project_access: x.access.projectMember
              ? { access_level: x.access.projectMember.accessLevel, notification_level: x.access.projectMember.notificationLevel }
              : null,
            group_access: x.access.groupMember
              ? { access_level: x.access.groupMember.accessLevel, notification_level: x.access.groupMember.notificationLevel }
              : null,
          },
        }
      : {}),
  };
}
