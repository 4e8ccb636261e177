import { Identity } from './identity.entity';
import { User, UserState } from './user.entity';

/**
 * Lean reads of users for the hot paths (authentication on every request, the users list): plain
 * SQL and a direct row mapping, which costs a fraction of the ORM's query building and hydration.
 */
export const USER_COLUMNS = `u.id, u.username, u.email, u.name, u.encrypted_password, u.state, u.admin, u.projects_limit,
  u.can_create_group, u.external, u.bio, u.location, u.skype, u.linkedin, u.twitter, u.website_url, u.theme_id,
  u.color_scheme_id, u.two_factor_enabled, u.confirmed_at, u.last_sign_in_at, u.current_sign_in_at, u.sign_in_count,
  u.private_token_digest, u.private_token_encrypted, u.created_at, u.updated_at`;

/** Correlated sub-selects that bring what the full view needs in the same row. */
export const USER_FULL_VIEW_COLUMNS = `
  (SELECT coalesce(json_agg(json_build_object('id', i.id, 'provider', i.provider, 'extern_uid', i.extern_uid) ORDER BY i.id), '[]'::json)
     FROM identities i WHERE i.user_id = u.id) AS identities_json,
  (SELECT count(*)::int FROM projects p JOIN namespaces n ON n.id = p.namespace_id
     WHERE n.kind = 'user' AND n.owner_id = u.id) AS personal_project_count`;

export type UserRow = Record<string, unknown>;

export function mapUserRow(r: UserRow): User {
  const u = new User();
  u.id = r.id as number;
  u.username = r.username as string;
  u.email = r.email as string;
  u.name = r.name as string;
  u.encryptedPassword = r.encrypted_password as string;
  u.state = r.state as UserState;
  u.admin = r.admin as boolean;
  u.projectsLimit = r.projects_limit as number;
  u.canCreateGroup = r.can_create_group as boolean;
  u.external = r.external as boolean;
  u.bio = r.bio as string | null;
  u.location = r.location as string | null;
  u.skype = r.skype as string;
  u.linkedin = r.linkedin as string;
  u.twitter = r.twitter as string;
  u.websiteUrl = r.website_url as string;
  u.themeId = r.theme_id as number;
  u.colorSchemeId = r.color_scheme_id as number;
  u.twoFactorEnabled = r.two_factor_enabled as boolean;
  u.confirmedAt = r.confirmed_at as Date | null;
  u.lastSignInAt = r.last_sign_in_at as Date | null;
  u.currentSignInAt = r.current_sign_in_at as Date | null;
  u.signInCount = r.sign_in_count as number;
  u.privateTokenDigest = r.private_token_digest as string;
  u.privateTokenEncrypted = r.private_token_encrypted as string;
  u.createdAt = r.created_at as Date;
  u.updatedAt = r.updated_at as Date;
  if (r.identities_json !== undefined) {
    const extra = mapFullViewColumns(r, u.id);
    u.identities = extra.identities;
    u.personalProjectCount = extra.personalProjectCount;
  }
  return u;
}

/** Reads the USER_FULL_VIEW_COLUMNS of a row. */
export function mapFullViewColumns(r: UserRow, userId: number): { identities: Identity[]; personalProjectCount: number } {
  const raw = r.identities_json ?? [];
  const list = (typeof raw === 'string' ? JSON.parse(raw) : raw) as { id: number; provider: string; extern_uid: string }[];
  return {
    identities: list.map((i) => Object.assign(new Identity(), { id: i.id, userId, provider: i.provider, externUid: i.extern_uid })),
    personalProjectCount: (r.personal_project_count as number | undefined) ?? 0,
  };
}
