import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'ldapts';

/**
 * A real OpenLDAP `slapd` (Debian's package: `apt-get install slapd ldap-utils`) for tests: a
 * throw-away slapd.conf (mdb backend) in a temp dir, plain LDAP (StartTLS offered) and LDAPS on free
 * loopback ports, a test CA and server certificate made with openssl, and users loaded with slapadd.
 * Never a system service: started and stopped by the test.
 */
export const SLAPD_BIN = ['/usr/sbin/slapd', '/usr/local/sbin/slapd'].find((p) => existsSync(p));
export const BASE = 'dc=example,dc=org';
export const ADMIN_DN = `cn=admin,${BASE}`;
export const ADMIN_PASSWORD = 'directory-admin-secret';

export interface DirectoryUser {
  uid: string;
  password: string;
  mail?: string;
  cn?: string;
  /** Organisational unit under the base (`people` by default; the filter tests use another). */
  ou?: string;
  /** Active Directory's account flags (0x2: disabled), through a small test schema. */
  userAccountControl?: number;
}

export const userDn = (u: Pick<DirectoryUser, 'uid' | 'ou'>) => `uid=${u.uid},ou=${u.ou ?? 'people'},${BASE}`;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

function entryLdif(u: DirectoryUser): string {
  const lines = [
    `dn: ${userDn(u)}`,
    'objectClass: inetOrgPerson',
    ...(u.userAccountControl !== undefined ? ['objectClass: adAccount', `userAccountControl: ${u.userAccountControl}`] : []),
    `uid: ${u.uid}`,
    `cn: ${u.cn ?? u.uid}`,
    `sn: ${u.uid}`,
    ...(u.mail ? [`mail: ${u.mail}`] : []),
    `userPassword: ${u.password}`,
  ];
  return lines.join('\n') + '\n\n';
}

const AD_SCHEMA = `attributetype ( 1.3.6.1.4.1.55555.1.1 NAME 'userAccountControl' EQUALITY integerMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.27 SINGLE-VALUE )
objectclass ( 1.3.6.1.4.1.55555.2.1 NAME 'adAccount' SUP top AUXILIARY MAY ( userAccountControl ) )
`;

export class Slapd {
  private proc?: ChildProcess;

  private constructor(
    readonly dir: string,
    readonly port: number,
    readonly tlsPort: number,
  ) {}

  get url(): string {
    return `ldap://127.0.0.1:${this.port}`;
  }
  get ldapsUrl(): string {
    return `ldaps://127.0.0.1:${this.tlsPort}`;
  }
  /** The test CA that signed the server's certificate. */
  get caFile(): string {
    return join(this.dir, 'ca.pem');
  }
  /** A CA that signed nothing of this server's (an "unknown CA"). */
  get otherCaFile(): string {
    return join(this.dir, 'other-ca.pem');
  }

  /**
   * Generates the configuration, certificates and the users' LDIF, loads it with slapadd, and starts
   * slapd. `ous` are the organisational units created under the base (people and others).
   */
  static async start(users: DirectoryUser[], opts: { ous?: string[] } = {}): Promise<Slapd> {
    if (!SLAPD_BIN) throw new Error('slapd is not installed (apt-get install slapd ldap-utils)');
    const dir = mkdtempSync(join(tmpdir(), 'slapd-'));
    const s = new Slapd(dir, await freePort(), await freePort());
    s.makeCertificates();
    mkdirSync(join(dir, 'db'));
    writeFileSync(join(dir, 'ad.schema'), AD_SCHEMA);
    writeFileSync(
      join(dir, 'slapd.conf'),
      [
        ...['core', 'cosine', 'inetorgperson', 'nis'].map((n) => `include /etc/ldap/schema/${n}.schema`),
        `include ${dir}/ad.schema`,
        `pidfile ${dir}/slapd.pid`,
        `argsfile ${dir}/slapd.args`,
        'modulepath /usr/lib/ldap',
        'moduleload back_mdb',
        `TLSCACertificateFile ${dir}/ca.pem`,
        `TLSCertificateFile ${dir}/server.pem`,
        `TLSCertificateKeyFile ${dir}/server.key`,
        'sizelimit unlimited',
        // like Active Directory and many servers: a DN with an empty password is an anonymous bind that
        // succeeds (RFC 4513 5.1.2) — the trap the client must never fall into
        'allow bind_anon_dn',
        'database mdb',
        'maxsize 1073741824',
        `suffix "${BASE}"`,
        `rootdn "${ADMIN_DN}"`,
        `rootpw ${ADMIN_PASSWORD}`,
        `directory ${dir}/db`,
        'index objectClass eq',
        'index uid,mail eq',
        'access to attrs=userPassword by self write by anonymous auth by * none',
        'access to * by * read',
        '',
      ].join('\n'),
    );
    const ous = [...new Set(['people', ...(opts.ous ?? []), ...users.map((u) => u.ou ?? 'people')])];
    const ldif =
      `dn: ${BASE}\nobjectClass: dcObject\nobjectClass: organization\no: Example\ndc: example\n\n` +
      ous.map((ou) => `dn: ou=${ou},${BASE}\nobjectClass: organizationalUnit\nou: ${ou}\n\n`).join('') +
      users.map(entryLdif).join('');
    writeFileSync(join(dir, 'users.ldif'), ldif);
    execFileSync(SLAPD_BIN.replace(/slapd$/, 'slapadd'), ['-q', '-f', join(dir, 'slapd.conf'), '-l', join(dir, 'users.ldif')], { stdio: 'pipe' });
    await s.run();
    return s;
  }

