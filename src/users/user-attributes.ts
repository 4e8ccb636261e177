import { InvalidAttribute, ValidationFailed, ValidationMap } from '../common/errors/domain-errors';
import { Params } from '../common/params/params';

/** Paths that routes or the web UI of a GitLab-like server own: not usable as a username or group path. */
export const RESERVED_PATHS = new Set([
  '-', '.well-known', 'admin', 'api', 'assets', 'ci', 'dashboard', 'explore', 'files', 'groups', 'help',
  'hooks', 'import', 'invites', 'notification_settings', 'oauth', 'profile', 'projects', 'public', 'repository',
  'robots.txt', 's', 'search', 'sent_notifications', 'session', 'snippets', 'u', 'unsubscribes', 'uploads',
  'users', 'root-api',
]);

const PATH_FORMAT = /^[a-zA-Z0-9_][a-zA-Z0-9_.-]*$/;
export const PATH_FORMAT_MESSAGE =
  "can contain only letters, digits, '_', '-' and '.'. Cannot start with '-', '.' or end in '.', '.git' or '.atom'.";
const EMAIL_FORMAT = /^[^\s@<>()[\],;:"]+@[^\s@<>()[\],;:"]+\.[^\s@<>()[\],;:"]+$/;

/** Username / namespace path rule, shared by users and groups. */
export function pathErrors(path: string): string[] {
  const out: string[] = [];
  if (path.length > 255) out.push('is too long (maximum is 255 characters)');
  if (!PATH_FORMAT.test(path) || path.endsWith('.') || /\.(git|atom)$/i.test(path)) out.push(PATH_FORMAT_MESSAGE);
  else if (RESERVED_PATHS.has(path.toLowerCase())) out.push('is a reserved name');
  return out;
}

export function emailErrors(email: string): string[] {
  if (email.length > 254) return ['is too long (maximum is 254 characters)'];
  return EMAIL_FORMAT.test(email) ? [] : ['is invalid'];
}

/** The writable user attributes, validated. Admin-only flags are read only when `admin` is true. */
export interface UserAttributes {
  email?: string;
  password?: string;
  username?: string;
  name?: string;
  skype?: string;
  linkedin?: string;
  twitter?: string;
  websiteUrl?: string;
  bio?: string | null;
  location?: string | null;
  projectsLimit?: number;
  admin?: boolean;
  canCreateGroup?: boolean;
  external?: boolean;
  confirm?: boolean;
  provider?: string;
  externUid?: string;
}

const REQUIRED_ON_CREATE = ['email', 'password', 'username', 'name'] as const;

/** Reads and validates user attributes; required ones first (`"x" not given`), then a field map. */
export function readUserAttributes(p: Params, mode: 'create' | 'update'): UserAttributes {
  if (mode === 'create') for (const f of REQUIRED_ON_CREATE) p.requireString(f);
  const errors: ValidationMap = {};
  const add = (field: string, msgs: string[]) => {
    if (msgs.length) errors[field] = [...((errors[field] as string[]) ?? []), ...msgs];
  };
  const attrs: UserAttributes = {};
  const str = (name: string): string | undefined => {
    try {
      return p.string(name);
    } catch {
      add(name, ['is invalid']);
      return undefined;
    }
  };
  const flag = (name: string): boolean | undefined => {
    try {
      return p.bool(name);
    } catch (e) {
      if (e instanceof InvalidAttribute) add(name, ['is invalid']);
      return undefined;
    }
  };

  const email = str('email')?.trim();
  if (email !== undefined) {
    add('email', email === '' ? ["can't be blank"] : emailErrors(email));
    attrs.email = email;
  }
  const username = str('username')?.trim();
  if (username !== undefined) {
    add('username', username === '' ? ["can't be blank"] : pathErrors(username));
    attrs.username = username;
  }
  const name = str('name')?.trim();
  if (name !== undefined) {
    add('name', name === '' ? ["can't be blank"] : name.length > 255 ? ['is too long (maximum is 255 characters)'] : []);
    attrs.name = name;
  }
  const password = str('password');
  if (password !== undefined) {
    if (password.length < 8) add('password', ['is too short (minimum is 8 characters)']);
    else if (Buffer.byteLength(password) > 72) add('password', ['is too long (maximum is 72 bytes)']);
    attrs.password = password;
  }
  for (const [field, key] of [
    ['skype', 'skype'],
    ['linkedin', 'linkedin'],
    ['twitter', 'twitter'],
    ['website_url', 'websiteUrl'],
    ['bio', 'bio'],
    ['location', 'location'],
  ] as const) {
    const v = str(field);
    if (v === undefined) continue;
    if (v.length > 255) add(field, ['is too long (maximum is 255 characters)']);
    (attrs as Record<string, unknown>)[key] = v;
  }
  try {
    const limit = p.int('projects_limit');
    if (limit !== undefined) {
      if (limit < 0) add('projects_limit', ['must be greater than or equal to 0']);
      else if (limit > 2147483647) add('projects_limit', ['must be less than or equal to 2147483647']);
      attrs.projectsLimit = limit;
    }
  } catch {
    add('projects_limit', ['is not a number']);
  }
  attrs.admin = flag('admin');
  attrs.canCreateGroup = flag('can_create_group');
  attrs.external = flag('external');
  if (mode === 'create') attrs.confirm = flag('confirm');

  const provider = str('provider')?.trim();
  const externUid = str('extern_uid')?.trim();
  if ((provider && !externUid) || (!provider && externUid)) {
    add(provider ? 'extern_uid' : 'provider', ["can't be blank"]);
  } else if (provider && externUid) {
    if (provider.length > 255) add('provider', ['is too long (maximum is 255 characters)']);
    if (externUid.length > 255) add('extern_uid', ['is too long (maximum is 255 characters)']);
    attrs.provider = provider;
    attrs.externUid = externUid;
  }
  if (Object.keys(errors).length) throw new ValidationFailed(errors);
  return attrs;
}
