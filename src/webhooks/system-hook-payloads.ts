/** GitLab 8.8's system hook payloads (SystemHooksService#build_event_data, ../shared/docs/gitlab-compat.md §7), pure. */

const LEVELS: Record<number, string> = { 10: 'Guest', 20: 'Reporter', 30: 'Developer', 40: 'Master', 50: 'Owner' };
const VISIBILITY: Record<number, string> = { 0: 'private', 10: 'internal', 20: 'public' };

/** Rails' `xmlschema`: seconds precision, `Z`. */
export function xmlschema(d: Date | string): string {
  return new Date(d).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export function accessLevelName(level: number): string {
  return LEVELS[level] ?? String(level);
}

export function visibilityName(level: number): string {
  return VISIBILITY[level] ?? 'private';
}

/** The fixed sample of the hook test (`GET /hooks/:id`). */
export const SAMPLE_HOOK_DATA = {
  event_name: 'project_create',
  name: 'Ruby',
  path: 'ruby',
  project_id: 1,
  owner_name: 'Someone',
  owner_email: 'example@gitlabhq.com',
};

interface Stamped {
  createdAt: Date;
  updatedAt: Date;
}

function stamps(r: Stamped) {
  return { created_at: xmlschema(r.createdAt), updated_at: xmlschema(r.updatedAt) };
}

export interface SystemProject extends Stamped {
  id: number;
  name: string;
  path: string;
  visibilityLevel: number;
  namespacePath: string;
}

/** `project_create`, `project_destroy`, and with `oldPathWithNamespace` `project_rename` / `project_transfer`. */
export function projectEvent(
  event: 'project_create' | 'project_destroy' | 'project_rename' | 'project_transfer',
  p: SystemProject,
  owner: { name: string; email: string | null },
  oldPathWithNamespace?: string,
) {
  const out: Record<string, unknown> = {
    event_name: event,
    ...stamps(p),
    name: p.name,
    path: p.path,
    path_with_namespace: `${p.namespacePath}/${p.path}`,
    project_id: p.id,
    owner_name: owner.name,
    owner_email: owner.email ?? '',
    project_visibility: visibilityName(p.visibilityLevel),
  };
  if (oldPathWithNamespace !== undefined) out.old_path_with_namespace = oldPathWithNamespace;
  return out;
}

export function userEvent(event: 'user_create' | 'user_destroy', u: Stamped & { id: number; name: string; email: string; username: string }) {
  return { event_name: event, ...stamps(u), name: u.name, email: u.email, user_id: u.id, username: u.username };
}

export function keyEvent(event: 'key_create' | 'key_destroy', k: Stamped & { id: number; key: string }, username: string | null) {
  const out: Record<string, unknown> = { event_name: event, ...stamps(k), key: k.key, id: k.id };
  if (username) out.username = username;
  return out;
}

export function groupEvent(
  event: 'group_create' | 'group_destroy',
  g: Stamped & { id: number; name: string; path: string },
  owner: { name: string; email: string } | null,
) {
  return {
    event_name: event,
    ...stamps(g),
    name: g.name,
    path: g.path,
    group_id: g.id,
    owner_name: owner ? owner.name : null,
    owner_email: owner ? owner.email : null,
  };
}

interface MemberUser {
  id: number;
  name: string;
  username: string;
  email: string;
}

export function teamEvent(event: 'user_add_to_team' | 'user_remove_from_team', p: SystemProject, u: MemberUser, accessLevel: number, at: Date) {
  return {
    event_name: event,
    created_at: xmlschema(at),
    updated_at: xmlschema(at),
    project_name: p.name,
    project_path: p.path,
    project_path_with_namespace: `${p.namespacePath}/${p.path}`,
    project_id: p.id,
    user_username: u.username,
    user_name: u.name,
    user_email: u.email,
    user_id: u.id,
    access_level: accessLevelName(accessLevel),
    project_visibility: visibilityName(p.visibilityLevel),
  };
}

export function groupMemberEvent(
  event: 'user_add_to_group' | 'user_remove_from_group',
  g: { id: number; name: string; path: string },
  u: MemberUser,
  accessLevel: number,
  at: Date,
) {
  return {
    event_name: event,
    created_at: xmlschema(at),
    updated_at: xmlschema(at),
    group_name: g.name,
    group_path: g.path,
    group_id: g.id,
    user_username: u.username,
    user_name: u.name,
    user_email: u.email,
    user_id: u.id,
    group_access: accessLevelName(accessLevel),
  };
}