  private makeCertificates(): void {
    const ssl = (...args: string[]) => execFileSync('openssl', args, { cwd: this.dir, stdio: 'pipe' });
    for (const ca of ['ca', 'other-ca']) {
      ssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${ca}.key`, '-out', `${ca}.pem`, '-days', '2', '-subj', `/CN=Test ${ca}`);
    }
    ssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=127.0.0.1');
    writeFileSync(join(this.dir, 'san.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
    ssl('x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.pem', '-days', '2', '-extfile', 'san.ext');
  }

  /** Starts slapd (again, on the same ports and data) and waits until it accepts connections. */
  async run(): Promise<void> {
    if (this.proc) return;
    const proc = spawn(SLAPD_BIN as string, ['-h', `${this.url}/ ${this.ldapsUrl}/`, '-f', join(this.dir, 'slapd.conf'), '-d', '0'], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    proc.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    this.proc = proc;
    const deadline = Date.now() + 15_000;
    for (;;) {
      if (proc.exitCode !== null) throw new Error(`slapd exited (${proc.exitCode}): ${stderr}`);
      if (await accepts(this.port)) return;
      if (Date.now() > deadline) throw new Error(`slapd did not start: ${stderr}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Stops slapd (the data stays: `run()` brings the same directory back). */
  async stop(): Promise<void> {
    const proc = this.proc;
    if (!proc) return;
    this.proc = undefined;
    if (proc.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      proc.once('exit', () => resolve());
      proc.kill('SIGTERM');
      setTimeout(() => proc.kill('SIGKILL'), 5000).unref();
    });
  }

  async close(): Promise<void> {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** Runs `fn` with a client bound as the directory's administrator. */
  async admin<T>(fn: (c: Client) => Promise<T>): Promise<T> {
    const c = new Client({ url: this.url, timeout: 10_000 });
    try {
      await c.bind(ADMIN_DN, ADMIN_PASSWORD);
      return await fn(c);
    } finally {
      await c.unbind().catch(() => undefined);
    }
  }

  async addUser(u: DirectoryUser): Promise<void> {
    await this.admin((c) =>
      c.add(userDn(u), {
        objectClass: ['inetOrgPerson', ...(u.userAccountControl !== undefined ? ['adAccount'] : [])],
        uid: u.uid,
        cn: u.cn ?? u.uid,
        sn: u.uid,
        ...(u.mail ? { mail: u.mail } : {}),
        ...(u.userAccountControl !== undefined ? { userAccountControl: String(u.userAccountControl) } : {}),
        userPassword: u.password,
      }),
    );
  }

  async deleteUser(u: Pick<DirectoryUser, 'uid' | 'ou'>): Promise<void> {
    await this.admin((c) => c.del(userDn(u)));
  }

  async modify(u: Pick<DirectoryUser, 'uid' | 'ou'>, attribute: string, value: string): Promise<void> {
    const { Change, Attribute } = await import('ldapts');
    await this.admin((c) => c.modify(userDn(u), new Change({ operation: 'replace', modification: new Attribute({ type: attribute, values: [value] }) })));
  }
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = new Socket();
    sock.once('connect', () => {
      sock.destroy();
      resolve(true);
    });
    sock.once('error', () => resolve(false));
    sock.connect(port, '127.0.0.1');
  });
}

/** The env of one LDAP server for startTestApp (the single-server shorthand). */
export function ldapEnv(s: Slapd, extra: Record<string, string> = {}): Record<string, string> {
  return {
    LDAP_URL: s.url,
    LDAP_BASE: BASE,
    LDAP_BIND_DN: ADMIN_DN,
    LDAP_BIND_PASSWORD: ADMIN_PASSWORD,
    LDAP_TIMEOUT: '3',
    ...extra,
  };
}
