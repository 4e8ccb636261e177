import { readFileSync } from 'node:fs';

export type LdapEncryption = 'plain' | 'start_tls' | 'simple_tls';

/** One directory server (GitLab's `gitlab.yml` `ldap.servers.<name>`). */
export interface LdapServerConfig {
  /** The identities' `provider` (`ldapmain` by default, as GitLab names its `main` server). */
  provider: string;
  /** `ldap://host:port` or `ldaps://host:port` (LDAPS when `encryption` is `simple_tls`). */
  url: string;
  bindDn?: string;
  bindPassword?: string;
  base: string;
  /** The attribute a login is matched against (`uid`; `sAMAccountName` on Active Directory). */
  uid: string;
  /** An RFC 4515 filter ANDed with the uid match (empty: none). */
  userFilter?: string;
  encryption: LdapEncryption;
  /** PEM of the CA certificates to trust (LDAP_CA_FILE); the system's when absent. */
  ca?: string;
  caFile?: string;
  /** Certificate verification (on unless explicitly turned off). */
  verifyCertificates: boolean;
  /** Active Directory: the `userAccountControl` disabled bit (0x2) counts as blocked. */
  activeDirectory: boolean;
  allowUsernameOrEmailLogin: boolean;
  /** Users created by a first sign-in start `blocked` until an administrator unblocks them. */
  blockAutoCreatedUsers: boolean;
  /**
   * Attribute names read from the entry, first present wins; without a name, `firstName` and
   * `lastName` joined (gitlab.yml's `first_name` / `last_name`, `givenName` and `sn` by default).
   */
  attributes: { username: string[]; email: string[]; name: string[]; firstName: string[]; lastName: string[] };
  /** Longest any LDAP operation may take (ms), connecting included. */
  timeoutMs: number;
}

export interface LdapConfig {
  servers: LdapServerConfig[];
  /** Seconds between two directory synchronisations (LDAP_SYNC_INTERVAL, GitLab's one hour). */
  syncIntervalSeconds: number;
}

class LdapConfigError extends Error {}

const ENCRYPTIONS: LdapEncryption[] = ['plain', 'start_tls', 'simple_tls'];

/**
 * GitLab 8.17's `method` (lib/gitlab/ldap/config.rb, `encryption`): `ssl` is LDAPS (Net::LDAP's
 * simple_tls: TLS from the first byte, port 636 usually), `tls` is StartTLS on the plain port. 8.17
 * took any other value as plain; here it refuses to boot.
 */
const METHODS: Record<string, LdapEncryption> = { plain: 'plain', tls: 'start_tls', ssl: 'simple_tls' };

/**
 * Every key a server may have: gitlab.yml's (8.17's `method`, GitLab 10's `encryption`, `label`
 * which only names the server) and this server's (`url`, `provider`, `ca_file`,
 * `verify_certificates`). Any other key refuses to boot: a misspelled setting (`metod: tls`,
 * `verify_certificate: true`) must never leave the connection weaker than the one asked for.
 */
const SERVER_KEYS = new Set([
  'provider',
  'label',
  'url',
  'host',
  'port',
  'method',
  'encryption',
  'bind_dn',
  'password',
  'bind_password',
  'base',
  'uid',
  'user_filter',
  'ca_file',
  'verify_certificates',
  'active_directory',
  'allow_username_or_email_login',
  'block_auto_created_users',
  'attributes',
  'timeout',
]);
/** gitlab.yml keys this server does not implement (GitLab EE's group and SSH key sync): refused with the reason. */
const EE_KEYS = new Set(['group_base', 'admin_group', 'sync_ssh_keys', 'external_groups', 'sync_time']);
const ATTRIBUTE_KEYS = new Set(['username', 'email', 'name', 'first_name', 'last_name']);

