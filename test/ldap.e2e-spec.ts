import { createServer, Server, Socket } from 'node:net';
import request from 'supertest';
import type TestAgent from 'supertest/lib/agent';
import { App, createApp } from '../src/app.factory';
import { loadConfig } from '../src/config/config';
import { runChecks } from '../src/cli';
import { LdapSyncService } from '../src/ldap/ldap-sync.service';
import { waitFor } from './helpers/ci';
import { BASE, DirectoryUser, ldapEnv, Slapd, SLAPD_BIN, userDn } from './helpers/slapd';
import { startTestApp, TestApp } from './helpers/test-app';

/**
 * LDAP sign-in and synchronisation against a real OpenLDAP slapd started by the test (plain LDAP,
 * StartTLS and LDAPS with a test CA). `.ci/run` installs slapd; without it the suite says so.
 */
const API = '/api/v3';
const alice: DirectoryUser = { uid: 'alice', password: 'alice-directory-pw', mail: 'alice@corp.example', cn: 'Alice Liddell' };
const bob: DirectoryUser = { uid: 'bob', password: 'bob-directory-pw', mail: 'bob@corp.example', cn: 'Bob Builder' };
const carol: DirectoryUser = { uid: 'carol', password: 'carol-directory-pw', mail: 'carol@corp.example', cn: 'Carol' };
/** Outside ou=people: the filter of the suite excludes her. */
const mallory: DirectoryUser = { uid: 'mallory', password: 'mallory-directory-pw', mail: 'mallory@corp.example', ou: 'contractors' };
/** Holds the email of a local account. */
const dora: DirectoryUser = { uid: 'dora', password: 'dora-directory-pw', mail: 'dora-local@example.com' };
const eve: DirectoryUser = { uid: 'eve', password: 'eve-directory-pw', mail: 'eve@corp.example' };
const frank: DirectoryUser = { uid: 'frank', password: 'frank-directory-pw', mail: 'frank@corp.example' };
const gina: DirectoryUser = { uid: 'gina', password: 'gina-directory-pw', mail: 'gina@corp.example' };
const zed: DirectoryUser = { uid: 'zed', password: 'zed-directory-pw', mail: 'zed@corp.example' };
const FILTER = `(&(objectClass=inetOrgPerson)(!(ou:dn:=contractors)))`;

const describeSlapd = SLAPD_BIN ? describe : describe.skip;

