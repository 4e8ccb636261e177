import { ROOT_PASSWORD, startTestApp, TestApp, TestUser } from './helpers/test-app';

const api = (path: string) => `/api/v3${path}`;
const UNAUTHORIZED = { message: '401 Unauthorized' };

describe('session and authentication', () => {
  let t: TestApp;
  let alice: TestUser;
  let bob: TestUser;

  beforeAll(async () => {
    t = await startTestApp();
    alice = await t.createUser({ username: 'alice', email: 'alice@example.com', password: 'alice-password' });
    bob = await t.createUser({ username: 'bob', email: 'bob@example.com', password: 'bob-password' });
  });
  afterAll(() => t.close());

  const asRoot = () => ({ 'PRIVATE-TOKEN': t.root.token });
  const as = (u: TestUser) => ({ 'PRIVATE-TOKEN': u.token });

  describe('POST /session', () => {
    it('signs in by username: 201 with the user and its private token', async () => {
      const res = await t.http.post(api('/session')).send({ login: 'alice', password: 'alice-password' }).expect(201);
      expect(res.headers['content-type']).toBe('application/json');
      expect(res.body).toMatchObject({
        id: alice.id,
        username: 'alice',
        email: 'alice@example.com',
        private_token: alice.token,
        is_admin: false,
        identities: [],
      });
      expect(res.body.private_token).toMatch(/^[A-Za-z0-9]{20,}$/);
      expect(res.body.current_sign_in_at).not.toBeNull();
      expect(res.body).not.toHaveProperty('password');
      expect(res.body).not.toHaveProperty('encrypted_password');
      // the token works
      const me = await t.http.get(api('/user')).set('PRIVATE-TOKEN', res.body.private_token).expect(200);
      expect(me.body.id).toBe(alice.id);
    });

    it('signs in by email', async () => {
      const res = await t.http.post(api('/session')).send({ login: 'alice@example.com', password: 'alice-password' }).expect(201);
      expect(res.body).toMatchObject({ id: alice.id, private_token: alice.token });
    });

    it('is case-insensitive on username and email', async () => {
      const byName = await t.http.post(api('/session')).send({ login: 'ALICE', password: 'alice-password' }).expect(201);
      expect(byName.body.id).toBe(alice.id);
      const byEmail = await t.http.post(api('/session')).send({ login: 'Alice@EXAMPLE.com', password: 'alice-password' }).expect(201);
      expect(byEmail.body.id).toBe(alice.id);
      const root = await t.http.post(api('/session')).send({ login: 'Root', password: ROOT_PASSWORD }).expect(201);
      expect(root.body).toMatchObject({ id: t.root.id, is_admin: true, private_token: t.root.token });
    });

    it('accepts the username in the `email` field', async () => {
      const res = await t.http.post(api('/session')).send({ email: 'bob', password: 'bob-password' }).expect(201);
      expect(res.body).toMatchObject({ id: bob.id, private_token: bob.token });
      const byEmail = await t.http.post(api('/session')).send({ email: 'bob@example.com', password: 'bob-password' }).expect(201);
      expect(byEmail.body.id).toBe(bob.id);
    });

    it('prefers `email` over `login` when both are given', async () => {
      const res = await t.http.post(api('/session')).send({ login: 'alice', email: 'bob', password: 'bob-password' }).expect(201);
      expect(res.body.id).toBe(bob.id);
    });

    it('accepts form, multipart and query-string input', async () => {
      const form = await t.http.post(api('/session')).type('form').send({ login: 'bob', password: 'bob-password' }).expect(201);
      expect(form.body.id).toBe(bob.id);
      const multi = await t.http.post(api('/session')).field('login', 'bob').field('password', 'bob-password').expect(201);
      expect(multi.body.id).toBe(bob.id);
      const query = await t.http.post(api('/session')).query({ login: 'bob', password: 'bob-password' }).expect(201);
      expect(query.body.id).toBe(bob.id);
      const json = await t.http.post(api('/session.json')).send({ login: 'bob', password: 'bob-password' }).expect(201);
      expect(json.body.id).toBe(bob.id);
    });

    it('ignores a stray invalid PRIVATE-TOKEN header (and a stray private_token param)', async () => {
      const res = await t.http
        .post(api('/session'))
        .set('PRIVATE-TOKEN', 'this-is-not-a-valid-token')
        .send({ login: 'alice', password: 'alice-password' })
        .expect(201);
      expect(res.body).toMatchObject({ id: alice.id, private_token: alice.token });
      const param = await t.http.post(api('/session')).send({ login: 'alice', password: 'alice-password', private_token: 'nope' }).expect(201);
      expect(param.body.id).toBe(alice.id);
    });

    it("signs in the named user even with another user's valid token", async () => {
      const res = await t.http.post(api('/session')).set(asRoot()).send({ login: 'alice', password: 'alice-password' }).expect(201);
      expect(res.body).toMatchObject({ id: alice.id, private_token: alice.token });
    });

    it('401 for a wrong password or an unknown login', async () => {
      const wrong = await t.http.post(api('/session')).send({ login: 'bob', password: 'not-bobs-password' }).expect(401);
      expect(wrong.headers['content-type']).toBe('application/json');
      expect(wrong.body).toEqual(UNAUTHORIZED);
      const unknown = await t.http.post(api('/session')).send({ login: 'nobody', password: 'whatever-pass' }).expect(401);
      expect(unknown.body).toEqual(UNAUTHORIZED);
      // another user's password does not work either
      await t.http.post(api('/session')).send({ login: 'bob', password: 'alice-password' }).expect(401);
    });

    it('401 for blocked and LDAP-blocked users, even with the right password', async () => {
      const u = await t.createUser({ password: 'blocked-password' });
      await t.http
        .put(api(`/users/${u.id}/block`))
        .set(asRoot())
        .expect(200);
      const blocked = await t.http.post(api('/session')).send({ login: u.username, password: 'blocked-password' }).expect(401);
      expect(blocked.body).toEqual(UNAUTHORIZED);
      expect(blocked.body).not.toHaveProperty('private_token');
      await t.sql(`UPDATE users SET state = 'ldap_blocked' WHERE id = $1`, [u.id]);
      await t.http.post(api('/session')).send({ login: u.username, password: 'blocked-password' }).expect(401);
      await t.sql(`UPDATE users SET state = 'active' WHERE id = $1`, [u.id]);
      await t.http.post(api('/session')).send({ login: u.username, password: 'blocked-password' }).expect(201);
    });

    it('records sign-in times: last_sign_in_at is the previous current_sign_in_at', async () => {
      const first = await t.http.post(api('/session')).send({ login: 'bob', password: 'bob-password' }).expect(201);
      const second = await t.http.post(api('/session')).send({ login: 'bob', password: 'bob-password' }).expect(201);
      expect(second.body.last_sign_in_at).toBe(first.body.current_sign_in_at);
      expect(Date.parse(second.body.current_sign_in_at)).toBeGreaterThanOrEqual(Date.parse(first.body.current_sign_in_at));
    });

    it('400, not 500, for structured login values', async () => {
      const res = await t.http
        .post(api('/session'))
        .send({ login: { $ne: null }, password: 'x' })
        .expect(400);
      expect(typeof res.body.message).toBe('string');
      const arr = await t.http
        .post(api('/session'))
        .send({ login: ['alice'], password: { a: 1 } })
        .expect(400);
      expect(typeof arr.body.message).toBe('string');
    });

    it('400 not given for a missing password or login', async () => {
      const noPassword = await t.http.post(api('/session')).send({ login: 'alice' }).expect(400);
      expect(noPassword.body).toEqual({ message: '400 (Bad request) "password" not given' });
      const emptyPassword = await t.http.post(api('/session')).send({ login: 'alice', password: '' }).expect(400);
      expect(emptyPassword.body).toEqual({ message: '400 (Bad request) "password" not given' });
      const noLogin = await t.http.post(api('/session')).send({ password: 'alice-password' }).expect(400);
      expect(noLogin.body.message).toMatch(/^400 \(Bad request\) "(login|email)" not given$/);
    });

    it('403 when password sign-in is disabled by signin_enabled=false', async () => {
      await t.http.put(api('/application/settings')).set(asRoot()).send({ signin_enabled: false }).expect(200);
      try {
        const res = await t.http.post(api('/session')).send({ login: 'alice', password: 'alice-password' }).expect(403);
        expect(res.body.message).toMatch(/^403 Forbidden/);
        expect(res.body).not.toHaveProperty('private_token');
        // existing tokens keep working
        await t.http.get(api('/user')).set(as(alice)).expect(200);
      } finally {
        await t.http.put(api('/application/settings')).set(asRoot()).send({ signin_enabled: true }).expect(200);
      }
      await t.http.post(api('/session')).send({ login: 'alice', password: 'alice-password' }).expect(201);
    });

    it('throttles: after 10 failures for one login, 429 with Retry-After even with the right password', async () => {
      const victim = await t.createUser({ username: 'victim', password: 'victim-password' });
      for (let i = 0; i < 10; i++) {
        await t.http
          .post(api('/session'))
          .send({ login: 'victim', password: `wrong-${i}` })
          .expect(401);
      }
      const locked = await t.http.post(api('/session')).send({ login: 'victim', password: 'victim-password' }).expect(429);
      expect(locked.headers['content-type']).toBe('application/json');
      expect(locked.body).toEqual({
        message: expect.stringMatching(
          /^429 Too Many Requests - this login is locked after too many failed sign-ins until .+ GMT \(\d{4}-\d\d-\d\dT[\d:.]+Z\)$/,
        ),
      });
      expect(locked.body).not.toHaveProperty('private_token');
      const retryAfter = Number(locked.headers['retry-after']);
      expect(Number.isInteger(retryAfter)).toBe(true);
      expect(retryAfter).toBeGreaterThan(0);
      // the same login in another case is the same login
      await t.http.post(api('/session')).send({ login: 'VICTIM', password: 'victim-password' }).expect(429);
      // other logins are not affected, nor is the victim's token
      await t.http.post(api('/session')).send({ login: 'bob', password: 'bob-password' }).expect(201);
      await t.http.get(api('/user')).set(as(victim)).expect(200);
    });

    it('throttles per account: failures by username and by email share one budget', async () => {
      const u = await t.createUser({ username: 'twofaced', email: 'twofaced@example.com', password: 'twofaced-password' });
      for (let i = 0; i < 5; i++) {
        await t.http
          .post(api('/session'))
          .send({ login: 'twofaced', password: `wrong-${i}` })
          .expect(401);
        await t.http
          .post(api('/session'))
          .send({ login: 'twofaced@example.com', password: `wrong-${i}` })
          .expect(401);
      }
      await t.http.post(api('/session')).send({ login: u.username, password: 'twofaced-password' }).expect(429);
      await t.http.post(api('/session')).send({ email: u.email, password: 'twofaced-password' }).expect(429);
    });

    it('a successful sign-in resets the failure count', async () => {
      const u = await t.createUser({ password: 'reset-password' });
      for (let i = 0; i < 9; i++) {
        await t.http.post(api('/session')).send({ login: u.username, password: 'wrong' }).expect(401);
      }
      await t.http.post(api('/session')).send({ login: u.username, password: 'reset-password' }).expect(201);
      for (let i = 0; i < 9; i++) {
        await t.http.post(api('/session')).send({ login: u.username, password: 'wrong' }).expect(401);
      }
      await t.http.post(api('/session')).send({ login: u.username, password: 'reset-password' }).expect(201);
    });
  });

  describe('private token', () => {
    it('is read from the PRIVATE-TOKEN header', async () => {
      const res = await t.http.get(api('/user')).set('PRIVATE-TOKEN', alice.token).expect(200);
      expect(res.body).toMatchObject({ id: alice.id, private_token: alice.token });
    });

    it('is read from the private_token query parameter', async () => {
      const res = await t.http.get(api('/user')).query({ private_token: bob.token }).expect(200);
      expect(res.body.id).toBe(bob.id);
    });

    it('is read from a private_token body parameter (JSON and form)', async () => {
      const json = await t.http.post(api('/user/emails')).send({ private_token: bob.token, email: 'bob.json@example.net' }).expect(201);
      expect(json.body.email).toBe('bob.json@example.net');
      const form = await t.http.post(api('/user/emails')).type('form').send({ private_token: bob.token, email: 'bob.form@example.net' }).expect(201);
      expect(form.body.email).toBe('bob.form@example.net');
      const his = await t.http.get(api('/user/emails')).set(as(bob)).expect(200);
      expect(his.body.map((e: { email: string }) => e.email)).toEqual(expect.arrayContaining(['bob.json@example.net', 'bob.form@example.net']));
    });

    it('the parameter wins over the header', async () => {
      const res = await t.http.get(api('/user')).set('PRIVATE-TOKEN', alice.token).query({ private_token: bob.token }).expect(200);
      expect(res.body.id).toBe(bob.id);
    });

    it('401 {"message":"401 Unauthorized"} for an invalid token, wherever it is', async () => {
      for (const req of [
        t.http.get(api('/user')).set('PRIVATE-TOKEN', 'invalid-token-value'),
        t.http.get(api('/user')).query({ private_token: 'invalid-token-value' }),
        t.http.get(api('/user')).set('PRIVATE-TOKEN', alice.token.toLowerCase() + 'x'),
        t.http.get(api('/user')).set('PRIVATE-TOKEN', 'x'.repeat(1000)),
        t.http.get(api('/users')).set('Authorization', 'Bearer not-a-real-oauth-token'),
      ]) {
        const res = await req.expect(401);
        expect(res.headers['content-type']).toBe('application/json');
        expect(res.body).toEqual(UNAUTHORIZED);
      }
    });

    it('401, not 400, for a structured private_token parameter', async () => {
      const query = await t.http.get(api('/user?private_token[a]=b')).expect(401);
      expect(query.body).toEqual(UNAUTHORIZED);
      const body = await t.http
        .post(api('/user/emails'))
        .send({ private_token: { a: 1 }, email: 'x@example.net' })
        .expect(401);
      expect(body.body).toEqual(UNAUTHORIZED);
      // and it does not break the public sign-in
      await t.http
        .post(api('/session'))
        .send({ login: 'bob', password: 'bob-password', private_token: ['x', { y: 1 }] })
        .expect(201);
    });

    it('an invalid parameter is not rescued by a valid header', async () => {
      const res = await t.http.get(api('/user')).set('PRIVATE-TOKEN', alice.token).query({ private_token: 'invalid' }).expect(401);
      expect(res.body).toEqual(UNAUTHORIZED);
    });

    it('401 with no credentials at all', async () => {
      const res = await t.http.get(api('/user')).expect(401);
      expect(res.body).toEqual(UNAUTHORIZED);
    });

    it('is not stored in plain text; passwords are bcrypt hashes', async () => {
      const rows = await t.sql<{
        private_token_digest: string;
        private_token_encrypted: string;
        encrypted_password: string;
      }>(`SELECT private_token_digest, private_token_encrypted, encrypted_password FROM users WHERE id = $1`, [alice.id]);
      expect(rows).toHaveLength(1);
      const row = rows[0];
      expect(row.private_token_digest).not.toBe(alice.token);
      expect(row.private_token_encrypted).not.toBe(alice.token);
      expect(row.private_token_digest).not.toContain(alice.token);
      expect(row.private_token_encrypted).not.toContain(alice.token);
      expect(row.encrypted_password).toMatch(/^\$2[aby]?\$\d\d\$/);
      expect(Number(row.encrypted_password.split('$')[2])).toBeGreaterThanOrEqual(10);
      expect(row.encrypted_password).not.toContain('alice-password');
      // no column of the row holds the token or the password in clear
      const all = await t.sql<Record<string, unknown>>(`SELECT * FROM users WHERE id = $1`, [alice.id]);
      const dump = JSON.stringify(all[0]);
      expect(dump).not.toContain(alice.token);
      expect(dump).not.toContain('alice-password');
    });

    it('gives each user a distinct token that survives a password change', async () => {
      expect(new Set([t.root.token, alice.token, bob.token]).size).toBe(3);
      await t.http
        .put(api(`/users/${bob.id}`))
        .set(asRoot())
        .send({ password: 'bob-new-password' })
        .expect(200);
      const me = await t.http.get(api('/user')).set(as(bob)).expect(200);
      expect(me.body.private_token).toBe(bob.token);
      await t.http
        .put(api(`/users/${bob.id}`))
        .set(asRoot())
        .send({ password: 'bob-password' })
        .expect(200);
    });
  });

  describe('sudo', () => {
    it('by id in the SUDO header: GET /user shows the target and its private token', async () => {
      const res = await t.http.get(api('/user')).set(asRoot()).set('SUDO', String(alice.id)).expect(200);
      expect(res.body).toMatchObject({ id: alice.id, username: 'alice', private_token: alice.token, is_admin: false });
    });

    it('by username in the sudo query parameter', async () => {
      const res = await t.http.get(api('/user')).set(asRoot()).query({ sudo: 'bob' }).expect(200);
      expect(res.body).toMatchObject({ id: bob.id, private_token: bob.token });
      const header = await t.http.get(api('/user')).set(asRoot()).set('SUDO', 'ALICE').expect(200);
      expect(header.body.id).toBe(alice.id);
    });

    it('works with the private token in the query too', async () => {
      const res = await t.http.get(api('/user')).query({ private_token: t.root.token, sudo: alice.id }).expect(200);
      expect(res.body.id).toBe(alice.id);
    });

    it('acts as the target: its permissions apply', async () => {
      const res = await t.http.get(api('/users')).set(asRoot()).set('SUDO', 'alice').expect(200);
      for (const u of res.body) expect(u).not.toHaveProperty('email');
      await t.http
        .post(api('/users'))
        .set(asRoot())
        .set('SUDO', 'alice')
        .send({
          email: 'x@example.net',
          username: 'viasudo',
          name: 'Via Sudo',
          password: 'password-123',
        })
        .expect(403);
    });

    it('in a JSON body', async () => {
      const res = await t.http.post(api('/user/emails')).set(asRoot()).send({ email: 'alice.sudo@example.net', sudo: 'alice' }).expect(201);
      const hers = await t.http.get(api('/user/emails')).set(as(alice)).expect(200);
      expect(hers.body.map((e: { id: number }) => e.id)).toContain(res.body.id);
      const roots = await t.http.get(api('/user/emails')).set(asRoot()).expect(200);
      expect(roots.body.map((e: { id: number }) => e.id)).not.toContain(res.body.id);
    });

    it('naming the caller itself is a no-op', async () => {
      const byName = await t.http.get(api('/user')).set(asRoot()).set('SUDO', 'root').expect(200);
      expect(byName.body.id).toBe(t.root.id);
      const byId = await t.http.get(api('/user')).set(asRoot()).set('SUDO', String(t.root.id)).expect(200);
      expect(byId.body.id).toBe(t.root.id);
    });

    it('a non-administrator naming itself is not refused', async () => {
      const res = await t.http.get(api('/user')).set(as(alice)).set('SUDO', 'alice').expect(200);
      expect(res.body.id).toBe(alice.id);
    });

    it('403 "Must be admin to use sudo" for a non-administrator', async () => {
      const res = await t.http.get(api('/user')).set(as(alice)).set('SUDO', 'bob').expect(403);
      expect(res.headers['content-type']).toBe('application/json');
      expect(res.body).toEqual({ message: '403 Forbidden: Must be admin to use sudo' });
      const byId = await t.http.get(api('/user')).set(as(alice)).query({ sudo: t.root.id }).expect(403);
      expect(byId.body).toEqual({ message: '403 Forbidden: Must be admin to use sudo' });
    });

    it('404 "No user id or username for" an unknown user', async () => {
      const byName = await t.http.get(api('/user')).set(asRoot()).set('SUDO', 'ghost').expect(404);
      expect(byName.headers['content-type']).toBe('application/json');
      expect(byName.body).toEqual({ message: '404 Not Found: No user id or username for: ghost' });
      const byId = await t.http.get(api('/user')).set(asRoot()).query({ sudo: '999999' }).expect(404);
      expect(byId.body).toEqual({ message: '404 Not Found: No user id or username for: 999999' });
    });

    it('without valid credentials, sudo is 401', async () => {
      await t.http.get(api('/user')).set('SUDO', 'alice').expect(401);
      await t.http.get(api('/user')).set('PRIVATE-TOKEN', 'bad').set('SUDO', 'alice').expect(401);
    });
  });
});
