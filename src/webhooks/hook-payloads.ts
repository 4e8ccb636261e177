import type { BuildHookInput } from '../domain-events/domain-events';

export type { BuildHookInput };

/**
 * GitLab 8.8's webhook payloads, as pure functions of plain rows (hook_attrs of each model,
 * IssuableBaseService#hook_data, Gitlab::NoteDataBuilder, Gitlab::BuildDataBuilder).
 */

export interface ProjectRow {
  id: number;
  name: string;
  path: string;
  description: string | null;
  visibilityLevel: number;
  defaultBranch: string | null;
  namespaceName: string;
  namespacePath: string;
}

export interface UserRow {
  id: number;
  name: string;
  username: string;
  email: string;
}

/** Project#hook_attrs (8.8). */
export function projectHookAttrs(p: ProjectRow, externalUrl: string, sshUrlPrefix?: string) {
  const full = `${p.namespacePath}/${p.path}`;
  const web = `${externalUrl}/${full}`;
  const ssh = `${sshUrlPrefix ?? `git@${new URL(externalUrl).hostname}:`}${full}.git`;
  return {
    name: p.name,
    description: p.description,
    web_url: web,
    avatar_url: null,
    git_ssh_url: ssh,
    git_http_url: `${web}.git`,
    namespace: p.namespaceName,
    visibility_level: p.visibilityLevel,
    path_with_namespace: full,
    default_branch: p.defaultBranch,
    homepage: web,
    url: ssh,
    ssh_url: ssh,
    http_url: `${web}.git`,
  };
}

/** The legacy `repository` block of issue, note and MR hooks. */
export function repositoryHookAttrs(p: ProjectRow, externalUrl: string, sshUrlPrefix?: string) {
  const full = `${p.namespacePath}/${p.path}`;
  const web = `${externalUrl}/${full}`;
  return { name: p.name, url: `${sshUrlPrefix ?? `git@${new URL(externalUrl).hostname}:`}${full}.git`, description: p.description, homepage: web };
}

/** User#hook_attrs. */
export function userHookAttrs(u: UserRow) {
  return { name: u.name, username: u.username, avatar_url: null };
}

export interface IssueRow {
  id: number;
  iid: number;
  title: string;
  description: string | null;
  state: string;
  confidential: boolean;
  authorId: number | null;
  assigneeId: number | null;
  milestoneId: number | null;
  projectId: number;
  position: number;
  createdAt: Date;
  updatedAt: Date;
}

/** Issue#hook_attrs plus `url` and `action`. */
export function issueHookAttrs(i: IssueRow, project: ProjectRow, externalUrl: string) {
  return {
    id: i.id,
    title: i.title,
    assignee_id: i.assigneeId,
    author_id: i.authorId,
    project_id: i.projectId,
    created_at: i.createdAt,
    updated_at: i.updatedAt,
    position: i.position,
    branch_name: null,
    description: i.description,
    milestone_id: i.milestoneId,
    state: i.state === 'reopened' ? 'opened' : i.state,
    iid: i.iid,
    confidential: i.confidential,
    url: `${externalUrl}/${project.namespacePath}/${project.path}/issues/${i.iid}`,
  };
}

/** `Issue Hook` payload. */
export function issueHookPayload(o: {
  issue: IssueRow;
  project: ProjectRow;
  user: UserRow;
  assignee: UserRow | null;
  action: string;
  externalUrl: string;
  sshUrlPrefix?: string;
}) {
  const out: Record<string, unknown> = {
    object_kind: 'issue',
    user: userHookAttrs(o.user),
    project: projectHookAttrs(o.project, o.externalUrl, o.sshUrlPrefix),
    repository: repositoryHookAttrs(o.project, o.externalUrl, o.sshUrlPrefix),
    object_attributes: { ...issueHookAttrs(o.issue, o.project, o.externalUrl), action: o.action },
  };
  if (o.assignee) out.assignee = userHookAttrs(o.assignee);
  return out;
}

export interface NoteRow {
  id: number;
  body: string;
  noteableType: string;
  noteableId: number;
  authorId: number | null;
  projectId: number;
  system: boolean;
  attachment: string | null;
  createdAt: Date;
  updatedAt: Date;
  /** The commit a commit note is on. */
  commitId?: string | null;
  lineCode?: string | null;
}

