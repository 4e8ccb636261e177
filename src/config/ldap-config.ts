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
  /** Attribute names read from the entry, first present wins. */
  attributes: { username: string[]; email: string[]; name: string[] };
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
  const encryption = (str(raw.encryption) ?? 'plain') as LdapEncryption;
  if (!ENCRYPTIONS.includes(encryption)) throw new LdapConfigError(`${where}encryption must be one of ${ENCRYPTIONS.join(', ')}`);
  let url = str(raw.url);
  if (!url && str(raw.host)) {
    const port = Number(raw.port ?? (encryption === 'simple_tls' ? 636 : 389));
    url = `${encryption === 'simple_tls' ? 'ldaps' : 'ldap'}://${String(raw.host)}:${port}`;
  }
  if (!url) throw new LdapConfigError(`${where}url (or host) is required`);
  if (!/^ldaps?:\/\/[^/\s]+\/?$/.test(url)) throw new LdapConfigError(`${where}url must be ldap://host[:port] or ldaps://host[:port], got "${url}"`);
  if (url.startsWith('ldaps:') !== (encryption === 'simple_tls')) {
    throw new LdapConfigError(`${where}url "${url}" does not fit encryption ${encryption} (simple_tls is ldaps://, plain and start_tls are ldap://)`);
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
 * single-server shorthand `LDAP_URL`, `LDAP_BASE`, `LDAP_BIND_DN` ... (ignored when `LDAP_SERVERS`
 * is set). No server configured: LDAP is off.
 */
export function parseLdapConfig(env: NodeJS.ProcessEnv, configError: (msg: string) => Error): LdapConfig {
  const interval = env.LDAP_SYNC_INTERVAL ? Number(env.LDAP_SYNC_INTERVAL) : 3600;
  if (!/^\d+$/.test(String(interval)) || interval < 1 || interval > 30 * 86_400)
    throw configError('LDAP_SYNC_INTERVAL must be a number of seconds between 1 and 2592000');
  try {
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
      raws = [
        {
          provider: env.LDAP_PROVIDER,
          url: env.LDAP_URL,
          host: env.LDAP_HOST,
          port: env.LDAP_PORT,
          bind_dn: env.LDAP_BIND_DN,
          password: env.LDAP_BIND_PASSWORD,
          base: env.LDAP_BASE,
          uid: env.LDAP_UID,
          user_filter: env.LDAP_USER_FILTER,
          encryption: env.LDAP_ENCRYPTION,
          ca_file: env.LDAP_CA_FILE,
          verify_certificates: env.LDAP_VERIFY_CERTIFICATES,
          active_directory: env.LDAP_ACTIVE_DIRECTORY,
          allow_username_or_email_login: env.LDAP_ALLOW_USERNAME_OR_EMAIL_LOGIN,
          block_auto_created_users: env.LDAP_BLOCK_AUTO_CREATED_USERS,
          attributes: { username: env.LDAP_ATTRIBUTE_USERNAME, email: env.LDAP_ATTRIBUTE_EMAIL, name: env.LDAP_ATTRIBUTE_NAME },
          timeout: env.LDAP_TIMEOUT,
        },
      ];
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