/** The single-server shorthand's variables (read in parseLdapConfig); any other `LDAP_*` variable refuses to boot. */
const SHORTHAND = new Set([
  'LDAP_PROVIDER',
  'LDAP_URL',
  'LDAP_HOST',
  'LDAP_PORT',
  'LDAP_METHOD',
  'LDAP_ENCRYPTION',
  'LDAP_BIND_DN',
  'LDAP_BIND_PASSWORD',
  'LDAP_BASE',
  'LDAP_UID',
  'LDAP_USER_FILTER',
  'LDAP_CA_FILE',
  'LDAP_VERIFY_CERTIFICATES',
  'LDAP_ACTIVE_DIRECTORY',
  'LDAP_ALLOW_USERNAME_OR_EMAIL_LOGIN',
  'LDAP_BLOCK_AUTO_CREATED_USERS',
  'LDAP_ATTRIBUTE_USERNAME',
  'LDAP_ATTRIBUTE_EMAIL',
  'LDAP_ATTRIBUTE_NAME',
  'LDAP_ATTRIBUTE_FIRST_NAME',
  'LDAP_ATTRIBUTE_LAST_NAME',
  'LDAP_TIMEOUT',
]);
/** LDAP_* variables that are not server settings. */
const GLOBAL_VARIABLES = new Set(['LDAP_SERVERS', 'LDAP_SYNC_INTERVAL']);

/** The closest known key (a misspelling's likely intent), for the error message. */
function closest(key: string, known: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const k of known) {
    const d = distance(key.toLowerCase(), k.toLowerCase());
    if (d < bestDistance) [best, bestDistance] = [k, d];
  }
  return bestDistance <= Math.max(2, Math.floor(key.length / 4)) ? best : undefined;
}

function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0];
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cur = row[j];
      row[j] = Math.min(row[j] + 1, row[j - 1] + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = cur;
    }
  }
  return row[b.length];
}

/** `name` (the key as the administrator wrote it, with where) names no setting; `key` is compared with `known`. */
function unknownKey(name: string, key: string, known: Iterable<string>): LdapConfigError {
  const near = closest(key, known);
  return new LdapConfigError(`${name} is not a setting this server understands${near ? ` (did you mean ${near}?)` : ''}: refused rather than ignored`);
}

/** `encryption` from 8.17's `method` and/or GitLab 10's `encryption` (both given: they must agree); plain when neither. */
function encryptionOf(raw: Record<string, unknown>, where: string): LdapEncryption {
  const method = str(raw.method);
  const encryption = str(raw.encryption);
  if (method !== undefined && !Object.prototype.hasOwnProperty.call(METHODS, method)) {
    throw new LdapConfigError(`${where}method must be one of plain, tls (StartTLS), ssl (LDAPS), got "${method}"`);
  }
  if (encryption !== undefined && !ENCRYPTIONS.includes(encryption as LdapEncryption)) {
    throw new LdapConfigError(`${where}encryption must be one of ${ENCRYPTIONS.join(', ')}, got "${encryption}"`);
  }
  const fromMethod = method === undefined ? undefined : METHODS[method];
  if (fromMethod && encryption && fromMethod !== encryption) {
    throw new LdapConfigError(`${where}method "${method}" (${fromMethod}) and encryption "${encryption}" disagree: give one of them`);
  }
  return fromMethod ?? (encryption as LdapEncryption | undefined) ?? 'plain';
}

function bool(v: unknown, name: string, dflt: boolean): boolean {
  if (v === undefined || v === null || v === '') return dflt;
  if (typeof v === 'boolean') return v;
  if (typeof v === 'string' && /^(true|1|yes|on)$/i.test(v)) return true;
  if (typeof v === 'string' && /^(false|0|no|off)$/i.test(v)) return false;
  throw new LdapConfigError(`${name} must be true or false, got "${typeof v === 'string' ? v : JSON.stringify(v)}"`);
}

function list(v: unknown, dflt: string[]): string[] {
  if (v === undefined || v === null || v === '') return dflt;
  if (Array.isArray(v)) return v.map(String).filter(Boolean);
  return (typeof v === 'string' ? v : JSON.stringify(v)).split(/[\s,]+/).filter(Boolean);
}

function str(v: unknown): string | undefined {
  return v === undefined || v === null || v === '' ? undefined : typeof v === 'string' ? v : JSON.stringify(v);
}

