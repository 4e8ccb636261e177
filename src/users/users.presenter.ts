import { createHash } from 'node:crypto';
import { Paginated } from '../common/pagination/pagination';
import { Email } from './email.entity';
import { SshKey } from './key.entity';
import { User, UserIdentity } from './user.entity';
import {
  AuthorResponse,
  EmailResponse,
  SSHKeyResponse,
  SSHKeyWithUserResponse,
  UserBasicResponse,
  UserFullResponse,
  UserLoginResponse,
  UserResponse,
} from './users.responses';
import type { Caller } from '../common/caller/caller';

/** Whichever view of a user the viewer may see (UserView). */
export type AnyUserResponse = UserBasicResponse | UserResponse | UserFullResponse | UserLoginResponse;

/** What presenters need besides the row: the public base URL and whether Gravatar is on. */
export interface PresentContext {
  externalUrl: string;
  gravatarEnabled: boolean;
  /** What SSH clone URLs begin with (config `sshUrlPrefix`); `git@HOST:` when absent. */
  sshUrlPrefix?: string;
  /** The instance's LFS_ENABLED (a project's `lfs_enabled` is false when it is off); absent: on. */
  lfsEnabled?: boolean;
}

/**
 * The columns of a user that rows embedding one present (UserBasic and the author shape of
 * below: avatar_url from the email, created_at; email itself to administrators). Lists
 * join their authors, assignees and owners with these only: a whole users row is ~30 columns, the
 * password and token digests among them, for 6 shown.
 */
export const USER_SUMMARY_PROPERTIES = ['id', 'username', 'name', 'state', 'email', 'createdAt'] as const satisfies readonly (keyof User)[];
export type UserSummary = Pick<User, (typeof USER_SUMMARY_PROPERTIES)[number]>;

function avatarUrl(u: Pick<User, 'email'>, ctx: PresentContext): string | null {
  if (!ctx.gravatarEnabled) return null;
  const hash = createHash('md5').update(u.email.trim().toLowerCase()).digest('hex');
  return `https://www.gravatar.com/avatar/${hash}?s=80&d=identicon`;
}

/** User summary (GitLab's UserBasic): embedded as author, assignee, member. */
export function presentUserBasic(u: UserSummary, ctx: PresentContext): UserBasicResponse {
  return {
    name: u.name,
    username: u.username,
    id: u.id,
    state: u.state,
    avatar_url: avatarUrl(u, ctx),
    web_url: `${ctx.externalUrl}/u/${u.username}`,
  };
}

/**
 * An author object (../shared/docs/spec-decisions.md #18), the one presenter of every embedded author (notes, issues,
 * merge requests, snippets, commit comments and statuses, events): the user summary plus
 * `created_at`, and `email` only when the viewer is an administrator.
 */
export function presentAuthor(u: UserSummary, viewer: Caller | undefined, ctx: PresentContext): AuthorResponse;
export function presentAuthor(u: UserSummary | null | undefined, viewer: Caller | undefined, ctx: PresentContext): AuthorResponse | null;
export function presentAuthor(u: UserSummary | null | undefined, viewer: Caller | undefined, ctx: PresentContext): AuthorResponse | null {
  if (!u) return null;
  return { ...presentUserBasic(u, ctx), created_at: u.createdAt, ...(viewer?.admin ? { email: u.email } : {}) };
}

/*
 * The views below are written as flat object literals, each repeating the fields of the smaller
 * views in the same order, on purpose: `{ ...smaller(u), more: ... }` makes V8 define every field
 * after the spread through a slow runtime path (~15 µs per full user view against ~0.1 µs flat), which
 * dominated the CPU of `GET /users?per_page=100`. Keep the field lists in step when adding a field.
 */