/** `Note Hook` payload; `noteable` is the issue's (or MR's, snippet's, commit's) hook attributes. */
export function noteHookPayload(o: {
  note: NoteRow;
  project: ProjectRow;
  user: UserRow;
  noteable: { kind: 'issue' | 'merge_request' | 'snippet' | 'commit'; attrs: Record<string, unknown>; ref: string } | null;
  externalUrl: string;
  sshUrlPrefix?: string;
}) {
  const base = `${o.externalUrl}/${o.project.namespacePath}/${o.project.path}`;
  const anchor = `#note_${o.note.id}`;
  const url = o.noteable
    ? o.noteable.kind === 'issue'
      ? `${base}/issues/${o.noteable.ref}${anchor}`
      : o.noteable.kind === 'merge_request'
        ? `${base}/merge_requests/${o.noteable.ref}${anchor}`
        : o.noteable.kind === 'snippet'
          ? `${base}/snippets/${o.noteable.ref}${anchor}`
          : `${base}/commit/${o.noteable.ref}${anchor}`
    : `${base}${anchor}`;
  const out: Record<string, unknown> = {
    object_kind: 'note',
    user: userHookAttrs(o.user),
    project_id: o.project.id,
    project: projectHookAttrs(o.project, o.externalUrl, o.sshUrlPrefix),
    repository: repositoryHookAttrs(o.project, o.externalUrl, o.sshUrlPrefix),
    object_attributes: {
      id: o.note.id,
      note: o.note.body,
      noteable_type: o.note.noteableType,
      author_id: o.note.authorId,
      created_at: o.note.createdAt,
      updated_at: o.note.updatedAt,
      project_id: o.note.projectId,
      attachment: o.note.attachment,
      line_code: o.note.lineCode ?? null,
      commit_id: o.note.commitId ?? '',
      noteable_id: o.note.noteableType === 'Commit' ? null : o.note.noteableId,
      system: o.note.system,
      st_diff: null,
      url,
    },
  };
  if (o.noteable) out[o.noteable.kind] = o.noteable.attrs;
  return out;
}

/** `Merge Request Hook` payload; the MR area supplies GitLab's MergeRequest#hook_attrs as `attributes`. */
export function mergeRequestHookPayload(o: {
  attributes: Record<string, unknown>;
  action: string;
  project: ProjectRow;
  user: UserRow;
  assignee: UserRow | null;
  externalUrl: string;
  sshUrlPrefix?: string;
}) {
  const out: Record<string, unknown> = {
    object_kind: 'merge_request',
    user: userHookAttrs(o.user),
    project: projectHookAttrs(o.project, o.externalUrl, o.sshUrlPrefix),
    repository: repositoryHookAttrs(o.project, o.externalUrl, o.sshUrlPrefix),
    object_attributes: { ...o.attributes, action: o.action },
  };
  if (o.assignee) out.assignee = userHookAttrs(o.assignee);
  return out;
}

/** `Build Hook` payload (Gitlab::BuildDataBuilder, 8.8). */
export function buildHookPayload(o: { build: BuildHookInput; project: ProjectRow; user: UserRow | null; externalUrl: string; sshUrlPrefix?: string }) {
  const b = o.build;
  const seconds = (a: Date | null, z: Date | null) => (a && z ? Math.max(0, Math.round((z.getTime() - a.getTime()) / 1000)) : null);
  const full = `${o.project.namespacePath}/${o.project.path}`;
  const web = `${o.externalUrl}/${full}`;
  return {
    object_kind: 'build',
    ref: b.ref,
    tag: b.tag,
    before_sha: b.beforeSha,
    sha: b.sha,
    build_id: b.id,
    build_name: b.name,
    build_stage: b.stage,
    build_status: b.status,
    build_started_at: b.startedAt,
    build_finished_at: b.finishedAt,
    build_duration: seconds(b.startedAt, b.finishedAt),
    build_allow_failure: b.allowFailure,
    project_id: o.project.id,
    project_name: `${o.project.namespaceName} / ${o.project.name}`,
    user: o.user ? { id: o.user.id, name: o.user.name, email: o.user.email } : { id: null, name: null, email: null },
    commit: {
      id: b.commit.id,
      sha: b.commit.sha,
      message: b.commit.message,
      author_name: b.commit.authorName,
      author_email: b.commit.authorEmail,
      status: b.commit.status,
      duration: seconds(b.commit.startedAt, b.commit.finishedAt),
      started_at: b.commit.startedAt,
      finished_at: b.commit.finishedAt,
    },
    repository: {
      name: o.project.name,
      url: `${o.sshUrlPrefix ?? `git@${new URL(o.externalUrl).hostname}:`}${full}.git`,
      description: o.project.description,
      homepage: web,
      git_http_url: `${web}.git`,
      git_ssh_url: `${o.sshUrlPrefix ?? `git@${new URL(o.externalUrl).hostname}:`}${full}.git`,
      visibility_level: o.project.visibilityLevel,
    },
  };
}

/** System hooks get push data without commits (../shared/docs/gitlab-compat.md §7). */
export function systemPushPayload(data: Record<string, unknown>) {
  return { ...data, commits: [], total_commits_count: 0 };
}
