/** Paths that routes or the web UI of a GitLab-like server own: not usable as a username or group path. */
export const RESERVED_PATHS = new Set([
  '-',
  '.well-known',
  'admin',
  'api',
  'assets',
  'ci',
  'dashboard',
  'explore',
  'files',
  'groups',
  'help',
  'hooks',
  'import',
  'invites',
  'notification_settings',
  'oauth',
  'profile',
  'projects',
  'public',
  'repository',
  'robots.txt',
  's',
  'search',
  'sent_notifications',
  'session',
  'snippets',
  'u',
  'unsubscribes',
  'uploads',
  'users',
  'root-api',
]);

const PATH_FORMAT = /^[a-zA-Z0-9_][a-zA-Z0-9_.-]*$/;
export const PATH_FORMAT_MESSAGE = "can contain only letters, digits, '_', '-' and '.'. Cannot start with '-', '.' or end in '.', '.git' or '.atom'.";

/** The namespace path rule (a username is its user's namespace path), shared by users and groups: field-map messages. */
export function pathErrors(path: string): string[] {
  const out: string[] = [];
  if (path.length > 255) out.push('is too long (maximum is 255 characters)');
  if (!PATH_FORMAT.test(path) || path.endsWith('.') || /\.(git|atom)$/i.test(path)) out.push(PATH_FORMAT_MESSAGE);
  else if (RESERVED_PATHS.has(path.toLowerCase())) out.push('is a reserved name');
  return out;
}
