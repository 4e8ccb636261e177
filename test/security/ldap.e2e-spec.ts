import { createServer, Server, Socket } from 'node:net';
import { escapeFilterValue } from '../../src/ldap/ldap-directory';
import { loadConfig } from '../../src/config/config';
import { Client } from 'ldapts';
import { ADMIN_DN, ADMIN_PASSWORD, BASE, DirectoryUser, ldapEnv, Slapd, SLAPD_BIN, userDn } from '../helpers/slapd';
import { startTestApp, TestApp } from '../helpers/test-app';

const API = '/api/v3';
const alice: DirectoryUser = { uid: 'alice', password: 'alice-directory-pw', mail: 'alice@corp.example' };
const bob: DirectoryUser = { uid: 'bob', password: 'bob-directory-pw', mail: 'bob@corp.example' };
const mallory: DirectoryUser = { uid: 'mallory', password: 'mallory-directory-pw', mail: 'mallory@corp.example', ou: 'contractors' };

/**
 * LDAP sign-in under attack, against a real slapd: filter injection through the login (RFC 4515
 * escaping), the anonymous-bind trap (empty password), and the sign-in throttle counting LDAP
 * attempts as it counts local ones.
 */
(SLAPD_BIN ? describe : describe.skip)('security: LDAP sign-in', () => {
  let slapd: Slapd;
  let t: TestApp;
  const signIn = (login: string, password: string, ip = '198.51.100.7') => t.http.post(`${API}/session`).set('X-Forwarded-For', ip).send({ login, password });
  const users = async () => (await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM users`))[0].n;

  beforeAll(async () => {
    slapd = await Slapd.start([alice, bob, mallory], { ous: ['contractors'] });
    t = await startTestApp({ ...ldapEnv(slapd, { LDAP_USER_FILTER: `(&(objectClass=inetOrgPerson)(!(ou:dn:=contractors)))` }), TRUST_PROXY: 'true' });
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await slapd?.close();
  });

  it('RFC 4515 escaping of filter values', () => {
    expect(escapeFilterValue('*)(uid=*')).toBe('\\2a\\29\\28uid=\\2a');
    expect(escapeFilterValue('a\\b\u0000c')).toBe('a\\5cb\\00c');
    expect(escapeFilterValue('José')).toBe('Jos\\c3\\a9');
  });

  // each of these, unescaped, would match alice (or everyone) and bind as alice with her password
  it.each([
    'al*',
    '*lice',
    'a*e',
    '*',
    '*)(uid=*',
    'alice)(uid=*',
    '*)(|(uid=alice',
    'alice)(|(objectClass=*',
    'x)(uid=alice',
    'alice\u0000',
    '\\61lice',
    'mallory)(ou=people',
  ])('the login %j finds nothing (401), even with a real password', async (login) => {
    const before = await users();
    const ip = `198.51.100.${Math.floor(Math.random() * 200) + 20}`;
    for (const password of [alice.password, mallory.password]) {
      const res = await signIn(login, password, ip);
      expect([400, 401]).toContain(res.status);
    }
    expect(await users()).toBe(before);
  });

  it('an entry outside the filter stays out however the login is written', async () => {
    for (const login of ['mallory', 'MALLORY', 'mallory*', '(uid=mallory)']) {
      expect((await signIn(login, mallory.password, '198.51.100.9')).status).toBe(401);
    }
  });

  it('an empty or blank password never reaches the directory as an anonymous bind (git Basic, OAuth grant, session)', async () => {
    const before = await users();
    await signIn('alice', '').expect(400);
    const grant = await t.http.post('/oauth/token').type('form').send({ grant_type: 'password', username: 'alice', password: '' });
    expect([400, 401]).toContain(grant.status);
    const basic = `Basic ${Buffer.from('alice:').toString('base64')}`;
    await t.http.get('/alice/x.git/info/refs').query({ service: 'git-upload-pack' }).set('Authorization', basic).expect(401);
    expect(await users()).toBe(before);
    // the directory itself accepts a bind as alice's DN with an empty password (unauthenticated): the guard is ours
    const c = new Client({ url: slapd.url });
    try {
      await expect(c.bind(userDn(alice), '')).resolves.toBeUndefined();
      await expect(c.bind(userDn(alice), 'wrong')).rejects.toThrow();
    } finally {
      await c.unbind();
    }
  });

  it('the sign-in throttle counts LDAP attempts: 10 wrong directory passwords lock the login (429), even for the right one', async () => {
    const ip = '198.51.100.77';
    for (let i = 0; i < 10; i++) expect((await signIn('bob', `wrong-${i}`, ip)).status).toBe(401);
    const locked = await signIn('bob', bob.password, ip);
    expect(locked.status).toBe(429);
    expect(locked.body.message).toMatch(/^429 Too Many Requests - this login is locked/);
    // another IP is not locked, and signs bob in through the directory
    await signIn('bob', bob.password, '198.51.100.78').expect(201);
  });

  it('after the first sign-in, the account budget is shared between username and email (LDAP user too)', async () => {
    await signIn('alice', alice.password, '198.51.100.80').expect(201);
    const ip = '198.51.100.81';
    for (let i = 0; i < 5; i++) expect((await signIn('alice', `wrong-${i}`, ip)).status).toBe(401);
    for (let i = 0; i < 5; i++) expect((await signIn('alice@corp.example', `wrong-${i}`, ip)).status).toBe(401);
    expect((await signIn('alice', alice.password, ip)).status).toBe(429);
  });
});

/**
 * A TCP relay in front of slapd that keeps every byte the client sent, per connection: what crossed
 * the network, as someone on the path would see it.
 */
class RecordingRelay {
  readonly connections: Buffer[][] = [];
  private readonly sockets = new Set<Socket>();
  private readonly server: Server;

  private constructor(private readonly targetPort: number) {
    this.server = createServer((client) => this.relay(client));
  }

  static async start(targetPort: number): Promise<RecordingRelay> {
    const relay = new RecordingRelay(targetPort);
    await new Promise<void>((resolve) => relay.server.listen(0, '127.0.0.1', resolve));
    return relay;
  }

  get port(): number {
    return (this.server.address() as { port: number }).port;
  }

  private relay(client: Socket): void {
    const sent: Buffer[] = [];
    this.connections.push(sent);
    const upstream = new Socket();
    for (const s of [client, upstream]) {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
      s.on('error', () => undefined);
    }
    client.on('data', (d: Buffer) => sent.push(Buffer.from(d)));
    upstream.connect(this.targetPort, '127.0.0.1');
    client.pipe(upstream);
    upstream.pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  }

  close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/**
 * gitlab.yml's LDAP keys with GitLab 8.17's meaning (lib/gitlab/ldap/config.rb): `method: 'tls'` is
 * StartTLS, `method: 'ssl'` is LDAPS (simple_tls), `method: 'plain'` none. The bytes on the wire show
 * which: no password crosses in clear once TLS is asked for. And any key that is not understood
 * refuses to boot, so that a misspelled setting cannot leave the connection in clear.
 */
(SLAPD_BIN ? describe : describe.skip)('security: LDAP encryption as gitlab.yml asks for it', () => {
  let slapd: Slapd;
  const STARTTLS_OID = '1.3.6.1.4.1.1466.20037';

  beforeAll(async () => {
    slapd = await Slapd.start([bob]);
  }, 60_000);
  afterAll(async () => {
    await slapd?.close();
  });

  /** Signs bob in through a relay to `targetPort`, with a gitlab.yml server (host, port, method ...); what the client sent. */
  async function signInThrough(targetPort: number, settings: Record<string, unknown>): Promise<{ status: number; sent: Buffer[][]; name?: string }> {
    const relay = await RecordingRelay.start(targetPort);
    const server = {
      label: 'LDAP',
      host: '127.0.0.1',
      port: relay.port,
      uid: 'uid',
      base: BASE,
      bind_dn: ADMIN_DN,
      password: ADMIN_PASSWORD,
      timeout: 5,
      ...settings,
    };
    const t = await startTestApp({ LDAP_SERVERS: JSON.stringify([server]) });
    try {
      const res = await t.http.post(`${API}/session`).send({ login: 'bob', password: bob.password });
      return { status: res.status, sent: relay.connections, name: (res.body as { name?: string }).name };
    } finally {
      await t.close();
      await relay.close();
    }
  }

  const clear = (sent: Buffer[][]) => Buffer.concat(sent.flat()).toString('latin1');

  it("method: 'plain' (the control): the passwords cross in clear, as 8.17 sent them", async () => {
    const r = await signInThrough(slapd.port, { method: 'plain' });
    expect(r.status).toBe(201);
    expect(clear(r.sent)).toContain(ADMIN_PASSWORD);
    expect(clear(r.sent)).toContain(bob.password);
  }, 60_000);

  it("method: 'tls' is StartTLS: every connection asks for it first, then speaks TLS; no password in clear", async () => {
    const r = await signInThrough(slapd.port, { method: 'tls', ca_file: slapd.caFile });
    expect(r.status).toBe(201);
    expect(r.sent.length).toBeGreaterThan(0);
    for (const conn of r.sent) {
      const bytes = Buffer.concat(conn);
      const startTls = bytes.indexOf(STARTTLS_OID, 0, 'latin1');
      expect(startTls).toBeGreaterThan(0);
      expect(startTls).toBeLessThan(40); // the first message: the StartTLS extended request
      expect(bytes.subarray(startTls).indexOf(Buffer.from([0x16, 0x03]))).toBeGreaterThan(0); // then a TLS handshake
    }
    expect(clear(r.sent)).not.toContain(ADMIN_PASSWORD);
    expect(clear(r.sent)).not.toContain(bob.password);
  }, 60_000);

  it("method: 'ssl' is LDAPS (simple_tls): TLS from the first byte; no password in clear", async () => {
    const r = await signInThrough(slapd.tlsPort, { method: 'ssl', ca_file: slapd.caFile });
    expect(r.status).toBe(201);
    expect(r.sent.length).toBeGreaterThan(0);
    for (const conn of r.sent) expect([...Buffer.concat(conn).subarray(0, 2)]).toEqual([0x16, 0x03]);
    expect(clear(r.sent)).not.toContain(ADMIN_PASSWORD);
    expect(clear(r.sent)).not.toContain(bob.password);
    expect(clear(r.sent)).not.toContain(STARTTLS_OID);
  }, 60_000);

  it("gitlab.yml's attributes: without the name attribute, first_name and last_name joined", async () => {
    const r = await signInThrough(slapd.port, { method: 'plain', attributes: { name: 'displayName', first_name: 'uid', last_name: 'sn' } });
    expect(r.status).toBe(201);
    expect(r.name).toBe('bob bob'); // uid and sn (no displayName in the entry)
  }, 60_000);

  it("method: 'tls' against a certificate it cannot verify: refused (401), the password not sent", async () => {
    const r = await signInThrough(slapd.port, { method: 'tls', ca_file: slapd.otherCaFile });
    expect(r.status).toBe(401);
    expect(clear(r.sent)).not.toContain(ADMIN_PASSWORD);
    expect(clear(r.sent)).not.toContain(bob.password);
  }, 60_000);

  it('a key or value that is not understood refuses to boot, naming it (never a silent fallback to clear text)', () => {
    const env = { DATA_DIR: slapd.dir };
    const servers = (extra: Record<string, unknown>) => ({
      ...env,
      LDAP_SERVERS: JSON.stringify([{ host: '127.0.0.1', port: slapd.port, base: BASE, ...extra }]),
    });
    const refused = (e: Record<string, string | undefined>) => {
      try {
        loadConfig(e);
      } catch (err) {
        expect(err).toBeInstanceOf(Error);
        expect((err as Error).constructor.name).toBe('ConfigError');
        return (err as Error).message;
      }
      throw new Error(`booted with ${JSON.stringify(e)}`);
    };
    expect(refused(servers({ metod: 'tls' }))).toBe(
      'LDAP_SERVERS[0].metod is not a setting this server understands (did you mean method?): refused rather than ignored',
    );
    expect(refused(servers({ method: 'tsl' }))).toBe('LDAP_SERVERS[0].method must be one of plain, tls (StartTLS), ssl (LDAPS), got "tsl"');
    expect(refused(servers({ method: 'start_tls' }))).toMatch(/method must be one of/);
    expect(refused(servers({ encryption: 'tls' }))).toMatch(/encryption must be one of plain, start_tls, simple_tls, got "tls"/);
    expect(refused(servers({ method: 'tls', encryption: 'simple_tls' }))).toMatch(/method "tls" \(start_tls\) and encryption "simple_tls" disagree/);
    expect(refused(servers({ method: 'tls', verify_certificate: false }))).toMatch(/verify_certificate is not a setting .*did you mean verify_certificates\?/);
    expect(refused(servers({ attributes: { emial: 'mail' } }))).toMatch(/LDAP_SERVERS\[0\]\.attributes\.emial is not a setting .*did you mean email\?/);
    expect(refused(servers({ group_base: 'ou=groups,dc=example,dc=org' }))).toMatch(/group_base is a GitLab EE setting/);
    expect(refused(servers({ url: slapd.url, method: 'ssl' }))).toMatch(/give url, or host and port, not both/);
    expect(refused(servers({ port: 'ldap' }))).toMatch(/port must be a number/);
    // the single-server shorthand: a misspelled variable, one that would be ignored beside LDAP_SERVERS, or one without a server
    expect(refused({ ...env, LDAP_URL: slapd.url, LDAP_BASE: BASE, LDAP_ENCRYPTON: 'start_tls' })).toBe(
      'LDAP_ENCRYPTON is not a setting this server understands (did you mean LDAP_ENCRYPTION?): refused rather than ignored',
    );
    expect(refused({ ...servers({}), LDAP_ENCRYPTION: 'start_tls' })).toMatch(/LDAP_ENCRYPTION would be ignored beside LDAP_SERVERS/);
    expect(refused({ ...env, LDAP_METHOD: 'tls', LDAP_BASE: BASE })).toMatch(/set without LDAP_URL or LDAP_HOST/);
    // what is understood boots, with 8.17's meaning
    const ok = (extra: Record<string, unknown>) => loadConfig(servers(extra)).ldap.servers[0];
    expect(ok({ method: 'tls' })).toMatchObject({ encryption: 'start_tls', url: `ldap://127.0.0.1:${slapd.port}` });
    expect(ok({ method: 'ssl', port: slapd.tlsPort })).toMatchObject({ encryption: 'simple_tls', url: `ldaps://127.0.0.1:${slapd.tlsPort}` });
    expect(ok({ method: 'ssl', port: undefined })).toMatchObject({ url: 'ldaps://127.0.0.1:636' });
    expect(ok({ method: 'plain', label: 'Corp', attributes: { first_name: 'givenName', last_name: 'sn' } })).toMatchObject({ encryption: 'plain' });
    expect(loadConfig({ ...env, LDAP_URL: slapd.url, LDAP_BASE: BASE, LDAP_METHOD: 'tls' }).ldap.servers[0].encryption).toBe('start_tls');
  });
});