// each app a test starts re-creates the database (PostgreSQL): one app at a time, describe by describe
describeSlapd('LDAP sign-in and synchronisation (real slapd)', () => {
  let slapd: Slapd;
  beforeAll(async () => {
    slapd = await Slapd.start([alice, bob, carol, mallory, dora, eve, frank, gina, zed], { ous: ['contractors'] });
  }, 60_000);
  afterAll(async () => {
    await slapd?.close();
  });
  const basic = (login: string, secret: string) => `Basic ${Buffer.from(`${login}:${secret}`).toString('base64')}`;

  describe('with a user filter', () => {
    let t: TestApp;
    const session = (login: string, password: string) => t.http.post(`${API}/session`).send({ login, password });
    const sync = () => t.app.app.get(LdapSyncService).syncAll();

    beforeAll(async () => {
      t = await startTestApp(ldapEnv(slapd, { LDAP_USER_FILTER: FILTER }));
    }, 60_000);
    afterAll(async () => {
      await t?.close();
    });

    describe('sign-in', () => {
      it('concurrent first sign-ins of one entry create one account and all succeed', async () => {
        const res = await Promise.all(Array.from({ length: 4 }, () => t.http.post(`${API}/session`).send({ login: 'zed', password: zed.password })));
        expect(res.map((r) => r.status)).toEqual([201, 201, 201, 201]);
        expect(new Set(res.map((r) => r.body.id)).size).toBe(1);
      });

      it('a first sign-in creates the user with the directory email and name and an ldapmain identity (DN)', async () => {
        const res = await session('alice', alice.password).expect(201);
        expect(res.body).toMatchObject({ username: 'alice', email: 'alice@corp.example', name: 'Alice Liddell', state: 'active' });
        expect(res.body.private_token).toEqual(expect.any(String));
        const shown = await t.http.get(`${API}/users/${res.body.id}`).set('PRIVATE-TOKEN', t.root.token).expect(200);
        expect(shown.body.identities).toEqual([{ provider: 'ldapmain', extern_uid: userDn(alice) }]);
        // the token works; the admin's search finds the LDAP user like any other
        await t.http.get(`${API}/user`).set('PRIVATE-TOKEN', res.body.private_token).expect(200);
        const found = await t.http.get(`${API}/users`).query({ search: 'alice' }).set('PRIVATE-TOKEN', t.root.token).expect(200);
        expect(found.body.map((u: { username: string }) => u.username)).toEqual(['alice']);
        // a second sign-in finds the same account
        const again = await session('ALICE', alice.password).expect(201);
        expect(again.body.id).toBe(res.body.id);
      });

      it('later sign-ins take the email and name the directory has now', async () => {
        await slapd.modify(alice, 'mail', 'alice.liddell@corp.example');
        await slapd.modify(alice, 'cn', 'Alice P. Liddell');
        const res = await session('alice', alice.password).expect(201);
        expect(res.body).toMatchObject({ email: 'alice.liddell@corp.example', name: 'Alice P. Liddell' });
      });

      it('a wrong password answers 401 and creates nobody', async () => {
        const res = await session('bob', 'not-his-password').expect(401);
        expect(res.body).toEqual({ message: '401 Unauthorized' });
        const rows: { n: number }[] = await t.sql(`SELECT count(*)::int AS n FROM users WHERE username = 'bob'`);
        expect(rows[0].n).toBe(0);
      });

      it('the user filter excludes an entry outside it (401, even with its right password)', async () => {
        await session('mallory', mallory.password).expect(401);
      });

      it('an empty password never binds (the anonymous-bind trap), over git Basic and the OAuth grant too', async () => {
        await session('bob', '').expect(400);
        await t.http
          .post('/oauth/token')
          .type('form')
          .send({ grant_type: 'password', username: 'bob', password: '' })
          .expect((r) => expect([400, 401]).toContain(r.status));
        const res = await t.http.get('/root/nothing.git/info/refs').query({ service: 'git-upload-pack' }).set('Authorization', basic('bob', ''));
        expect(res.status).toBe(401);
        const rows: { n: number }[] = await t.sql(`SELECT count(*)::int AS n FROM users WHERE username = 'bob'`);
        expect(rows[0].n).toBe(0);
      });

      it('the OAuth password grant and git over HTTP Basic accept LDAP credentials', async () => {
        const grant = await t.http.post('/oauth/token').type('form').send({ grant_type: 'password', username: 'bob', password: bob.password }).expect(200);
        const me = await t.http.get(`${API}/user`).set('Authorization', `Bearer ${grant.body.access_token}`).expect(200);
        expect(me.body).toMatchObject({ username: 'bob', email: 'bob@corp.example', identities: [{ provider: 'ldapmain', extern_uid: userDn(bob) }] });
        const project = await t.http.post(`${API}/projects`).set('Authorization', `Bearer ${grant.body.access_token}`).send({ name: 'bobs' }).expect(201);
        expect(project.body.path_with_namespace).toBe('bob/bobs');
        await t.http.get('/bob/bobs.git/info/refs').query({ service: 'git-receive-pack' }).set('Authorization', basic('bob', bob.password)).expect(200);
        await t.http.get('/bob/bobs.git/info/refs').query({ service: 'git-receive-pack' }).set('Authorization', basic('bob', 'wrong')).expect(401);
      });

      it('a local account whose email the directory holds is not taken over (401); an administrator links it', async () => {
        const local = await t.createUser({ username: 'dora', email: 'dora-local@example.com', password: 'dora-local-pw' });
        // the local login is local: its own password signs in, the directory's does not
        await session('dora', dora.password).expect(401);
        await session('dora', 'dora-local-pw').expect(201);
        // the administrator links it: from then on the directory decides and the local password is dead
        await t.http
          .put(`${API}/users/${local.id}`)
          .set('PRIVATE-TOKEN', t.root.token)
          .send({ provider: 'ldapmain', extern_uid: userDn(dora) })
          .expect(200);
        await session('dora', 'dora-local-pw').expect(401);
        const res = await session('dora', dora.password).expect(201);
        expect(res.body.id).toBe(local.id);
      });

      it('a directory user whose username a local account holds is refused, not merged', async () => {
        await t.createUser({ username: 'eve', email: 'eve-local@example.com', password: 'eve-local-pw' });
        await session('eve', eve.password).expect(401);
        await session('eve', 'eve-local-pw').expect(201);
      });

      it('local users keep signing in with their local passwords', async () => {
        await session('root', t.root.password).expect(201);
      });
    });

    describe('synchronisation', () => {
      let carolId: number;
      let carolToken: string;

      beforeAll(async () => {
        const res = await session('carol', carol.password).expect(201);
        carolId = res.body.id;
        carolToken = res.body.private_token;
        await t.http.post(`${API}/projects`).set('PRIVATE-TOKEN', carolToken).send({ name: 'work' }).expect(201);
      });

      it('an entry deleted from the directory: the sync blocks the user, its token 401, git push refused, unblock 403', async () => {
        await t.http.get(`${API}/user`).set('PRIVATE-TOKEN', carolToken).expect(200);
        await t.http.get('/carol/work.git/info/refs').query({ service: 'git-receive-pack' }).set('Authorization', basic('carol', carolToken)).expect(200);
        await slapd.deleteUser(carol);
        const [r] = await sync();
        expect(r).toMatchObject({ provider: 'ldapmain', unavailable: false, unknown: 0 });
        const shown = await t.http.get(`${API}/users/${carolId}`).set('PRIVATE-TOKEN', t.root.token).expect(200);
        expect(shown.body.state).toBe('ldap_blocked');
        // at once: no cached token survives
        await t.http.get(`${API}/user`).set('PRIVATE-TOKEN', carolToken).expect(401);
        await t.http.get('/carol/work.git/info/refs').query({ service: 'git-receive-pack' }).set('Authorization', basic('carol', carolToken)).expect(401);
        await t.http.get('/carol/work.git/info/refs').query({ service: 'git-receive-pack' }).set('Authorization', basic('carol', carol.password)).expect(401);
        await session('carol', carol.password).expect(401);
        let res = await t.http.put(`${API}/users/${carolId}/unblock`).set('PRIVATE-TOKEN', t.root.token).expect(403);
        expect(res.body).toEqual({ message: '403 Forbidden - LDAP blocked users cannot be unblocked by the API' });
        res = await t.http.put(`${API}/users/${carolId}/block`).set('PRIVATE-TOKEN', t.root.token).expect(403);
        expect(res.body).toEqual({ message: '403 Forbidden - LDAP blocked users cannot be modified by the API' });
        // a second run changes nothing more
        const [again] = await sync();
        expect(again).toMatchObject({ blocked: 0, unblocked: 0 });
      });

      it('the entry restored: the sync makes the user active again and its token works', async () => {
        await slapd.addUser(carol);
        const [r] = await sync();
        expect(r).toMatchObject({ unavailable: false, unknown: 0 });
        const shown = await t.http.get(`${API}/users/${carolId}`).set('PRIVATE-TOKEN', t.root.token).expect(200);
        expect(shown.body.state).toBe('active');
        await t.http.get(`${API}/user`).set('PRIVATE-TOKEN', carolToken).expect(200);
      });

      it('an entry no longer matching the filter is blocked; a sign-in with the entry back makes the user active at once', async () => {
        const res = await session('frank', frank.password).expect(201);
        await slapd.deleteUser(frank);
        await sync();
        await t.http.get(`${API}/user`).set('PRIVATE-TOKEN', res.body.private_token).expect(401);
        await slapd.addUser(frank);
        await session('frank', frank.password).expect(201);
        await t.http.get(`${API}/user`).set('PRIVATE-TOKEN', res.body.private_token).expect(200);
      });

      it('an administrator-blocked LDAP user stays blocked: neither the sync nor a sign-in unblocks', async () => {
        const res = await session('gina', gina.password).expect(201);
        await t.http.put(`${API}/users/${res.body.id}/block`).set('PRIVATE-TOKEN', t.root.token).expect(200);
        await sync();
        await session('gina', gina.password).expect(401);
        const shown = await t.http.get(`${API}/users/${res.body.id}`).set('PRIVATE-TOKEN', t.root.token).expect(200);
        expect(shown.body.state).toBe('blocked');
        await t.http.put(`${API}/users/${res.body.id}/unblock`).set('PRIVATE-TOKEN', t.root.token).expect(200);
      });

      it('the directory stopped: nobody is blocked, local users sign in, an LDAP sign-in fails fast with 401; logged in /-/metrics', async () => {
        await slapd.stop();
        try {
          const [r] = await sync();
          expect(r).toMatchObject({ unavailable: true, blocked: 0 });
          const states: { n: number }[] = await t.sql(`SELECT count(*)::int AS n FROM users WHERE state = 'ldap_blocked'`);
          expect(states[0].n).toBe(0);
          await t.http.get(`${API}/user`).set('PRIVATE-TOKEN', carolToken).expect(200);
          await session('root', t.root.password).expect(201);
          const started = Date.now();
          await session('alice', alice.password).expect(401);
          expect(Date.now() - started).toBeLessThan(3000); // LDAP_TIMEOUT=3
          const metrics = await t.http.get('/-/metrics').expect(200);
          expect(metrics.text).toMatch(/ldap_unavailable_total\{provider="ldapmain",operation="sync"\} [1-9]/);
          expect(metrics.text).toMatch(/ldap_unavailable_total\{provider="ldapmain",operation="signin"\} [1-9]/);
        } finally {
          await slapd.run();
        }
        await session('alice', alice.password).expect(201);
      });
    });
  });

  it('a directory that accepts connections but never answers: sign-in fails within the timeout (401), the sync blocks nobody', async () => {
    const sockets: Socket[] = [];
    const silent: Server = createServer((s) => sockets.push(s));
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', () => r()));
    const port = (silent.address() as { port: number }).port;
    const other = await startTestApp({ LDAP_URL: `ldap://127.0.0.1:${port}`, LDAP_BASE: BASE, LDAP_TIMEOUT: '1' });
    try {
      const started = Date.now();
      await other.http.post(`${API}/session`).send({ login: 'alice', password: alice.password }).expect(401);
      expect(Date.now() - started).toBeLessThan(2500);
      const [r] = await other.app.app.get(LdapSyncService).syncAll();
      expect(r.unavailable).toBe(true);
    } finally {
      await other.close();
      sockets.forEach((s) => s.destroy());
      silent.close();
    }
  });

  describe('TLS', () => {
    const tryTls = async (env: Record<string, string>) => {
      const other = await startTestApp({ ...ldapEnv(slapd), ...env });
      try {
        return (await other.http.post(`${API}/session`).send({ login: 'bob', password: bob.password })).status;
      } finally {
        await other.close();
      }
    };

    it('StartTLS with an unknown CA is refused; with the CA configured (or verification turned off) it works', async () => {
      expect(await tryTls({ LDAP_ENCRYPTION: 'start_tls' })).toBe(401);
      expect(await tryTls({ LDAP_ENCRYPTION: 'start_tls', LDAP_CA_FILE: slapd.otherCaFile })).toBe(401);
      expect(await tryTls({ LDAP_ENCRYPTION: 'start_tls', LDAP_CA_FILE: slapd.caFile })).toBe(201);
      expect(await tryTls({ LDAP_ENCRYPTION: 'start_tls', LDAP_VERIFY_CERTIFICATES: 'false' })).toBe(201);
    }, 60_000);

    it('LDAPS (simple_tls) with the test CA, through LDAP_SERVERS', async () => {
      const servers = JSON.stringify([
        {
          provider: 'ldapsecure',
          url: slapd.ldapsUrl,
          encryption: 'simple_tls',
          ca_file: slapd.caFile,
          base: BASE,
          bind_dn: `cn=admin,${BASE}`,
          password: 'directory-admin-secret',
        },
      ]);
      const other = await startTestApp({ LDAP_SERVERS: servers });
      try {
        const res = await other.http.post(`${API}/session`).send({ login: 'bob', password: bob.password }).expect(201);
        const shown = await other.http.get(`${API}/users/${res.body.id}`).set('PRIVATE-TOKEN', other.root.token).expect(200);
        expect(shown.body.identities).toEqual([{ provider: 'ldapsecure', extern_uid: userDn(bob) }]);
        await other.http.post(`${API}/session`).send({ login: 'bob', password: 'nope' }).expect(401);
      } finally {
        await other.close();
      }
      expect(await tryTls({ LDAP_URL: slapd.ldapsUrl, LDAP_ENCRYPTION: 'simple_tls' })).toBe(401);
    }, 60_000);
  });

  it('cli check binds to each configured server and says whether it works', async () => {
    const servers = JSON.stringify([
      { provider: 'ldapmain', url: slapd.url, base: BASE, bind_dn: `cn=admin,${BASE}`, password: 'directory-admin-secret' },
      { provider: 'ldapwrongpw', url: slapd.url, base: BASE, bind_dn: `cn=admin,${BASE}`, password: 'wrong' },
      { provider: 'ldaptls', url: slapd.url, base: BASE, encryption: 'start_tls', ca_file: slapd.otherCaFile },
    ]);
    const config = loadConfig({ DATA_DIR: slapd.dir, DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none', SSH_ENABLED: 'false', LDAP_SERVERS: servers });
    let output = '';
    const write = process.stdout.write.bind(process.stdout);
    process.stdout.write = (chunk: string) => {
      output += chunk;
      return true;
    };
    try {
      expect(await runChecks(config)).toBe(false);
    } finally {
      process.stdout.write = write;
    }
    expect(output).toContain(`ldap ldapmain (${slapd.url}): ok\n`);
    expect(output).toMatch(
      new RegExp(
        `^ldap ldapwrongpw \\(${slapd.url.replace(/\./g, '\\.')}\\): FAILED: LDAP server ldapwrongpw unavailable: InvalidCredentials \\(LDAP result 49\\)$`,
        'm',
      ),
    );
    expect(output).toMatch(/^ldap ldaptls \(.*\): FAILED: LDAP server ldaptls unavailable: .*certificate/m);
  }, 60_000);

  it('configuration: bad settings refuse to boot with the setting named', () => {
    const env = { DATA_DIR: slapd.dir };
    expect(() => loadConfig({ ...env, LDAP_SERVERS: '{"url":1}' })).toThrow(/LDAP_SERVERS must be a JSON list/);
    expect(() => loadConfig({ ...env, LDAP_URL: 'ldap://x', LDAP_BASE: BASE, LDAP_ENCRYPTION: 'tls' })).toThrow(/encryption must be one of/);
    expect(() => loadConfig({ ...env, LDAP_URL: 'ldaps://x', LDAP_BASE: BASE })).toThrow(/does not fit encryption plain/);
    expect(() => loadConfig({ ...env, LDAP_URL: 'ldap://x' })).toThrow(/base is required/);
    expect(() => loadConfig({ ...env, LDAP_URL: 'ldap://x', LDAP_BASE: BASE, LDAP_CA_FILE: '/nonexistent/ca.pem' })).toThrow(/ca_file/);
    const c = loadConfig({ ...env, LDAP_URL: 'ldap://x:389', LDAP_BASE: BASE });
    expect(c.ldap.servers[0]).toMatchObject({ provider: 'ldapmain', uid: 'uid', encryption: 'plain', verifyCertificates: true, timeoutMs: 10_000 });
    expect(c.ldap.syncIntervalSeconds).toBe(3600);
    expect(loadConfig(env).ldap.servers).toEqual([]);
  });

  describe('Active Directory and username-or-email login', () => {
    const hank: DirectoryUser = { uid: 'hank', password: 'hank-directory-pw', mail: 'hank@corp.example', userAccountControl: 512 };
    let ad: TestApp;

    beforeAll(async () => {
      await slapd.addUser(hank);
      ad = await startTestApp(ldapEnv(slapd, { LDAP_ACTIVE_DIRECTORY: 'true', LDAP_ALLOW_USERNAME_OR_EMAIL_LOGIN: 'true' }));
    }, 60_000);
    afterAll(() => ad?.close());

    it('signs in by email; the disabled bit blocks at sync and at sign-in; cleared, the user is active again', async () => {
      const res = await ad.http.post(`${API}/session`).send({ email: 'hank@corp.example', password: hank.password }).expect(201);
      expect(res.body.username).toBe('hank');
      await slapd.modify(hank, 'userAccountControl', '514');
      await ad.app.app.get(LdapSyncService).syncAll();
      const [u]: { state: string }[] = await ad.sql(`SELECT state FROM users WHERE id = $1`, [res.body.id]);
      expect(u.state).toBe('ldap_blocked');
      await ad.http.get(`${API}/user`).set('PRIVATE-TOKEN', res.body.private_token).expect(401);
      await ad.http.post(`${API}/session`).send({ login: 'hank', password: hank.password }).expect(401);
      await slapd.modify(hank, 'userAccountControl', '512');
      await ad.http.post(`${API}/session`).send({ login: 'hank', password: hank.password }).expect(201);
      await ad.http.get(`${API}/user`).set('PRIVATE-TOKEN', res.body.private_token).expect(200);
    });
  });

  describe('the periodic job (LDAP_SYNC_INTERVAL) on the queue', () => {
    it('blocks a user whose entry went away and activates it when the entry is back, with nobody calling the sync', async () => {
      const kim: DirectoryUser = { uid: 'kim', password: 'kim-directory-pw', mail: 'kim@corp.example' };
      await slapd.addUser(kim);
      const other = await startTestApp(ldapEnv(slapd, { LDAP_SYNC_INTERVAL: '1', QUEUE_POLL_SECONDS: '0.5' }));
      try {
        const res = await other.http.post(`${API}/session`).send({ login: 'kim', password: kim.password }).expect(201);
        const state = async () => (await other.sql<{ state: string }>(`SELECT state FROM users WHERE id = $1`, [res.body.id]))[0].state;
        await slapd.deleteUser(kim);
        await waitFor(async () => (await state()) === 'ldap_blocked', 'the periodic sync to block kim', 20_000);
        await other.http.get(`${API}/user`).set('PRIVATE-TOKEN', res.body.private_token).expect(401);
        await slapd.addUser(kim);
        await waitFor(async () => (await state()) === 'active', 'the periodic sync to activate kim', 20_000);
        await other.http.get(`${API}/user`).set('PRIVATE-TOKEN', res.body.private_token).expect(200);
      } finally {
        await other.close();
      }
    }, 60_000);
  });

  describe('LDAP_BLOCK_AUTO_CREATED_USERS', () => {
    it('LDAP_BLOCK_AUTO_CREATED_USERS: the first sign-in creates a blocked user (401) until an administrator unblocks it', async () => {
      const ivy: DirectoryUser = { uid: 'ivy', password: 'ivy-directory-pw', mail: 'ivy@corp.example', cn: 'Ivy Common Name' };
      await slapd.addUser(ivy);
      // and the name from another attribute (sn, which the test directory sets to the uid)
      const other = await startTestApp(ldapEnv(slapd, { LDAP_BLOCK_AUTO_CREATED_USERS: 'true', LDAP_ATTRIBUTE_NAME: 'sn' }));
      try {
        await other.http.post(`${API}/session`).send({ login: 'ivy', password: ivy.password }).expect(401);
        const [u]: { id: number; state: string; name: string }[] = await other.sql(`SELECT id, state, name FROM users WHERE username = 'ivy'`);
        expect(u).toMatchObject({ state: 'blocked', name: 'ivy' });
        await other.http.put(`${API}/users/${u.id}/unblock`).set('PRIVATE-TOKEN', other.root.token).expect(200);
        await other.http.post(`${API}/session`).send({ login: 'ivy', password: ivy.password }).expect(201);
      } finally {
        await other.close();
      }
    });
  });
});

describe('an LDAP-linked user with LDAP switched off', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t?.close());

  it('cannot sign in with a local password (401): the directory alone decides, and it is not there', async () => {
    const body = {
      username: 'linked',
      email: 'linked@example.com',
      name: 'Linked',
      password: 'linked-local-pw',
      provider: 'ldapmain',
      extern_uid: `uid=linked,ou=people,${BASE}`,
    };
    await t.http.post(`${API}/users`).set('PRIVATE-TOKEN', t.root.token).send(body).expect(201);
    await t.http.post(`${API}/session`).send({ login: 'linked', password: 'linked-local-pw' }).expect(401);
    await t.http
      .post('/oauth/token')
      .type('form')
      .send({ grant_type: 'password', username: 'linked', password: 'linked-local-pw' })
      .expect((r) => expect(r.status).toBeGreaterThanOrEqual(400));
    // a local user beside it signs in as before
    const local = await t.createUser();
    await t.http.post(`${API}/session`).send({ login: local.username, password: local.password }).expect(201);
  });
});

