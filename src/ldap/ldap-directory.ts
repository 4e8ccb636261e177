import { Client, Entry, InvalidCredentialsError, NoSuchObjectError, ResultCodeError } from 'ldapts';
import { ConnectionOptions } from 'node:tls';
import { LdapServerConfig } from '../config/ldap-config';

/** What sign-in and synchronisation read from a directory entry. */
export interface LdapPerson {
  dn: string;
  username?: string;
  email?: string;
  name?: string;
  /** Active Directory's `userAccountControl` disabled bit (only read with `active_directory`). */
  disabled: boolean;
}

/**
 * The directory did not answer as a directory (network, TLS, timeout, the service account's bind
 * refused, a server error): nothing may be concluded about any user from it.
 */
export class DirectoryUnavailable extends Error {
  constructor(
    readonly provider: string,
    cause: unknown,
  ) {
    super(`LDAP server ${provider} unavailable: ${explain(cause)}`);
  }
}

/** An LDAP result by its name and code (ldapts' own messages are often just the code), else the error's message. */
function explain(cause: unknown): string {
  if (cause instanceof ResultCodeError) return `${cause.name.replace(/Error$/, '')} (LDAP result ${cause.code})`;
  return cause instanceof Error ? cause.message || cause.name : String(cause);
}

/** RFC 4515 escaping of a value inside a filter: `*`, `(`, `)`, `\` and NUL (and non-ASCII as UTF-8 bytes). */
export function escapeFilterValue(value: string): string {
  let out = '';
  for (const byte of Buffer.from(value, 'utf8')) {
    const c = String.fromCharCode(byte);
    out += byte < 0x20 || byte > 0x7e || c === '*' || c === '(' || c === ')' || c === '\\' ? `\\${byte.toString(16).padStart(2, '0')}` : c;
  }
  return out;
}

const AD_ACCOUNT_DISABLED = 0x2;

function first(entry: Entry, names: string[]): string | undefined {
  const lower = new Map(Object.keys(entry).map((k) => [k.toLowerCase(), k]));
  for (const n of names) {
    const key = lower.get(n.toLowerCase());
    if (!key) continue;
    const v = entry[key];
    const s = Array.isArray(v) ? v[0] : v;
    if (s !== undefined && String(s) !== '') return String(s);
  }
  return undefined;
}

/**
 * One connection to one configured server: TLS as configured (StartTLS before anything is sent, or
 * LDAPS), then the service account's bind. Every operation has the server's timeout.
 */
export class LdapConnection {
  private constructor(
    readonly server: LdapServerConfig,
    private readonly client: Client,
  ) {}

  static async open(server: LdapServerConfig): Promise<LdapConnection> {
    const tlsOptions: ConnectionOptions = { rejectUnauthorized: server.verifyCertificates, ...(server.ca ? { ca: server.ca } : {}) };
    const client = new Client({
      url: server.url,
      timeout: server.timeoutMs,
      connectTimeout: server.timeoutMs,
      strictDN: false,
      ...(server.encryption === 'simple_tls' ? { tlsOptions } : {}),
    });
    const conn = new LdapConnection(server, client);
    try {
      await withTimeout(server.timeoutMs, async () => {
        if (server.encryption === 'start_tls') await client.startTLS(tlsOptions);
        if (server.bindDn) await client.bind(server.bindDn, server.bindPassword ?? '');
        // anonymous: a read of the base, so that a server that does not answer shows here as well
        else await client.search(server.base, { scope: 'base', filter: '(objectClass=*)', attributes: ['1.1'], sizeLimit: 1 });
      });
    } catch (e) {
      await conn.close();
      throw new DirectoryUnavailable(server.provider, e);
    }
    return conn;
  }

  /**
   * Ends the session. Called from \`finally\` blocks and after a failed bind, where an error here would
   * hide the one that matters; ldapts destroys the socket whether the unbind request went out or not,
   * so a failed unbind leaves nothing open and nothing to act on.
   */
  async close(): Promise<void> {
    await this.client.unbind().catch(() => undefined);
  }

