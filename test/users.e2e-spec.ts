import { expectSchema } from './helpers/schema';
import { countQueries, EXTERNAL_URL, startTestApp, TestApp, TestUser } from './helpers/test-app';

const api = (path: string) => `/api/v3${path}`;

let n = 0;
/** A fresh, valid body for POST /users. */
function newUserBody(extra: Record<string, unknown> = {}) {
  const i = ++n;
  return {
    email: `new${i}@users-spec.test`,
    password: `secret-pass-${i}`,
    username: `newuser${i}`,
    name: `New User ${i}`,
    ...extra,
  } as Record<string, unknown>;
}

describe('users API', () => {
  let t: TestApp;
  let alice: TestUser;
  let bob: TestUser;

  beforeAll(async () => {
    t = await startTestApp();
    alice = await t.createUser({ username: 'alice', email: 'alice.mailbox@corp.example.org', name: 'Alice Liddell' });
    bob = await t.createUser({ username: 'bob', email: 'bob@example.com', name: 'Bob Builder' });
  });
  afterAll(() => t.close());

  const asRoot = () => ({ 'PRIVATE-TOKEN': t.root.token });
  const as = (u: TestUser) => ({ 'PRIVATE-TOKEN': u.token });

  describe('GET /users', () => {
    it('gives an administrator the full view with email and identities', async () => {
      const res = await t.http.get(api('/users')).set(asRoot()).expect(200);
      expect(res.headers['content-type']).toBe('application/json');
      expect(Array.isArray(res.body)).toBe(true);
      const a = res.body.find((u: { id: number }) => u.id === alice.id);
      await expectSchema(res, 'UserFull[]');
      expect(a).toMatchObject({
        username: 'alice',
        email: 'alice.mailbox@corp.example.org',
        identities: [],
        is_admin: false,
        state: 'active',
        web_url: `${EXTERNAL_URL}/u/alice`,
      });
      expect(a).not.toHaveProperty('private_token');
    });

    it('gives a normal user summaries without email', async () => {
      const res = await t.http.get(api('/users')).set(as(bob)).expect(200);
      expect(res.body.length).toBeGreaterThanOrEqual(3);
      await expectSchema(res, 'UserBasic[]');
      for (const u of res.body) {
        expect(u).not.toHaveProperty('email');
        expect(u).not.toHaveProperty('private_token');
      }
      expect(res.body.map((u: { username: string }) => u.username)).toEqual(expect.arrayContaining(['root', 'alice', 'bob']));
    });

    it('lists newest first', async () => {
      const res = await t.http.get(api('/users')).set(asRoot()).expect(200);
      const ids = res.body.map((u: { id: number }) => u.id);
      expect(ids).toEqual([...ids].sort((a, b) => b - a));
    });

    it('searches by username and by name, case-insensitively', async () => {
      const byUsername = await t.http.get(api('/users')).query({ search: 'ALI' }).set(as(bob)).expect(200);
      expect(byUsername.body.map((u: { username: string }) => u.username)).toEqual(['alice']);
      const byName = await t.http.get(api('/users')).query({ search: 'builder' }).set(as(alice)).expect(200);
      expect(byName.body.map((u: { username: string }) => u.username)).toEqual(['bob']);
      const none = await t.http.get(api('/users')).query({ search: 'no-such-person' }).set(asRoot()).expect(200);
      expect(none.body).toEqual([]);
    });

    it('treats LIKE wildcards in search literally', async () => {
      const pct = await t.http.get(api('/users')).query({ search: '%' }).set(asRoot()).expect(200);
      expect(pct.body).toEqual([]);
      const under = await t.http.get(api('/users')).query({ search: '_' }).set(asRoot()).expect(200);
      expect(under.body).toEqual([]);
    });

    it('lets administrators search emails by substring', async () => {
      const res = await t.http.get(api('/users')).query({ search: 'mailbox@corp' }).set(asRoot()).expect(200);
      expect(res.body.map((u: { id: number }) => u.id)).toEqual([alice.id]);
      expect(res.body[0].email).toBe('alice.mailbox@corp.example.org');
    });

    it('lets non-administrators find a user by email only with the exact full address', async () => {
      const partial = await t.http.get(api('/users')).query({ search: 'mailbox@corp' }).set(as(bob)).expect(200);
      expect(partial.body).toEqual([]);
      const domain = await t.http.get(api('/users')).query({ search: 'corp.example.org' }).set(as(bob)).expect(200);
      expect(domain.body).toEqual([]);
      const exact = await t.http.get(api('/users')).query({ search: 'Alice.Mailbox@corp.example.org' }).set(as(bob)).expect(200);
      expect(exact.body.map((u: { id: number }) => u.id)).toEqual([alice.id]);
      expect(exact.body[0]).not.toHaveProperty('email');
    });

    it('finds exactly one user by username=, as a page with the headers every list carries', async () => {
      const res = await t.http.get(api('/users')).query({ username: 'alice' }).set(as(bob)).expect(200);
      expect(res.body).toHaveLength(1);
      expect(res.body[0]).toMatchObject({ id: alice.id, username: 'alice' });
      expect(res.body[0]).not.toHaveProperty('email');
      expect(res.headers).toMatchObject({ 'x-total': '1', 'x-page': '1', 'x-total-pages': '1', 'x-next-page': '' });

      const admin = await t.http.get(api('/users')).query({ username: 'bob' }).set(asRoot()).expect(200);
      expect(admin.body).toHaveLength(1);
      expect(admin.body[0]).toMatchObject({ id: bob.id, email: 'bob@example.com', identities: [] });
    });

    it('username= is exact: a prefix finds nobody', async () => {
      const res = await t.http.get(api('/users')).query({ username: 'ali' }).set(asRoot()).expect(200);
      expect(res.body).toEqual([]);
      expect(res.headers).toMatchObject({ 'x-total': '0', 'x-total-pages': '0' });
    });

    it('paginates with X-* headers and an absolute Link that drops credentials', async () => {
      const all = await t.http.get(api('/users')).query({ per_page: 100 }).set(asRoot()).expect(200);
      const total = all.body.length;
      expect(total).toBeGreaterThan(2);
      const pages = Math.ceil(total / 2);

      const first = await t.http.get(api('/users')).query({ per_page: 2, private_token: t.root.token }).expect(200);
      expect(first.body).toHaveLength(2);
      expect(first.body.map((u: { id: number }) => u.id)).toEqual(all.body.slice(0, 2).map((u: { id: number }) => u.id));
      expect(first.headers['x-total']).toBe(String(total));
      expect(first.headers['x-total-pages']).toBe(String(pages));
      expect(first.headers['x-per-page']).toBe('2');
      expect(first.headers['x-page']).toBe('1');
      expect(first.headers['x-next-page']).toBe('2');
      expect(first.headers['x-prev-page']).toBe('');
      const link: string = first.headers.link;
      expect(link).toContain(`<${EXTERNAL_URL}/api/v3/users?page=2&per_page=2>; rel="next"`);
      expect(link).toContain(`<${EXTERNAL_URL}/api/v3/users?page=1&per_page=2>; rel="first"`);
      expect(link).toContain(`<${EXTERNAL_URL}/api/v3/users?page=${pages}&per_page=2>; rel="last"`);
      expect(link).not.toContain('rel="prev"');
      expect(link).not.toContain(t.root.token);
      expect(link).not.toContain('private_token');

      const second = await t.http.get(api('/users')).query({ per_page: 2, page: 2 }).set(asRoot()).expect(200);
      expect(second.body.map((u: { id: number }) => u.id)).toEqual(all.body.slice(2, 4).map((u: { id: number }) => u.id));
      expect(second.headers['x-page']).toBe('2');
      expect(second.headers['x-prev-page']).toBe('1');
      expect(second.headers.link).toContain(`<${EXTERNAL_URL}/api/v3/users?page=1&per_page=2>; rel="prev"`);

      const last = await t.http.get(api('/users')).query({ per_page: 2, page: pages }).set(asRoot()).expect(200);
      expect(last.headers['x-next-page']).toBe('');
      expect(last.headers.link).not.toContain('rel="next"');
    });

    it('keeps other query parameters in Link', async () => {
      const res = await t.http.get(api('/users')).query({ per_page: 1, search: 'b' }).set(asRoot()).expect(200);
      expect(res.headers.link).toContain('search=b');
    });

    it('filters by active=true', async () => {
      const u = await t.createUser();
      await t.http
        .put(api(`/users/${u.id}/block`))
        .set(asRoot())
        .expect(200);
      const all = await t.http.get(api('/users')).query({ per_page: 100 }).set(asRoot()).expect(200);
      expect(all.body.map((x: { id: number }) => x.id)).toContain(u.id);
      const active = await t.http.get(api('/users')).query({ per_page: 100, active: 'true' }).set(asRoot()).expect(200);
      expect(active.body.map((x: { id: number }) => x.id)).not.toContain(u.id);
      expect(active.body.every((x: { state: string }) => x.state === 'active')).toBe(true);
      await t.http
        .delete(api(`/users/${u.id}`))
        .set(asRoot())
        .expect(200);
    });

    it('needs authentication', async () => {
      const res = await t.http.get(api('/users')).expect(401);
      expect(res.body).toEqual({ message: '401 Unauthorized' });
    });
  });

  describe('GET /users/:id', () => {
    it('gives an administrator the full view', async () => {
      const res = await t.http
        .get(api(`/users/${alice.id}`))
        .set(asRoot())
        .expect(200);
      expect(res.headers['content-type']).toBe('application/json');
      await expectSchema(res, 'UserFull');
      expect(res.body).toMatchObject({ id: alice.id, email: 'alice.mailbox@corp.example.org', projects_limit: expect.any(Number) });
      expect(res.body).not.toHaveProperty('private_token');
    });

    it('gives a normal user the normal view without email', async () => {
      const res = await t.http
        .get(api(`/users/${alice.id}`))
        .set(as(bob))
        .expect(200);
      await expectSchema(res, 'User');
      expect(res.body).toMatchObject({ id: alice.id, username: 'alice', is_admin: false });
      expect(res.body).not.toHaveProperty('email');
    });

    it('404s an unknown user', async () => {
      const res = await t.http.get(api('/users/999999')).set(asRoot()).expect(404);
      expect(res.body).toEqual({ message: '404 User Not Found' });
      expect(res.headers['content-type']).toBe('application/json');
    });

    it('404s a non-numeric id', async () => {
      const res = await t.http.get(api('/users/alice')).set(asRoot()).expect(404);
      expect(res.body.message).toMatch(/^404 /);
      await t.http.get(api('/users/1e3')).set(asRoot()).expect(404);
      await t.http.get(api('/users/-1')).set(asRoot()).expect(404);
      await t.http.get(api('/users/99999999999999999999')).set(asRoot()).expect(404);
    });
  });

  describe('POST /users', () => {
    it('creates a user: 201 with the full view', async () => {
      const body = newUserBody({
        bio: 'hello',
        location: 'Wonderland',
        skype: 'sk',
        linkedin: 'li',
        twitter: 'tw',
        website_url: 'https://example.org/me',
      });
      const res = await t.http.post(api('/users')).set(asRoot()).send(body).expect(201);
      expect(res.headers['content-type']).toBe('application/json');
      await expectSchema(res, 'UserFull');
      expect(res.body).toMatchObject({
        id: expect.any(Number),
        username: body.username,
        email: body.email,
        name: body.name,
        state: 'active',
        is_admin: false,
        bio: 'hello',
        location: 'Wonderland',
        skype: 'sk',
        linkedin: 'li',
        twitter: 'tw',
        website_url: 'https://example.org/me',
        external: false,
        identities: [],
        web_url: `${EXTERNAL_URL}/u/${body.username as string}`,
      });
      expect(res.body.confirmed_at).not.toBeNull();
      expect(res.body).not.toHaveProperty('private_token');
      expect(res.body).not.toHaveProperty('password');
      expect(res.body).not.toHaveProperty('encrypted_password');
      // the new user can sign in
      const s = await t.http.post(api('/session')).send({ login: body.username, password: body.password }).expect(201);
      expect(s.body.id).toBe(res.body.id);
    });

    it('honours the admin-only attributes', async () => {
      const body = newUserBody({
        admin: true,
        can_create_group: false,
        external: true,
        projects_limit: 3,
        confirm: true,
        provider: 'ldapmain',
        extern_uid: 'uid=spec,ou=people,dc=example,dc=org',
      });
      const res = await t.http.post(api('/users')).set(asRoot()).send(body).expect(201);
      // external users may not create projects or groups of their own (GitLab 8.x)
      expect(res.body).toMatchObject({
        is_admin: true,
        can_create_group: false,
        external: true,
        projects_limit: 0,
        can_create_project: false,
        confirmed_at: null,
        identities: [{ provider: 'ldapmain', extern_uid: 'uid=spec,ou=people,dc=example,dc=org' }],
      });
      const shown = await t.http
        .get(api(`/users/${res.body.id}`))
        .set(asRoot())
        .expect(200);
      expect(shown.body.identities).toEqual([{ provider: 'ldapmain', extern_uid: 'uid=spec,ou=people,dc=example,dc=org' }]);
      // tidy up: this admin must not keep root from being the last administrator later
      await t.http
        .delete(api(`/users/${res.body.id}`))
        .set(asRoot())
        .expect(200);
    });

    it('confirm as 8.17 (skip_confirmation! unless confirm): false or absent creates the user confirmed, true leaves confirmed_at null', async () => {
      const confirmedAt = async (extra: Record<string, unknown>) => {
        const res = await t.http.post(api('/users')).set(asRoot()).send(newUserBody(extra)).expect(201);
        const row = await t.sql<{ confirmed_at: Date | null }>(`SELECT confirmed_at FROM users WHERE id = $1`, [res.body.id]);
        expect(row[0].confirmed_at === null).toBe(res.body.confirmed_at === null);
        return res.body.confirmed_at as string | null;
      };
      const before = Date.now();
      for (const confirm of [false, 'false', 'no', '0']) {
        const at = await confirmedAt({ confirm });
        expect([confirm, at === null]).toEqual([confirm, false]);
        expect(Date.parse(at!)).toBeGreaterThanOrEqual(before - 1000);
      }
      expect(await confirmedAt({})).not.toBeNull();
      expect(await confirmedAt({ confirm: true })).toBeNull();
      expect(await confirmedAt({ confirm: 'true' })).toBeNull();
    });

    it('defaults to a normal user with projects_limit from the default_projects_limit setting', async () => {
      await t.http.put(api('/application/settings')).set(asRoot()).send({ default_projects_limit: 42 }).expect(200);
      try {
        const res = await t.http.post(api('/users')).set(asRoot()).send(newUserBody()).expect(201);
        expect(res.body).toMatchObject({ projects_limit: 42, is_admin: false, external: false, can_create_project: true });
      } finally {
        await t.http.put(api('/application/settings')).set(asRoot()).send({ default_projects_limit: 10 }).expect(200);
      }
      const res = await t.http.post(api('/users')).set(asRoot()).send(newUserBody()).expect(201);
      expect(res.body.projects_limit).toBe(10);
    });

    it('projects_limit 0 means the user cannot create projects', async () => {
      const res = await t.http
        .post(api('/users'))
        .set(asRoot())
        .send(newUserBody({ projects_limit: 0 }))
        .expect(201);
      expect(res.body).toMatchObject({ projects_limit: 0, can_create_project: false });
    });

    it.each(['email', 'password', 'username', 'name'])('400 when %s is missing', async (field) => {
      const body = newUserBody();
      delete body[field];
      const res = await t.http.post(api('/users')).set(asRoot()).send(body).expect(400);
      expect(res.body).toEqual({ message: `400 (Bad request) "${field}" not given` });
      expect(res.headers['content-type']).toBe('application/json');
    });

    it('400 when a required attribute is blank', async () => {
      const res = await t.http
        .post(api('/users'))
        .set(asRoot())
        .send(newUserBody({ name: '   ' }))
        .expect(400);
      expect(res.body).toEqual({ message: '400 (Bad request) "name" not given' });
    });

    it('400 with a field map for a short password', async () => {
      const res = await t.http
        .post(api('/users'))
        .set(asRoot())
        .send(newUserBody({ password: 'short' }))
        .expect(400);
      expect(res.body).toEqual({ message: { password: ['is too short (minimum is 8 characters)'] } });
    });

    it('400 with a field map for a bio longer than 255 characters', async () => {
      const res = await t.http
        .post(api('/users'))
        .set(asRoot())
        .send(newUserBody({ bio: 'b'.repeat(256) }))
        .expect(400);
      expect(res.body).toEqual({ message: { bio: ['is too long (maximum is 255 characters)'] } });
      await t.http
        .post(api('/users'))
        .set(asRoot())
        .send(newUserBody({ bio: 'b'.repeat(255) }))
        .expect(201);
    });

    it.each(['has space', '-dash-first', 'ends.', 'name.git', 'émile', 'a/b'])('400 with a field map for the bad username %p', async (username) => {
      const res = await t.http.post(api('/users')).set(asRoot()).send(newUserBody({ username })).expect(400);
      expect(Object.keys(res.body.message)).toEqual(['username']);
      expect(res.body.message.username[0]).toMatch(/can contain only letters/);
    });

    it('400 for a reserved username', async () => {
      const res = await t.http
        .post(api('/users'))
        .set(asRoot())
        .send(newUserBody({ username: 'Admin' }))
        .expect(400);
      expect(res.body).toEqual({ message: { username: ['is a reserved name'] } });
    });

    it.each(['not-an-email', 'a@b', 'two@@example.com', 'with space@example.com'])('400 with a field map for the bad email %p', async (email) => {
      const res = await t.http.post(api('/users')).set(asRoot()).send(newUserBody({ email })).expect(400);
      expect(res.body).toEqual({ message: { email: ['is invalid'] } });
    });

    it('400 for a negative or non-numeric projects_limit', async () => {
      const neg = await t.http
        .post(api('/users'))
        .set(asRoot())
        .send(newUserBody({ projects_limit: -1 }))
        .expect(400);
      expect(neg.body).toEqual({ message: { projects_limit: ['must be greater than or equal to 0'] } });
      const nan = await t.http
        .post(api('/users'))
        .set(asRoot())
        .send(newUserBody({ projects_limit: 'lots' }))
        .expect(400);
      expect(nan.body.message).toHaveProperty('projects_limit');
    });

    it('reports several invalid fields at once', async () => {
      const res = await t.http
        .post(api('/users'))
        .set(asRoot())
        .send(newUserBody({ password: 'short', email: 'nope', bio: 'x'.repeat(300) }))
        .expect(400);
      expect(res.body.message).toEqual({
        email: ['is invalid'],
        password: ['is too short (minimum is 8 characters)'],
        bio: ['is too long (maximum is 255 characters)'],
      });
    });

    it('409 for a taken email, also in another case', async () => {
      const same = await t.http
        .post(api('/users'))
        .set(asRoot())
        .send(newUserBody({ email: 'bob@example.com' }))
        .expect(409);
      expect(same.body).toEqual({ message: '409 Email has already been taken' });
      const upper = await t.http
        .post(api('/users'))
        .set(asRoot())
        .send(newUserBody({ email: 'BOB@Example.COM' }))
        .expect(409);
      expect(upper.body).toEqual({ message: '409 Email has already been taken' });
    });

    it("409 for another user's secondary email", async () => {
      await t.http.post(api('/user/emails')).set(as(bob)).send({ email: 'bob.second@example.com' }).expect(201);
      const res = await t.http
        .post(api('/users'))
        .set(asRoot())
        .send(newUserBody({ email: 'Bob.Second@example.com' }))
        .expect(409);
      expect(res.body).toEqual({ message: '409 Email has already been taken' });
    });

    it('409 for a taken username, also in another case', async () => {
      const same = await t.http
        .post(api('/users'))
        .set(asRoot())
        .send(newUserBody({ username: 'alice' }))
        .expect(409);
      expect(same.body).toEqual({ message: '409 Username has already been taken' });
      const upper = await t.http
        .post(api('/users'))
        .set(asRoot())
        .send(newUserBody({ username: 'ALICE' }))
        .expect(409);
      expect(upper.body).toEqual({ message: '409 Username has already been taken' });
    });

    it('gives exactly one 201 when the same username is created concurrently, 409 to the rest', async () => {
      const bodies = [1, 2, 3, 4, 5].map((i) => newUserBody({ username: 'racer', email: `racer${i}@users-spec.test` }));
      const results = await Promise.all(bodies.map((b) => t.http.post(api('/users')).set(asRoot()).send(b)));
      const statuses = results.map((r) => r.status).sort();
      expect(statuses).toEqual([201, 409, 409, 409, 409]);
      for (const r of results.filter((x) => x.status === 409)) {
        expect(r.body).toEqual({ message: '409 Username has already been taken' });
      }
    });

    it('gives exactly one 201 when the same email is created concurrently, 409 to the rest', async () => {
      const bodies = [1, 2, 3, 4].map((i) => newUserBody({ username: `samemail${i}`, email: 'same.mail@users-spec.test' }));
      const results = await Promise.all(bodies.map((b) => t.http.post(api('/users')).set(asRoot()).send(b)));
      expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409, 409]);
      for (const r of results.filter((x) => x.status === 409)) {
        expect(r.body).toEqual({ message: '409 Email has already been taken' });
      }
    });

    it('creates nothing when refusing', async () => {
      const body = newUserBody({ email: 'bob@example.com' });
      await t.http.post(api('/users')).set(asRoot()).send(body).expect(409);
      const found = await t.http.get(api('/users')).query({ username: body.username }).set(asRoot()).expect(200);
      expect(found.body).toEqual([]);
    });

    it('403 for a non-administrator', async () => {
      const body = newUserBody();
      const res = await t.http.post(api('/users')).set(as(alice)).send(body).expect(403);
      expect(res.body).toEqual({ message: '403 Forbidden' });
      const found = await t.http.get(api('/users')).query({ username: body.username }).set(asRoot()).expect(200);
      expect(found.body).toEqual([]);
    });

    it('401 without a token', async () => {
      const res = await t.http.post(api('/users')).send(newUserBody()).expect(401);
      expect(res.body).toEqual({ message: '401 Unauthorized' });
    });

    it('accepts a JSON body', async () => {
      const body = newUserBody({ admin: 'false', can_create_group: 'True' });
      const res = await t.http.post(api('/users')).set(asRoot()).set('Content-Type', 'application/json').send(JSON.stringify(body)).expect(201);
      expect(res.body).toMatchObject({ username: body.username, is_admin: false, can_create_group: true });
    });

    it('accepts a urlencoded form body', async () => {
      const body = newUserBody({ projects_limit: '7', can_create_group: 'false' });
      const res = await t.http
        .post(api('/users'))
        .set(asRoot())
        .type('form')
        .send(body as Record<string, string>)
        .expect(201);
      expect(res.body).toMatchObject({ username: body.username, email: body.email, projects_limit: 7, can_create_group: false });
    });

    it('accepts a multipart form body', async () => {
      const body = newUserBody({ projects_limit: '5', bio: 'multi' });
      let req = t.http.post(api('/users')).set(asRoot());
      for (const [k, v] of Object.entries(body)) req = req.field(k, String(v));
      const res = await req.expect(201);
      expect(res.body).toMatchObject({ username: body.username, email: body.email, projects_limit: 5, bio: 'multi' });
    });

    it('accepts query-string parameters', async () => {
      const body = newUserBody({ projects_limit: '4' });
      const res = await t.http
        .post(api('/users'))
        .set(asRoot())
        .query(body as Record<string, string>)
        .expect(201);
      expect(res.body).toMatchObject({ username: body.username, email: body.email, projects_limit: 4 });
    });

    it('answers a malformed JSON body with 400, not 500', async () => {
      const res = await t.http.post(api('/users')).set(asRoot()).set('Content-Type', 'application/json').send('{"email": ').expect(400);
      expect(res.headers['content-type']).toBe('application/json');
      expect(typeof res.body.message).toBe('string');
    });

    it('answers non-string attribute values with 400, not 500', async () => {
      const res = await t.http
        .post(api('/users'))
        .set(asRoot())
        .send(newUserBody({ username: { nested: 'x' } }))
        .expect(400);
      expect(res.body.message).toBeDefined();
    });
  });

  describe('PUT /users/:id', () => {
    let carol: TestUser;
    beforeAll(async () => {
      carol = await t.createUser({ username: 'carol', email: 'carol@example.com', name: 'Carol' });
    });

    it('updates attributes: 200 with the full view', async () => {
      const res = await t.http
        .put(api(`/users/${carol.id}`))
        .set(asRoot())
        .send({ name: 'Carol Danvers', bio: 'pilot', website_url: 'https://carol.example', projects_limit: 12 })
        .expect(200);
      expect(res.headers['content-type']).toBe('application/json');
      await expectSchema(res, 'UserFull');
      expect(res.body).toMatchObject({
        id: carol.id,
        username: 'carol',
        name: 'Carol Danvers',
        bio: 'pilot',
        website_url: 'https://carol.example',
        projects_limit: 12,
        external: false,
      });
      const shown = await t.http
        .get(api(`/users/${carol.id}`))
        .set(asRoot())
        .expect(200);
      expect(shown.body).toMatchObject({ name: 'Carol Danvers', projects_limit: 12 });
    });

    it('making a user external takes away its own projects and groups', async () => {
      const u = await t.createUser();
      const res = await t.http
        .put(api(`/users/${u.id}`))
        .set(asRoot())
        .send({ external: true, projects_limit: 5 })
        .expect(200);
      expect(res.body).toMatchObject({ external: true, projects_limit: 0, can_create_group: false, can_create_project: false });
      await t.http.post(api('/projects')).set('PRIVATE-TOKEN', u.token).send({ name: 'not-allowed' }).expect(403);
      const back = await t.http
        .put(api(`/users/${u.id}`))
        .set(asRoot())
        .send({ external: false, projects_limit: 5 })
        .expect(200);
      expect(back.body).toMatchObject({ external: false, projects_limit: 5 });
    });

    it('leaves attributes that are absent or null alone', async () => {
      const res = await t.http
        .put(api(`/users/${carol.id}`))
        .set(asRoot())
        .send({ bio: null, skype: 'carol.sk' })
        .expect(200);
      expect(res.body).toMatchObject({ name: 'Carol Danvers', bio: 'pilot', skype: 'carol.sk' });
    });

    it('accepts its own email again, in another case', async () => {
      const res = await t.http
        .put(api(`/users/${carol.id}`))
        .set(asRoot())
        .send({ email: 'Carol@example.com' })
        .expect(200);
      expect(res.body.email).toBe('Carol@example.com');
    });

    it('404 for an unknown user', async () => {
      const res = await t.http.put(api('/users/999999')).set(asRoot()).send({ name: 'x' }).expect(404);
      expect(res.body).toEqual({ message: '404 User Not Found' });
    });

    it('404 with a message for a duplicate email (spec decision 14), case-insensitive', async () => {
      const res = await t.http
        .put(api(`/users/${carol.id}`))
        .set(asRoot())
        .send({ email: 'ALICE.mailbox@corp.example.org' })
        .expect(404);
      expect(res.body.message).toMatch(/^404 /);
      expect(res.body.message).toContain('Email has already been taken');
      const second = await t.http
        .put(api(`/users/${carol.id}`))
        .set(asRoot())
        .send({ email: 'bob.second@example.com' })
        .expect(404);
      expect(second.body.message).toContain('Email has already been taken');
      const shown = await t.http
        .get(api(`/users/${carol.id}`))
        .set(asRoot())
        .expect(200);
      expect(shown.body.email).toBe('Carol@example.com');
    });

    it('404 with a message for a duplicate username', async () => {
      const res = await t.http
        .put(api(`/users/${carol.id}`))
        .set(asRoot())
        .send({ username: 'Bob' })
        .expect(404);
      expect(res.body.message).toMatch(/^404 /);
      expect(res.body.message).toContain('Username has already been taken');
    });

    it('400 with a field map for invalid values', async () => {
      const res = await t.http
        .put(api(`/users/${carol.id}`))
        .set(asRoot())
        .send({ password: 'short', bio: 'b'.repeat(256) })
        .expect(400);
      expect(res.body).toEqual({
        message: {
          password: ['is too short (minimum is 8 characters)'],
          bio: ['is too long (maximum is 255 characters)'],
        },
      });
    });

    it('changes the password: the new one signs in, the old one does not', async () => {
      await t.http
        .put(api(`/users/${carol.id}`))
        .set(asRoot())
        .send({ password: 'a-brand-new-password' })
        .expect(200);
      const ok = await t.http.post(api('/session')).send({ login: 'carol', password: 'a-brand-new-password' }).expect(201);
      expect(ok.body.id).toBe(carol.id);
      expect(ok.body.private_token).toBe(carol.token);
      await t.http.post(api('/session')).send({ login: 'carol', password: carol.password }).expect(401);
      carol.password = 'a-brand-new-password';
    });

    it('changes the username: found and signed in by the new one, the old one is free', async () => {
      const res = await t.http
        .put(api(`/users/${carol.id}`))
        .set(asRoot())
        .send({ username: 'captain' })
        .expect(200);
      expect(res.body).toMatchObject({ username: 'captain', web_url: `${EXTERNAL_URL}/u/captain` });
      const found = await t.http.get(api('/users')).query({ username: 'captain' }).set(asRoot()).expect(200);
      expect(found.body.map((u: { id: number }) => u.id)).toEqual([carol.id]);
      const old = await t.http.get(api('/users')).query({ username: 'carol' }).set(asRoot()).expect(200);
      expect(old.body).toEqual([]);
      await t.http.post(api('/session')).send({ login: 'captain', password: carol.password }).expect(201);
      // the old username can be taken by someone else now
      await t.http
        .post(api('/users'))
        .set(asRoot())
        .send(newUserBody({ username: 'carol' }))
        .expect(201);
    });

    it('403 for a non-administrator, even on itself', async () => {
      await t.http
        .put(api(`/users/${alice.id}`))
        .set(as(alice))
        .send({ admin: true })
        .expect(403);
      const shown = await t.http
        .get(api(`/users/${alice.id}`))
        .set(asRoot())
        .expect(200);
      expect(shown.body.is_admin).toBe(false);
    });

    it('accepts form bodies and query-string parameters', async () => {
      const form = await t.http
        .put(api(`/users/${carol.id}`))
        .set(asRoot())
        .type('form')
        .send({ location: 'Space' })
        .expect(200);
      expect(form.body.location).toBe('Space');
      const query = await t.http
        .put(api(`/users/${carol.id}`))
        .set(asRoot())
        .query({ twitter: 'capt' })
        .expect(200);
      expect(query.body).toMatchObject({ twitter: 'capt', location: 'Space' });
    });
  });

  describe('DELETE /users/:id', () => {
    it('deletes: 200 with the user, then 200 with an empty body', async () => {
      const u = await t.createUser();
      const res = await t.http
        .delete(api(`/users/${u.id}`))
        .set(asRoot())
        .expect(200);
      expect(res.body).toMatchObject({ id: u.id, username: u.username, email: u.email });
      await t.http
        .get(api(`/users/${u.id}`))
        .set(asRoot())
        .expect(404);
      // its token no longer works
      await t.http.get(api('/user')).set(as(u)).expect(401);
      const again = await t.http
        .delete(api(`/users/${u.id}`))
        .set(asRoot())
        .expect(200);
      expect(again.text).toBe('');
    });

    it('frees the email and username of the deleted user', async () => {
      const u = await t.createUser();
      await t.http
        .delete(api(`/users/${u.id}`))
        .set(asRoot())
        .expect(200);
      await t.http
        .post(api('/users'))
        .set(asRoot())
        .send(newUserBody({ username: u.username, email: u.email }))
        .expect(201);
    });

    it("takes the user's personal projects and namespace with it; the username and project path are free again", async () => {
      const u = await t.createUser();
      const created = await t.http.post(api('/projects')).set(as(u)).send({ name: 'keepsake' }).expect(201);
      await t.http
        .delete(api(`/users/${u.id}`))
        .set(asRoot())
        .expect(200);
      await t.http
        .get(api(`/projects/${created.body.id}`))
        .set(asRoot())
        .expect(404);
      expect(await t.sql(`SELECT id FROM projects WHERE id = $1`, [created.body.id])).toEqual([]);
      expect(await t.sql(`SELECT id FROM namespaces WHERE kind = 'user' AND owner_id = $1`, [u.id])).toEqual([]);
      const back = await t.createUser({ username: u.username });
      const fresh = await t.http.post(api('/projects')).set(as(back)).send({ name: 'keepsake' }).expect(201);
      expect(fresh.body).toMatchObject({ path_with_namespace: `${u.username}/keepsake` });
    });

    it('200 with an empty body for a user that never existed', async () => {
      const res = await t.http.delete(api('/users/999999')).set(asRoot()).expect(200);
      expect(res.text).toBe('');
    });

    it('403 for a non-administrator', async () => {
      const res = await t.http
        .delete(api(`/users/${bob.id}`))
        .set(as(alice))
        .expect(403);
      expect(res.body).toEqual({ message: '403 Forbidden' });
      await t.http
        .get(api(`/users/${bob.id}`))
        .set(asRoot())
        .expect(200);
    });

    it('401 without a token', async () => {
      await t.http.delete(api(`/users/${bob.id}`)).expect(401);
    });

    it('deletes an administrator while another remains, refuses the last one', async () => {
      // demote every other administrator so that root is the last one
      const admins = await t.sql<{ id: number }>(`SELECT id FROM users WHERE admin AND id <> $1`, [t.root.id]);
      for (const a of admins) {
        await t.http
          .put(api(`/users/${a.id}`))
          .set(asRoot())
          .send({ admin: false })
          .expect(200);
      }
      const second = await t.http
        .post(api('/users'))
        .set(asRoot())
        .send(newUserBody({ admin: true }))
        .expect(201);
      await t.http
        .delete(api(`/users/${second.body.id}`))
        .set(asRoot())
        .expect(200);

      const res = await t.http
        .delete(api(`/users/${t.root.id}`))
        .set(asRoot())
        .expect(403);
      expect(res.body.message).toMatch(/^403 Forbidden/);
      const me = await t.http.get(api('/user')).set(asRoot()).expect(200);
      expect(me.body).toMatchObject({ id: t.root.id, is_admin: true });
    });

    it('refuses to demote or block the last administrator, allows it while another remains', async () => {
      const demote = await t.http
        .put(api(`/users/${t.root.id}`))
        .set(asRoot())
        .send({ admin: false })
        .expect(403);
      expect(demote.body.message).toMatch(/^403 Forbidden/);
      const block = await t.http
        .put(api(`/users/${t.root.id}/block`))
        .set(asRoot())
        .expect(403);
      expect(block.body.message).toMatch(/^403 Forbidden/);
      const me = await t.http.get(api('/user')).set(asRoot()).expect(200);
      expect(me.body).toMatchObject({ is_admin: true, state: 'active' });
      // a blocked administrator does not count as the remaining one
      const other = await t.http
        .post(api('/users'))
        .set(asRoot())
        .send(newUserBody({ admin: true }))
        .expect(201);
      await t.http
        .put(api(`/users/${other.body.id}/block`))
        .set(asRoot())
        .expect(200);
      await t.http
        .put(api(`/users/${t.root.id}`))
        .set(asRoot())
        .send({ admin: false })
        .expect(403);
      await t.http
        .put(api(`/users/${other.body.id}/unblock`))
        .set(asRoot())
        .expect(200);
      // with an active second administrator, demoting one is fine (and non-admin updates never check)
      await t.http
        .put(api(`/users/${other.body.id}`))
        .set(asRoot())
        .send({ admin: false })
        .expect(200);
      await t.http
        .put(api(`/users/${t.root.id}`))
        .set(asRoot())
        .send({ admin: true, bio: 'still here' })
        .expect(200);
      await t.http
        .delete(api(`/users/${other.body.id}`))
        .set(asRoot())
        .expect(200);
    });
  });

  describe('block and unblock', () => {
    let dave: TestUser;
    beforeAll(async () => {
      dave = await t.createUser({ username: 'dave' });
    });

    it('blocks: 200 with body true; the token then gets 401 and sign-in fails', async () => {
      const res = await t.http
        .put(api(`/users/${dave.id}/block`))
        .set(asRoot())
        .expect(200);
      expect(res.headers['content-type']).toBe('application/json');
      expect(res.text).toBe('true');
      expect(res.body).toBe(true);
      const me = await t.http.get(api('/user')).set(as(dave)).expect(401);
      expect(me.body).toEqual({ message: '401 Unauthorized' });
      await t.http.post(api('/session')).send({ login: 'dave', password: dave.password }).expect(401);
      const shown = await t.http
        .get(api(`/users/${dave.id}`))
        .set(asRoot())
        .expect(200);
      expect(shown.body.state).toBe('blocked');
    });

    it('blocking again is fine', async () => {
      const res = await t.http
        .put(api(`/users/${dave.id}/block`))
        .set(asRoot())
        .expect(200);
      expect(res.body).toBe(true);
    });

    it('unblocks: 200 with body true; the token works again', async () => {
      const res = await t.http
        .put(api(`/users/${dave.id}/unblock`))
        .set(asRoot())
        .expect(200);
      expect(res.headers['content-type']).toBe('application/json');
      expect(res.body).toBe(true);
      const me = await t.http.get(api('/user')).set(as(dave)).expect(200);
      expect(me.body).toMatchObject({ id: dave.id, state: 'active' });
    });

    it('404 for an unknown user', async () => {
      const block = await t.http.put(api('/users/999999/block')).set(asRoot()).expect(404);
      expect(block.body).toEqual({ message: '404 User Not Found' });
      const unblock = await t.http.put(api('/users/999999/unblock')).set(asRoot()).expect(404);
      expect(unblock.body).toEqual({ message: '404 User Not Found' });
    });

    it('403 for a non-administrator', async () => {
      await t.http
        .put(api(`/users/${bob.id}/block`))
        .set(as(alice))
        .expect(403);
      await t.http.get(api('/user')).set(as(bob)).expect(200);
      await t.http
        .put(api(`/users/${bob.id}/unblock`))
        .set(as(alice))
        .expect(403);
    });

    it('403 for LDAP-blocked users, with the exact messages', async () => {
      await t.sql(`UPDATE users SET state = 'ldap_blocked' WHERE id = $1`, [dave.id]);
      const block = await t.http
        .put(api(`/users/${dave.id}/block`))
        .set(asRoot())
        .expect(403);
      expect(block.body).toEqual({ message: '403 Forbidden - LDAP blocked users cannot be modified by the API' });
      const unblock = await t.http
        .put(api(`/users/${dave.id}/unblock`))
        .set(asRoot())
        .expect(403);
      expect(unblock.body).toEqual({ message: '403 Forbidden - LDAP blocked users cannot be unblocked by the API' });
      const rows = await t.sql<{ state: string }>(`SELECT state FROM users WHERE id = $1`, [dave.id]);
      expect(rows[0].state).toBe('ldap_blocked');
      await t.http.get(api('/user')).set(as(dave)).expect(401);
    });
  });

  describe('GET /user', () => {
    it('returns the current user with its private token', async () => {
      const res = await t.http.get(api('/user')).set(as(alice)).expect(200);
      expect(res.headers['content-type']).toBe('application/json');
      await expectSchema(res, 'UserLogin');
      expect(res.body).toMatchObject({
        id: alice.id,
        username: 'alice',
        email: 'alice.mailbox@corp.example.org',
        private_token: alice.token,
        is_admin: false,
      });
      expect(res.body.current_sign_in_at).not.toBeNull();
    });

    it('401 without a token', async () => {
      const res = await t.http.get(api('/user')).expect(401);
      expect(res.headers['content-type']).toBe('application/json');
      expect(res.body).toEqual({ message: '401 Unauthorized' });
    });
  });

  describe('routing', () => {
    it('routes the .json suffix like the bare path', async () => {
      const res = await t.http.get(api('/user.json')).set(as(alice)).expect(200);
      expect(res.body.id).toBe(alice.id);
      const one = await t.http
        .get(api(`/users/${bob.id}.json`))
        .set(asRoot())
        .expect(200);
      expect(one.body.id).toBe(bob.id);
      const list = await t.http.get(api('/users.json')).query({ username: 'bob' }).set(asRoot()).expect(200);
      expect(list.body.map((u: { id: number }) => u.id)).toEqual([bob.id]);
    });

    it('routes extra slashes like single ones', async () => {
      const one = await t.http.get(`/api/v3//users//${bob.id}/`).set(asRoot()).expect(200);
      expect(one.body.id).toBe(bob.id);
      const me = await t.http.get('/api//v3/user/').set(as(bob)).expect(200);
      expect(me.body.id).toBe(bob.id);
    });

    it('404 Not Found for an unknown route', async () => {
      const res = await t.http.get(api('/no-such-thing')).set(asRoot()).expect(404);
      expect(res.headers['content-type']).toBe('application/json');
      expect(res.body).toEqual({ message: '404 Not Found' });
    });
  });

  describe('query cost', () => {
    beforeAll(async () => {
      // 110 more users (bulk-inserted: bcrypt per user would be slow), a third with an identity
      await t.sql(
        `INSERT INTO users (username, email, name, encrypted_password, private_token_digest, private_token_encrypted)
         SELECT 'bulk' || g, 'bulk' || g || '@bulk.test', 'Bulk ' || g, 'x', lpad(g::text, 64, 'f'), 'v1:x:x:x'
           FROM generate_series(1, 110) g`,
      );
      await t.sql(
        `INSERT INTO identities (user_id, provider, extern_uid)
         SELECT id, 'ldapmain', 'uid=' || username FROM users WHERE username LIKE 'bulk%' AND id % 3 = 0`,
      );
    });

    /** Fewest statements over a few runs (the settings cache may expire during one of them). */
    async function cost(path: string, token: string): Promise<number> {
      const runs: number[] = [];
      for (let i = 0; i < 3; i++) {
        runs.push(
          await countQueries(t, async () => {
            await t.http.get(path).set('PRIVATE-TOKEN', token).expect(200);
          }),
        );
      }
      return Math.min(...runs);
    }

    it('GET /users?per_page=100 costs the same number of queries as per_page=20 (admin view)', async () => {
      const big = await t.http.get(api('/users?per_page=100')).set(asRoot()).expect(200);
      expect(big.body).toHaveLength(100);
      expect(big.body.some((u: { identities: unknown[] }) => u.identities.length > 0)).toBe(true);
      const q20 = await cost(api('/users?per_page=20'), t.root.token);
      const q100 = await cost(api('/users?per_page=100'), t.root.token);
      expect(q20).toBeGreaterThan(0);
      expect(q100).toBe(q20);
    });

    it('GET /users?per_page=100 costs the same number of queries as per_page=20 (normal view)', async () => {
      const big = await t.http.get(api('/users?per_page=100')).set(as(alice)).expect(200);
      expect(big.body).toHaveLength(100);
      const q20 = await cost(api('/users?per_page=20'), alice.token);
      const q100 = await cost(api('/users?per_page=100'), alice.token);
      expect(q100).toBe(q20);
    });

    it('caps per_page at 100', async () => {
      const res = await t.http.get(api('/users?per_page=500')).set(asRoot()).expect(200);
      expect(res.body).toHaveLength(100);
      expect(res.headers['x-per-page']).toBe('100');
    });
  });
});