/** One server from its settings (snake_case keys, as `LDAP_SERVERS` entries and GitLab's gitlab.yml spell them). */
function server(raw: Record<string, unknown>, where: string): LdapServerConfig {
  for (const key of Object.keys(raw)) {
    if (EE_KEYS.has(key)) throw new LdapConfigError(`${where}${key} is a GitLab EE setting (group and SSH key sync) this server does not implement: remove it`);
    if (!SERVER_KEYS.has(key)) throw unknownKey(`${where}${key}`, key, SERVER_KEYS);
  }
  if (raw.attributes !== undefined && raw.attributes !== null && (typeof raw.attributes !== 'object' || Array.isArray(raw.attributes))) {
    throw new LdapConfigError(`${where}attributes must be an object (username, email, name, first_name, last_name)`);
  }
  for (const key of Object.keys(raw.attributes ?? {})) {
    if (!ATTRIBUTE_KEYS.has(key)) throw unknownKey(`${where}attributes.${key}`, key, ATTRIBUTE_KEYS);
  }
  const encryption = encryptionOf(raw, where);
  let url = str(raw.url);
  if (url && (str(raw.host) || str(raw.port))) throw new LdapConfigError(`${where}give url, or host and port, not both`);
  if (!url && str(raw.host)) {
    const port = Number(raw.port ?? (encryption === 'simple_tls' ? 636 : 389));
    if (!Number.isInteger(port) || port < 1 || port > 65535)
      throw new LdapConfigError(`${where}port must be a number from 1 to 65535, got "${String(raw.port)}"`);
    url = `${encryption === 'simple_tls' ? 'ldaps' : 'ldap'}://${String(raw.host)}:${port}`;
  }
  if (!url) throw new LdapConfigError(`${where}url (or host) is required`);
  if (!/^ldaps?:\/\/[^/\s]+\/?$/.test(url)) throw new LdapConfigError(`${where}url must be ldap://host[:port] or ldaps://host[:port], got "${url}"`);
  if (url.startsWith('ldaps:') !== (encryption === 'simple_tls')) {
    throw new LdapConfigError(
      `${where}url "${url}" does not fit encryption ${encryption} (simple_tls, method ssl, is ldaps://; plain and start_tls, method tls, are ldap://)`,
    );
  }
  const base = str(raw.base);
  if (!base) throw new LdapConfigError(`${where}base is required`);
  const provider = str(raw.provider) ?? 'ldapmain';
  if (!/^ldap[a-z0-9_]*$/i.test(provider)) throw new LdapConfigError(`${where}provider must start with "ldap" (letters, digits, _), got "${provider}"`);
  let userFilter = str(raw.user_filter)?.trim();
  if (userFilter && !userFilter.startsWith('(')) userFilter = `(${userFilter})`;
  if (userFilter && !balanced(userFilter)) throw new LdapConfigError(`${where}user_filter is not an RFC 4515 filter: "${userFilter}"`);
  const caFile = str(raw.ca_file);
  let ca: string | undefined;
  if (caFile) {
    try {
      ca = readFileSync(caFile, 'utf8');
    } catch (e) {
      throw new LdapConfigError(`${where}ca_file ${caFile} cannot be read (${(e as Error).message})`);
    }
  }
  const attrs = (raw.attributes ?? {}) as Record<string, unknown>;
  const timeout = Number(raw.timeout ?? 10);
  if (!Number.isFinite(timeout) || timeout <= 0 || timeout > 600) throw new LdapConfigError(`${where}timeout must be between 0 and 600 seconds`);
  const uid = str(raw.uid) ?? 'uid';
  return {
    provider,
    url: url.replace(/\/$/, ''),
    bindDn: str(raw.bind_dn),
    bindPassword: str(raw.password ?? raw.bind_password),
    base,
    uid,
    userFilter,
    encryption,
    ca,
    caFile,
    verifyCertificates: bool(raw.verify_certificates, `${where}verify_certificates`, true),
    activeDirectory: bool(raw.active_directory, `${where}active_directory`, false),
    allowUsernameOrEmailLogin: bool(raw.allow_username_or_email_login, `${where}allow_username_or_email_login`, false),
    blockAutoCreatedUsers: bool(raw.block_auto_created_users, `${where}block_auto_created_users`, false),
    attributes: {
      username: list(
        attrs.username,
        [uid, 'uid', 'userid', 'sAMAccountName'].filter((v, i, a) => a.indexOf(v) === i),
      ),
      email: list(attrs.email, ['mail', 'email', 'userPrincipalName']),
      name: list(attrs.name, ['cn', 'displayName']),
      firstName: list(attrs.first_name, ['givenName']),
      lastName: list(attrs.last_name, ['sn']),
    },
    timeoutMs: Math.round(timeout * 1000),
  };
}

function balanced(filter: string): boolean {
  let depth = 0;
  for (let i = 0; i < filter.length; i++) {
    if (filter[i] === '\\') i += 2;
    else if (filter[i] === '(') depth++;
    else if (filter[i] === ')' && --depth < 0) return false;
  }
  return depth === 0;
}