  private attributes(): string[] {
    const a = this.server.attributes;
    return [
      ...new Set([
        ...a.username,
        ...a.email,
        ...a.name,
        ...a.firstName,
        ...a.lastName,
        this.server.uid,
        ...(this.server.activeDirectory ? ['userAccountControl'] : []),
      ]),
    ];
  }

  private person(entry: Entry): LdapPerson {
    const a = this.server.attributes;
    const uac = Number(first(entry, ['userAccountControl']) ?? 0);
    return {
      dn: entry.dn,
      username: first(entry, a.username),
      email: first(entry, a.email),
      // gitlab.yml: without a name, first_name and last_name joined
      name: first(entry, a.name) ?? ([first(entry, a.firstName), first(entry, a.lastName)].filter(Boolean).join(' ') || undefined),
      disabled: this.server.activeDirectory && (uac & AD_ACCOUNT_DISABLED) !== 0,
    };
  }

  /** `(&(uid=login)(user_filter))`, or `(|(uid=login)(mail=login))` with username-or-email login. */
  private loginFilter(login: string): string {
    const v = escapeFilterValue(login);
    let match = `(${this.server.uid}=${v})`;
    if (this.server.allowUsernameOrEmailLogin && login.includes('@')) {
      match = `(|${match}${this.server.attributes.email.map((m) => `(${m}=${v})`).join('')})`;
    }
    return this.server.userFilter ? `(&${match}${this.server.userFilter})` : match;
  }

  /** The one entry a login names under the base (matching the filter); none or several: null. */
  async findByLogin(login: string): Promise<LdapPerson | null> {
    const entries = await this.op(() =>
      this.client.search(this.server.base, { scope: 'sub', filter: this.loginFilter(login), attributes: this.attributes(), sizeLimit: 2 }),
    );
    return entries.searchEntries.length === 1 ? this.person(entries.searchEntries[0]) : null;
  }

  /**
   * The entry at `dn` if it is still there and still matches the filter; null when the directory
   * says it is gone or no longer matches.
   */
  async findByDn(dn: string): Promise<LdapPerson | null> {
    try {
      const r = await this.op(() =>
        this.client.search(dn, { scope: 'base', filter: this.server.userFilter ?? '(objectClass=*)', attributes: this.attributes() }),
      );
      return r.searchEntries.length === 1 ? this.person(r.searchEntries[0]) : null;
    } catch (e) {
      if (e instanceof NoSuchObjectError) return null;
      throw e;
    }
  }

  /**
   * Binds as `dn` with `password` (the user's own credentials): true when the directory accepts
   * them. An empty password is refused here, never sent (an empty simple bind is an anonymous bind
   * that many servers accept: RFC 4513 5.1.2).
   */
  async verifyPassword(dn: string, password: string): Promise<boolean> {
    if (password === '') return false;
    try {
      await this.op(() => this.client.bind(dn, password));
      return true;
    } catch (e) {
      if (e instanceof InvalidCredentialsError) return false;
      throw e;
    }
  }

  /** Runs an operation; anything but an LDAP result the caller handles is DirectoryUnavailable. */
  private async op<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await withTimeout(this.server.timeoutMs, fn);
    } catch (e) {
      if (e instanceof InvalidCredentialsError || e instanceof NoSuchObjectError) throw e;
      if (e instanceof ResultCodeError && !(e.code >= 51 && e.code <= 54) && e.code !== 80) throw e; // an answer, not an outage
      throw new DirectoryUnavailable(this.server.provider, e);
    }
  }
}

/** `fn`, or a rejection after `ms` (ldapts' own timeouts do not cover every step, e.g. a stalled TLS handshake). */
async function withTimeout<T>(ms: number, fn: () => Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      fn(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** `cli check`: opens (TLS, service bind) each server; per provider null when it works, else why not. */
export async function checkLdapServers(servers: LdapServerConfig[]): Promise<{ provider: string; url: string; result: string | null }[]> {
  const out: { provider: string; url: string; result: string | null }[] = [];
  for (const server of servers) {
    try {
      const conn = await LdapConnection.open(server);
      await conn.close();
      out.push({ provider: server.provider, url: server.url, result: null });
    } catch (e) {
      out.push({ provider: server.provider, url: server.url, result: e instanceof Error ? e.message : String(e) });
    }
  }
  return out;
}