/** Single user as a normal viewer sees it: UserBasic plus the public profile. */
export function presentUser(u: User, ctx: PresentContext): UserResponse {
  return {
    name: u.name,
    username: u.username,
    id: u.id,
    state: u.state,
    avatar_url: avatarUrl(u, ctx),
    web_url: `${ctx.externalUrl}/u/${u.username}`,
    created_at: u.createdAt,
    is_admin: u.admin,
    bio: u.bio,
    location: u.location,
    skype: u.skype,
    linkedin: u.linkedin,
    twitter: u.twitter,
    website_url: u.websiteUrl,
  };
}

/** Administrator view, also the current user's own view: the normal view plus account fields. `identities` must be loaded. */
export function presentUserFull(u: User, ctx: PresentContext, opts: { canCreateProject: boolean }): UserFullResponse {
  return {
    name: u.name,
    username: u.username,
    id: u.id,
    state: u.state,
    avatar_url: avatarUrl(u, ctx),
    web_url: `${ctx.externalUrl}/u/${u.username}`,
    created_at: u.createdAt,
    is_admin: u.admin,
    bio: u.bio,
    location: u.location,
    skype: u.skype,
    linkedin: u.linkedin,
    twitter: u.twitter,
    website_url: u.websiteUrl,
    last_sign_in_at: u.lastSignInAt,
    confirmed_at: u.confirmedAt,
    email: u.email,
    theme_id: u.themeId,
    color_scheme_id: u.colorSchemeId,
    projects_limit: u.projectsLimit,
    current_sign_in_at: u.currentSignInAt,
    identities: (u.identities ?? []).map((i: UserIdentity) => ({ provider: i.provider, extern_uid: i.externUid })),
    can_create_group: u.canCreateGroup,
    can_create_project: opts.canCreateProject,
    two_factor_enabled: u.twoFactorEnabled,
    external: u.external,
  };
}

/** Current-user view and the session response: the full view plus the private token. */
export function presentUserLogin(u: User, ctx: PresentContext, opts: { canCreateProject: boolean; privateToken: string }): UserLoginResponse {
  // Adds the last field to the fresh full view (a spread copy would take the slow path, see above).
  return Object.assign(presentUserFull(u, ctx, opts), { private_token: opts.privateToken });
}

export function presentKey(k: SshKey): SSHKeyResponse {
  return { id: k.id, title: k.title, key: k.key, created_at: k.createdAt };
}

export function presentEmail(e: Email): EmailResponse {
  return { id: e.id, email: e.email };
}

/**
 * A user with the level of disclosure the service chose for the viewer (UserViews, user-views.service.ts): `basic`
 * (UserBasic), `public` (User), `full` (UserFull: administrators, and the key owner of `GET /keys/:id`)
 * or `login` (UserLogin: the current user, sign-in). Full and login views carry what they need loaded.
 */
export type UserView =
  | { level: 'basic' | 'public'; user: User; ctx: PresentContext }
  | { level: 'full'; user: User; ctx: PresentContext; canCreateProject: boolean }
  | { level: 'login'; user: User; ctx: PresentContext; canCreateProject: boolean; privateToken: string };

export function presentUserView(v: UserView): AnyUserResponse {
  switch (v.level) {
    case 'basic':
      return presentUserBasic(v.user, v.ctx);
    case 'public':
      return presentUser(v.user, v.ctx);
    case 'full':
      return presentUserFull(v.user, v.ctx, v);
    case 'login':
      return presentUserLogin(v.user, v.ctx, v);
  }
}

/** `GET /users`: a page of views (`username=` too: a page of at most one). */
export function presentUserViews(list: Paginated<UserView>): Paginated<AnyUserResponse> {
  return list.map(presentUserView);
}

/** `GET /keys/:id`: the key with its owner. */
export function presentKeyWithOwner(k: { key: SshKey; owner: UserView }): SSHKeyWithUserResponse {
  // the key's owner in the full view (KeysService.getWithOwner); expectSchema checks the answer
  return { ...presentKey(k.key), user: presentUserView(k.owner) as UserFullResponse };
}
