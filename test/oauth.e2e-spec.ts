import { expectSchema } from './helpers/schema';
import { startTestApp, TestApp, TestUser } from './helpers/test-app';

interface Issued {
  access_token: string;
  refresh_token: string;
  token_type: string;
  scope: string;
  created_at: number;
}

describe('OAuth 2.0', () => {
  let t: TestApp;
  let alice: TestUser;

  const passwordGrant = (username: string, password: string) => t.http.post('/oauth/token').type('form').send({ grant_type: 'password', username, password });

  const issue = async (u: TestUser): Promise<Issued> => (await passwordGrant(u.username, u.password).expect(200)).body;

  const me = (token: string) => t.http.get('/api/v3/user').set('Authorization', `Bearer ${token}`);

  beforeAll(async () => {
    t = await startTestApp();
    alice = await t.createUser({ username: 'alice', name: 'Alice Liddell', email: 'alice@example.com' });
  });
  afterAll(() => t.close());

  describe('POST /oauth/token, grant_type=password', () => {
    it('answers 200 with a bearer access token and a refresh token, not cacheable', async () => {
      const res = await passwordGrant('alice', alice.password).expect(200);
      await expectSchema(res, 'OAuthToken');
      expect(res.headers['content-type']).toBe('application/json');
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.headers['pragma']).toBe('no-cache');
      expect(res.body).toEqual({
        access_token: expect.any(String),
        token_type: 'bearer',
        refresh_token: expect.any(String),
        scope: 'api',
        created_at: expect.any(Number),
      });
      expect(res.body.access_token.length).toBeGreaterThanOrEqual(32);
      expect(res.body.refresh_token).not.toBe(res.body.access_token);
      expect(Math.abs(res.body.created_at - Date.now() / 1000)).toBeLessThan(120);
    });

    it('accepts a JSON body and the e-mail address or any case of the username', async () => {
      let res = await t.http.post('/oauth/token').send({ grant_type: 'password', username: 'alice@example.com', password: alice.password }).expect(200);
      expect(res.body.token_type).toBe('bearer');
      res = await passwordGrant('ALICE', alice.password).expect(200);
      expect((await me(res.body.access_token).expect(200)).body.username).toBe('alice');
    });

    it('every grant issues a different token', async () => {
      const a = await issue(alice);
      const b = await issue(alice);
      expect(a.access_token).not.toBe(b.access_token);
      expect(a.refresh_token).not.toBe(b.refresh_token);
      await me(a.access_token).expect(200);
      await me(b.access_token).expect(200);
    });

    it('a wrong password is 400 invalid_grant', async () => {
      const res = await passwordGrant('alice', 'wrong-password').expect(400);
      expect(res.headers['content-type']).toBe('application/json');
      expect(res.body).toEqual({ error: 'invalid_grant', error_description: expect.any(String) });
    });

    it('an unknown user is 400 invalid_grant too (no user enumeration)', async () => {
      const unknown = await passwordGrant('nobody-here', 'whatever-password').expect(400);
      const wrong = await passwordGrant('alice', 'whatever-password').expect(400);
      expect(unknown.body).toEqual(wrong.body);
    });

    it('missing grant_type is 400 invalid_request', async () => {
      const res = await t.http.post('/oauth/token').type('form').send({ username: 'alice', password: alice.password }).expect(400);
      expect(res.body).toEqual({ error: 'invalid_request', error_description: expect.stringContaining('grant_type') });
    });

    it('missing username or password is 400 invalid_request', async () => {
      let res = await t.http.post('/oauth/token').type('form').send({ grant_type: 'password', username: 'alice' }).expect(400);
      expect(res.body.error).toBe('invalid_request');
      res = await t.http.post('/oauth/token').type('form').send({ grant_type: 'password', password: alice.password }).expect(400);
      expect(res.body.error).toBe('invalid_request');
    });

    it.each(['client_credentials', 'authorization_code', 'implicit', 'nonsense'])('grant_type=%s is 400 unsupported_grant_type', async (grant) => {
      const res = await t.http
        .post('/oauth/token')
        .type('form')
        .send({ grant_type: grant, username: 'alice', password: alice.password, code: 'x' })
        .expect(400);
      expect(res.body).toEqual({ error: 'unsupported_grant_type', error_description: expect.any(String) });
    });

    it('needs no API credentials; a stale Authorization header does not turn it into a 401', async () => {
      const res = await passwordGrant('alice', alice.password).set('Authorization', 'Bearer stale-token').expect(200);
      expect(res.body.token_type).toBe('bearer');
    });

    it('a blocked user cannot get a token', async () => {
      const bob = await t.createUser({ username: 'bob-blocked-early' });
      await t.http.put(`/api/v3/users/${bob.id}/block`).set('PRIVATE-TOKEN', t.root.token).expect(200);
      const res = await passwordGrant(bob.username, bob.password).expect(400);
      expect(res.body.error).toBe('invalid_grant');
    });

    it('with password sign-in disabled, the password grant is 400 unauthorized_client', async () => {
      await t.http.put('/api/v3/application/settings').set('PRIVATE-TOKEN', t.root.token).send({ signin_enabled: false }).expect(200);
      try {
        const res = await passwordGrant('alice', alice.password).expect(400);
        expect(res.body).toEqual({ error: 'unauthorized_client', error_description: expect.any(String) });
      } finally {
        await t.http.put('/api/v3/application/settings').set('PRIVATE-TOKEN', t.root.token).send({ signin_enabled: true }).expect(200);
      }
      await passwordGrant('alice', alice.password).expect(200);
    });

    it('password guessing through the token endpoint is throttled', async () => {
      const carol = await t.createUser({ username: 'carol-guessed' });
      for (let i = 0; i < 10; i++) await passwordGrant(carol.username, `guess-${i}-wrong`).expect(400);
      const res = await passwordGrant(carol.username, carol.password);
      expect(res.status).toBe(429);
      expect(res.headers['retry-after']).toMatch(/^\d+$/);
      // other accounts are not affected
      await passwordGrant('alice', alice.password).expect(200);
    });
  });

  describe('using the access token', () => {
    let token: Issued;
    beforeAll(async () => {
      token = await issue(alice);
    });

    it('works as Authorization: Bearer on GET /api/v3/user', async () => {
      const res = await me(token.access_token).expect(200);
      expect(res.body).toMatchObject({ id: alice.id, username: 'alice', private_token: alice.token });
    });

    it('the scheme is case-insensitive', async () => {
      const res = await t.http.get('/api/v3/user').set('Authorization', `bearer ${token.access_token}`).expect(200);
      expect(res.body.username).toBe('alice');
    });

    it('works as the access_token query parameter', async () => {
      const res = await t.http.get(`/api/v3/user?access_token=${token.access_token}`).expect(200);
      expect(res.body.username).toBe('alice');
    });

    it('works as access_token in a JSON body', async () => {
      const res = await t.http.post('/api/v3/user/emails').send({ access_token: token.access_token, email: 'alice.alt@example.com' });
      expect(res.status).toBe(201);
      expect(res.body.email).toBe('alice.alt@example.com');
    });

    it('the refresh token is not an access token', async () => {
      const res = await me(token.refresh_token).expect(401);
      expect(res.body).toEqual({ message: '401 Unauthorized' });
    });

    it('an unknown bearer token gives the normal 401', async () => {
      const res = await me('0123456789abcdef0123456789abcdef').expect(401);
      expect(res.headers['content-type']).toBe('application/json');
      expect(res.body).toEqual({ message: '401 Unauthorized' });
      const q = await t.http.get('/api/v3/user?access_token=unknown').expect(401);
      expect(q.body).toEqual({ message: '401 Unauthorized' });
    });

    it('a private token is consulted first: with both, the private token decides', async () => {
      const res = await me(token.access_token).set('PRIVATE-TOKEN', t.root.token).expect(200);
      expect(res.body.username).toBe('root');
    });

    it('an administrator token obtained by OAuth can use sudo', async () => {
      const rootToken = await issue(t.root);
      const res = await me(rootToken.access_token).set('SUDO', 'alice').expect(200);
      expect(res.body.username).toBe('alice');
      const denied = await me(token.access_token).set('SUDO', 'root').expect(403);
      expect(denied.body).toEqual({ message: '403 Forbidden: Must be admin to use sudo' });
    });

    it('an expired token is refused with the Bearer 401', async () => {
      const expiring = await issue(alice);
      await me(expiring.access_token).expect(200);
      await t.sql(
        `UPDATE oauth_access_tokens SET expires_in = 60, created_at = now() - interval '2 hours'
          WHERE id = (SELECT max(id) FROM oauth_access_tokens)`,
      );
      const res = await me(expiring.access_token).expect(401);
      expect(res.body).toEqual({ error: 'invalid_token', error_description: expect.stringMatching(/expired/i) });
      expect(res.headers['www-authenticate']).toMatch(/^Bearer .*error="invalid_token"/);
    });
  });

  describe('grant_type=refresh_token', () => {
    it('issues a new token and retires the old one', async () => {
      const first = await issue(alice);
      const res = await t.http.post('/oauth/token').type('form').send({ grant_type: 'refresh_token', refresh_token: first.refresh_token }).expect(200);
      expect(res.headers['cache-control']).toBe('no-store');
      const second: Issued = res.body;
      expect(second).toMatchObject({ token_type: 'bearer', scope: 'api' });
      expect(second.access_token).not.toBe(first.access_token);
      expect(second.refresh_token).not.toBe(first.refresh_token);

      expect((await me(second.access_token).expect(200)).body.username).toBe('alice');

      const old = await me(first.access_token).expect(401);
      expect(old.headers['content-type']).toBe('application/json');
      expect(old.body).toEqual({ error: 'invalid_token', error_description: expect.any(String) });
      expect(old.body.error_description).toMatch(/revoked/i);
      expect(old.headers['www-authenticate']).toMatch(/^Bearer /);
      expect(old.headers['www-authenticate']).toContain('error="invalid_token"');

      const viaQuery = await t.http.get(`/api/v3/user?access_token=${first.access_token}`).expect(401);
      expect(viaQuery.body.error).toBe('invalid_token');
    });

    it('a refresh token works once', async () => {
      const first = await issue(alice);
      await t.http.post('/oauth/token').send({ grant_type: 'refresh_token', refresh_token: first.refresh_token }).expect(200);
      const again = await t.http.post('/oauth/token').send({ grant_type: 'refresh_token', refresh_token: first.refresh_token }).expect(400);
      expect(again.body.error).toBe('invalid_grant');
    });

    it('two concurrent refreshes with one refresh token: exactly one succeeds', async () => {
      const first = await issue(alice);
      const send = () => t.http.post('/oauth/token').send({ grant_type: 'refresh_token', refresh_token: first.refresh_token });
      const results = await Promise.all([send(), send()]);
      expect(results.map((r) => r.status).sort()).toEqual([200, 400]);
      const ok = results.find((r) => r.status === 200)!;
      await me(ok.body.access_token).expect(200);
    });

    it('an unknown refresh token is 400 invalid_grant; a missing one is 400 invalid_request', async () => {
      let res = await t.http.post('/oauth/token').send({ grant_type: 'refresh_token', refresh_token: 'nope' }).expect(400);
      expect(res.body.error).toBe('invalid_grant');
      res = await t.http.post('/oauth/token').send({ grant_type: 'refresh_token' }).expect(400);
      expect(res.body.error).toBe('invalid_request');
    });

    it('an access token cannot be used as a refresh token', async () => {
      const first = await issue(alice);
      const res = await t.http.post('/oauth/token').send({ grant_type: 'refresh_token', refresh_token: first.access_token }).expect(400);
      expect(res.body.error).toBe('invalid_grant');
      await me(first.access_token).expect(200);
    });
  });

  describe('POST /oauth/revoke', () => {
    it('revoking the access token makes it unusable', async () => {
      const tok = await issue(alice);
      await me(tok.access_token).expect(200);
      const res = await t.http.post('/oauth/revoke').type('form').send({ token: tok.access_token }).expect(200);
      await expectSchema(res, 'Empty');
      expect(res.headers['content-type']).toBe('application/json');
      expect(res.body).toEqual({});
      const after = await me(tok.access_token).expect(401);
      expect(after.body.error).toBe('invalid_token');
      expect(after.headers['www-authenticate']).toMatch(/^Bearer /);
      // its refresh token is gone too
      const refreshed = await t.http.post('/oauth/token').send({ grant_type: 'refresh_token', refresh_token: tok.refresh_token }).expect(400);
      expect(refreshed.body.error).toBe('invalid_grant');
    });

    it('revoking the refresh token also retires its access token', async () => {
      const tok = await issue(alice);
      await t.http.post('/oauth/revoke').send({ token: tok.refresh_token }).expect(200);
      await me(tok.access_token).expect(401);
      await t.http.post('/oauth/token').send({ grant_type: 'refresh_token', refresh_token: tok.refresh_token }).expect(400);
    });

    it('other tokens of the same user keep working', async () => {
      const a = await issue(alice);
      const b = await issue(alice);
      await t.http.post('/oauth/revoke').send({ token: a.access_token }).expect(200);
      await me(a.access_token).expect(401);
      await me(b.access_token).expect(200);
      await t.http.get('/api/v3/user').set('PRIVATE-TOKEN', alice.token).expect(200);
    });

    it('an unknown or already revoked token answers 200 as well', async () => {
      await t.http.post('/oauth/revoke').send({ token: 'never-issued' }).expect(200);
      const tok = await issue(alice);
      await t.http.post('/oauth/revoke').send({ token: tok.access_token }).expect(200);
      const res = await t.http.post('/oauth/revoke').send({ token: tok.access_token }).expect(200);
      expect(res.body).toEqual({});
    });

    it('a missing token is 400 invalid_request', async () => {
      const res = await t.http.post('/oauth/revoke').send({}).expect(400);
      expect(res.body).toEqual({ error: 'invalid_request', error_description: expect.any(String) });
    });

    it('a revoked token sent to a public endpoint does not break it', async () => {
      const tok = await issue(alice);
      await t.http.post('/oauth/revoke').send({ token: tok.access_token }).expect(200);
      const res = await t.http
        .post('/api/v3/session')
        .set('Authorization', `Bearer ${tok.access_token}`)
        .send({ login: 'alice', password: alice.password })
        .expect(201);
      expect(res.body.username).toBe('alice');
      await t.http.get('/api/v3/licenses/mit').set('Authorization', `Bearer ${tok.access_token}`).expect(200);
    });
  });

  describe('blocked users', () => {
    it("a blocked user's OAuth token gives 401 and works again once unblocked", async () => {
      const dave = await t.createUser({ username: 'dave' });
      const tok = await issue(dave);
      await me(tok.access_token).expect(200);
      await t.http.put(`/api/v3/users/${dave.id}/block`).set('PRIVATE-TOKEN', t.root.token).expect(200);
      const res = await me(tok.access_token).expect(401);
      expect(res.body).toEqual({ message: '401 Unauthorized' });
      const q = await t.http.get(`/api/v3/user?access_token=${tok.access_token}`).expect(401);
      expect(q.body).toEqual({ message: '401 Unauthorized' });
      // nor can it refresh its way back in
      const refreshed = await t.http.post('/oauth/token').send({ grant_type: 'refresh_token', refresh_token: tok.refresh_token }).expect(400);
      expect(refreshed.body.error).toBe('invalid_grant');

      await t.http.put(`/api/v3/users/${dave.id}/unblock`).set('PRIVATE-TOKEN', t.root.token).expect(200);
      await me(tok.access_token).expect(200);
    });

    it("an LDAP-blocked user's token gives 401", async () => {
      const erin = await t.createUser({ username: 'erin' });
      const tok = await issue(erin);
      await t.sql(`UPDATE users SET state = 'ldap_blocked' WHERE id = $1`, [erin.id]);
      const res = await me(tok.access_token).expect(401);
      expect(res.body).toEqual({ message: '401 Unauthorized' });
    });

    it("deleting a user removes its tokens' access", async () => {
      const frank = await t.createUser({ username: 'frank' });
      const tok = await issue(frank);
      await t.http.delete(`/api/v3/users/${frank.id}`).set('PRIVATE-TOKEN', t.root.token).expect(200);
      const res = await me(tok.access_token).expect(401);
      expect(res.body).toEqual({ message: '401 Unauthorized' });
    });
  });

  describe('storage', () => {
    it('stores tokens only as digests', async () => {
      const tok = await issue(alice);
      const rows = await t.sql<Record<string, unknown>>('SELECT * FROM oauth_access_tokens');
      expect(rows.length).toBeGreaterThan(0);
      const mine = rows.filter((r) => Number(r.resource_owner_id) === alice.id);
      expect(mine.length).toBeGreaterThan(0);
      for (const row of rows) {
        for (const value of Object.values(row)) {
          const s = value instanceof Date ? value.toISOString() : String(value);
          expect(s).not.toContain(tok.access_token);
          expect(s).not.toContain(tok.refresh_token);
        }
      }
      // nor anywhere in the users table
      const users = await t.sql<Record<string, unknown>>('SELECT * FROM users WHERE id = $1', [alice.id]);
      for (const value of Object.values(users[0])) expect(String(value)).not.toContain(tok.access_token);
    });
  });
});