/** Two instances on one PostgreSQL: a block by the sync on one is seen by the other at once. */
const pg = !!process.env.DATABASE_URL;
(SLAPD_BIN && pg ? describe : describe.skip)('LDAP block across two instances (PostgreSQL only)', () => {
  let slapd: Slapd;
  let a: TestApp;
  let bApp: App;
  let b: TestAgent;
  const judy: DirectoryUser = { uid: 'judy', password: 'judy-directory-pw', mail: 'judy@corp.example' };

  beforeAll(async () => {
    slapd = await Slapd.start([judy]);
    a = await startTestApp(ldapEnv(slapd));
    bApp = await createApp(a.config);
    b = request(bApp.app.getHttpServer());
  }, 60_000);
  afterAll(async () => {
    await bApp?.close();
    await a?.close();
    await slapd?.close();
  });

  it('the sync on A blocks; B refuses the token at once (its cache dropped by the notification)', async () => {
    const res = await b.post(`${API}/session`).send({ login: 'judy', password: judy.password }).expect(201);
    const token = res.body.private_token;
    await b.get(`${API}/user`).set('PRIVATE-TOKEN', token).expect(200); // cached on B now
    await slapd.deleteUser(judy);
    await a.app.app.get(LdapSyncService).syncAll();
    // the notification travels asynchronously: allow it a moment, far below the cache's 5 s safety net
    const deadline = Date.now() + 1000;
    let status = 200;
    while (Date.now() < deadline && status !== 401) {
      status = (await b.get(`${API}/user`).set('PRIVATE-TOKEN', token)).status;
      if (status !== 401) await new Promise((r) => setTimeout(r, 50));
    }
    expect(status).toBe(401);
    await a.http.get(`${API}/user`).set('PRIVATE-TOKEN', token).expect(401);
  });
});
