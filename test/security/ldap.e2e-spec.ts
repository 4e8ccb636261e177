import { escapeFilterValue } from '../../src/ldap/ldap-directory';
import { Client } from 'ldapts';
import { DirectoryUser, ldapEnv, Slapd, SLAPD_BIN, userDn } from '../helpers/slapd';
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