/**
 * LDAP servers: `LDAP_SERVERS` (a JSON list of server objects with GitLab's gitlab.yml keys) or the
 * single-server shorthand `LDAP_URL`, `LDAP_BASE`, `LDAP_BIND_DN` ... No server configured: LDAP is
 * off. An `LDAP_*` variable this server does not know, or a shorthand variable beside
 * `LDAP_SERVERS` (where it would not apply), refuses to boot.
 */
export function parseLdapConfig(env: NodeJS.ProcessEnv, configError: (msg: string) => Error): LdapConfig {
  const interval = env.LDAP_SYNC_INTERVAL ? Number(env.LDAP_SYNC_INTERVAL) : 3600;
  if (!/^\d+$/.test(String(interval)) || interval < 1 || interval > 30 * 86_400)
    throw configError('LDAP_SYNC_INTERVAL must be a number of seconds between 1 and 2592000');
  try {
    const variables = Object.keys(env).filter((k) => k.startsWith('LDAP_') && env[k] !== undefined && env[k] !== '');
    const shorthand = variables.filter((k) => !GLOBAL_VARIABLES.has(k));
    for (const k of shorthand) {
      if (!SHORTHAND.has(k)) throw unknownKey(k, k, [...SHORTHAND, ...GLOBAL_VARIABLES]);
    }
    if (env.LDAP_SERVERS && shorthand.length) {
      throw new LdapConfigError(`${shorthand.join(', ')} would be ignored beside LDAP_SERVERS: put the setting in the server objects instead`);
    }
    let raws: Record<string, unknown>[] = [];
    if (env.LDAP_SERVERS) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(env.LDAP_SERVERS);
      } catch {
        throw new LdapConfigError('LDAP_SERVERS must be a JSON list of server objects');
      }
      if (!Array.isArray(parsed) || parsed.some((s) => typeof s !== 'object' || s === null || Array.isArray(s))) {
        throw new LdapConfigError('LDAP_SERVERS must be a JSON list of server objects');
      }
      raws = parsed as Record<string, unknown>[];
    } else if (env.LDAP_URL || env.LDAP_HOST) {
      const attributes = {
        username: env.LDAP_ATTRIBUTE_USERNAME,
        email: env.LDAP_ATTRIBUTE_EMAIL,
        name: env.LDAP_ATTRIBUTE_NAME,
        first_name: env.LDAP_ATTRIBUTE_FIRST_NAME,
        last_name: env.LDAP_ATTRIBUTE_LAST_NAME,
      };
      const raw: Record<string, unknown> = {
        provider: env.LDAP_PROVIDER,
        url: env.LDAP_URL,
        host: env.LDAP_HOST,
        port: env.LDAP_PORT,
        method: env.LDAP_METHOD,
        encryption: env.LDAP_ENCRYPTION,
        bind_dn: env.LDAP_BIND_DN,
        password: env.LDAP_BIND_PASSWORD,
        base: env.LDAP_BASE,
        uid: env.LDAP_UID,
        user_filter: env.LDAP_USER_FILTER,
        ca_file: env.LDAP_CA_FILE,
        verify_certificates: env.LDAP_VERIFY_CERTIFICATES,
        active_directory: env.LDAP_ACTIVE_DIRECTORY,
        allow_username_or_email_login: env.LDAP_ALLOW_USERNAME_OR_EMAIL_LOGIN,
        block_auto_created_users: env.LDAP_BLOCK_AUTO_CREATED_USERS,
        attributes: Object.fromEntries(Object.entries(attributes).filter(([, v]) => v)),
        timeout: env.LDAP_TIMEOUT,
      };
      raws = [Object.fromEntries(Object.entries(raw).filter(([, v]) => v !== undefined && v !== ''))];
    } else if (shorthand.length) {
      throw new LdapConfigError(`${shorthand.join(', ')} set without LDAP_URL or LDAP_HOST: LDAP would be off; set the server, or remove them`);
    }
    const prefix = env.LDAP_SERVERS ? (i: number) => `LDAP_SERVERS[${i}].` : () => 'LDAP (LDAP_URL ...): ';
    const servers = raws.map((r, i) => server(r, prefix(i)));
    const seen = new Set<string>();
    for (const s of servers) {
      if (seen.has(s.provider)) throw new LdapConfigError(`LDAP provider ${s.provider} is configured twice`);
      seen.add(s.provider);
    }
    return { servers, syncIntervalSeconds: interval };
  } catch (e) {
    if (e instanceof LdapConfigError) throw configError(e.message);
    throw e;
  }
}
