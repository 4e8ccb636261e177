import { expectSchema } from './helpers/schema';
import { startTestApp, TestApp, TestUser } from './helpers/test-app';

const SETTINGS = '/api/v3/application/settings';
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('application settings', () => {
  let t: TestApp;
  let user: TestUser;

  const get = () => t.http.get(SETTINGS).set('PRIVATE-TOKEN', t.root.token);
  const put = (body: Record<string, unknown>) => t.http.put(SETTINGS).set('PRIVATE-TOKEN', t.root.token).send(body);

  beforeAll(async () => {
    t = await startTestApp();
    user = await t.createUser({ name: 'Plain User' });
  });
  afterAll(() => t.close());

  describe('GET /application/settings', () => {
    it('returns every field of the spec with its default', async () => {
      const res = await get().expect(200);
      expect(res.headers['content-type']).toBe('application/json');
      await expectSchema(res, 'ApplicationSettings');
      const s = res.body;
      expect(s).toMatchObject({
        default_projects_limit: 10,
        signup_enabled: true,
        signin_enabled: true,
        avatar_enabled: true,
        gravatar_enabled: true,
        sign_in_text: null,
        home_page_url: null,
        default_branch_protection: 1,
        restricted_visibility_levels: null,
        max_attachment_size: 10,
        session_expire_delay: 10080,
        default_project_visibility: 0,
        default_snippet_visibility: 0,
        default_group_visibility: 0,
        restricted_signup_domains: null,
        domain_whitelist: null,
        user_oauth_applications: true,
        after_sign_out_path: null,
        container_registry_token_expire_delay: 5,
      });
      expect(Number.isInteger(s.id)).toBe(true);
      expect(s.created_at).toMatch(ISO);
      expect(s.updated_at).toMatch(ISO);
      // python-gitlab saves the object back and needs every one of these keys
      for (const key of [
        'id',
        'default_projects_limit',
        'signup_enabled',
        'signin_enabled',
        'avatar_enabled',
        'gravatar_enabled',
        'sign_in_text',
        'home_page_url',
        'default_branch_protection',
        'restricted_visibility_levels',
        'max_attachment_size',
        'session_expire_delay',
        'default_project_visibility',
        'default_snippet_visibility',
        'restricted_signup_domains',
        'domain_whitelist',
        'user_oauth_applications',
        'after_sign_out_path',
        'container_registry_token_expire_delay',
        'created_at',
        'updated_at',
      ]) {
        expect(s).toHaveProperty([key]);
      }
    });

    it('needs authentication: 401 without a token', async () => {
      const res = await t.http.get(SETTINGS).expect(401);
      expect(res.body).toEqual({ message: '401 Unauthorized' });
      expect(res.headers['content-type']).toBe('application/json');
    });

    it('401 with an unknown token', async () => {
      const res = await t.http.get(SETTINGS).set('PRIVATE-TOKEN', 'not-a-token').expect(401);
      expect(res.body).toEqual({ message: '401 Unauthorized' });
    });

    it('is for administrators only: 403 for a normal user', async () => {
      const res = await t.http.get(SETTINGS).set('PRIVATE-TOKEN', user.token).expect(403);
      expect(res.body).toEqual({ message: '403 Forbidden' });
    });

    it('403 when an administrator uses sudo as a normal user', async () => {
      const res = await get().set('SUDO', user.username).expect(403);
      expect(res.body).toEqual({ message: '403 Forbidden' });
    });
  });

  describe('PUT /application/settings', () => {
    it('needs authentication and an administrator; refused writes change nothing', async () => {
      await t.http.put(SETTINGS).send({ signup_enabled: false }).expect(401);
      const res = await t.http.put(SETTINGS).set('PRIVATE-TOKEN', user.token).send({ signup_enabled: false }).expect(403);
      expect(res.body).toEqual({ message: '403 Forbidden' });
      expect((await get().expect(200)).body.signup_enabled).toBe(true);
    });

    it('changes persist and are returned', async () => {
      const before = (await get().expect(200)).body;
      const res = await put({
        default_projects_limit: 42,
        signup_enabled: false,
        sign_in_text: 'Welcome to the test instance',
        home_page_url: 'https://example.com/home',
        after_sign_out_path: 'https://example.com/bye',
        default_branch_protection: 2,
        max_attachment_size: 25,
        session_expire_delay: 60,
        container_registry_token_expire_delay: 15,
        user_oauth_applications: false,
      }).expect(200);
      expect(res.headers['content-type']).toBe('application/json');
      const expected = {
        id: before.id,
        default_projects_limit: 42,
        signup_enabled: false,
        signin_enabled: true,
        sign_in_text: 'Welcome to the test instance',
        home_page_url: 'https://example.com/home',
        after_sign_out_path: 'https://example.com/bye',
        default_branch_protection: 2,
        max_attachment_size: 25,
        session_expire_delay: 60,
        container_registry_token_expire_delay: 15,
        user_oauth_applications: false,
      };
      expect(res.body).toMatchObject(expected);
      expect(res.body.created_at).toBe(before.created_at);
      expect(Date.parse(res.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(before.updated_at));
      expect((await get().expect(200)).body).toMatchObject(expected);

      // restore
      await put({
        default_projects_limit: 10,
        signup_enabled: true,
        sign_in_text: '',
        home_page_url: '',
        after_sign_out_path: '',
        default_branch_protection: 1,
        max_attachment_size: 10,
        session_expire_delay: 10080,
        container_registry_token_expire_delay: 5,
        user_oauth_applications: true,
      }).expect(200);
      expect((await get().expect(200)).body).toMatchObject({
        default_projects_limit: 10,
        sign_in_text: null,
        home_page_url: null,
        after_sign_out_path: null,
        default_branch_protection: 1,
      });
    });

    it('accepts form-encoded and query-string inputs with string booleans', async () => {
      let res = await t.http
        .put(SETTINGS)
        .set('PRIVATE-TOKEN', t.root.token)
        .type('form')
        .send({ signup_enabled: 'False', default_projects_limit: '7' })
        .expect(200);
      expect(res.body).toMatchObject({ signup_enabled: false, default_projects_limit: 7 });
      res = await t.http.put(`${SETTINGS}?signup_enabled=true&default_projects_limit=10`).set('PRIVATE-TOKEN', t.root.token).expect(200);
      expect(res.body).toMatchObject({ signup_enabled: true, default_projects_limit: 10 });
    });

    it('reads visibility inputs 1 and 2 as 10 and 20, and accepts 0/10/20 as they are', async () => {
      let res = await put({ default_project_visibility: 1, default_snippet_visibility: 2 }).expect(200);
      expect(res.body).toMatchObject({ default_project_visibility: 10, default_snippet_visibility: 20 });
      res = await put({ default_project_visibility: 20, default_snippet_visibility: 10 }).expect(200);
      expect(res.body).toMatchObject({ default_project_visibility: 20, default_snippet_visibility: 10 });
      res = await put({ default_project_visibility: '0', default_snippet_visibility: 0 }).expect(200);
      expect(res.body).toMatchObject({ default_project_visibility: 0, default_snippet_visibility: 0 });
      expect((await get()).body).toMatchObject({ default_project_visibility: 0, default_snippet_visibility: 0 });
    });

    it('restricted_visibility_levels as a JSON array, a comma string or repeated form fields', async () => {
      let res = await put({ restricted_visibility_levels: [0, 2] }).expect(200);
      expect(res.body.restricted_visibility_levels).toEqual([0, 20]);
      expect((await get()).body.restricted_visibility_levels).toEqual([0, 20]);

      res = await put({ restricted_visibility_levels: '1,2' }).expect(200);
      expect(res.body.restricted_visibility_levels).toEqual([10, 20]);

      res = await t.http
        .put(SETTINGS)
        .set('PRIVATE-TOKEN', t.root.token)
        .type('form')
        .send('restricted_visibility_levels[]=20&restricted_visibility_levels[]=0')
        .expect(200);
      expect(res.body.restricted_visibility_levels).toEqual([0, 20]);

      res = await put({ restricted_visibility_levels: [] }).expect(200);
      expect(res.body.restricted_visibility_levels).toEqual([]);
    });

    it('null values leave the fields unchanged (python-gitlab sends unset fields as null)', async () => {
      await put({ sign_in_text: 'keep me', home_page_url: 'https://example.com/', restricted_visibility_levels: [20] }).expect(200);
      const before = (await get()).body;
      const res = await put({
        default_projects_limit: null,
        signup_enabled: null,
        signin_enabled: null,
        gravatar_enabled: null,
        avatar_enabled: null,
        sign_in_text: null,
        home_page_url: null,
        default_branch_protection: null,
        restricted_visibility_levels: null,
        max_attachment_size: null,
        session_expire_delay: null,
        default_project_visibility: null,
        default_snippet_visibility: null,
        restricted_signup_domains: null,
        domain_whitelist: null,
        user_oauth_applications: null,
        after_sign_out_path: null,
        container_registry_token_expire_delay: null,
      }).expect(200);
      const { updated_at: _a, ...rest } = before;
      expect(res.body).toMatchObject(rest);
      expect(res.body).toMatchObject({ sign_in_text: 'keep me', home_page_url: 'https://example.com/', restricted_visibility_levels: [20] });
      await put({ sign_in_text: '', home_page_url: '', restricted_visibility_levels: [] }).expect(200);
    });

    it('the whole GET object sent back with one change is accepted (client round trip)', async () => {
      const current = (await get()).body;
      const res = await put({ ...current, default_projects_limit: 11 }).expect(200);
      await expectSchema(res, 'ApplicationSettings');
      const { updated_at: _u, ...unchanged } = current;
      expect(res.body).toMatchObject({ ...unchanged, default_projects_limit: 11 });
      expect(res.body.id).toBe(current.id);
      await put({ default_projects_limit: 10 }).expect(200);
    });

    it('ignores id, timestamps and unknown parameters', async () => {
      const before = (await get()).body;
      const res = await put({ id: before.id + 100, created_at: '2000-01-01T00:00:00Z', no_such_setting: 'x' }).expect(200);
      expect(res.body.id).toBe(before.id);
      expect(res.body.created_at).toBe(before.created_at);
      expect(res.body).not.toHaveProperty('no_such_setting');
      const rows = await t.sql<{ n: number }>('SELECT count(*)::int AS n FROM application_settings');
      expect(rows[0].n).toBe(1);
    });

    it('a "__proto__" key in a JSON body sets nothing', async () => {
      const res = await t.http
        .put(SETTINGS)
        .set('PRIVATE-TOKEN', t.root.token)
        .type('json')
        .send('{"__proto__": {"signup_enabled": false, "default_projects_limit": 1}, "constructor": {"prototype": {"x": 1}}}')
        .expect(200);
      expect(res.body).toMatchObject({ signup_enabled: true, default_projects_limit: 10 });
      expect((await get()).body).toMatchObject({ signup_enabled: true, default_projects_limit: 10 });
    });

    it('domain_whitelist and restricted_signup_domains are two names of one list', async () => {
      let res = await put({ domain_whitelist: 'example.com, *.Example.org' }).expect(200);
      expect(res.body.restricted_signup_domains).toEqual(['example.com', '*.example.org']);
      expect(res.body.domain_whitelist).toEqual(['example.com', '*.example.org']);
      res = await put({ restricted_signup_domains: ['corp.test'] }).expect(200);
      expect(res.body.domain_whitelist).toEqual(['corp.test']);
      expect((await get()).body.restricted_signup_domains).toEqual(['corp.test']);
      res = await put({ restricted_signup_domains: [] }).expect(200);
      expect(res.body.domain_whitelist).toEqual([]);
    });

    it('avatar_enabled and gravatar_enabled are one switch under two names', async () => {
      let res = await put({ avatar_enabled: false }).expect(200);
      expect(res.body).toMatchObject({ avatar_enabled: false, gravatar_enabled: false });
      res = await put({ gravatar_enabled: true }).expect(200);
      expect(res.body).toMatchObject({ avatar_enabled: true, gravatar_enabled: true });
    });

    describe('invalid values: 400 with a field map and nothing changed', () => {
      const cases: [string, Record<string, unknown>][] = [
        ['default_branch_protection=7', { default_branch_protection: 7 }],
        ['default_branch_protection=-1', { default_branch_protection: -1 }],
        ['default_project_visibility=5', { default_project_visibility: 5 }],
        ['default_snippet_visibility=3', { default_snippet_visibility: 3 }],
        ['default_project_visibility=public', { default_project_visibility: 'public' }],
        ['signup_enabled=maybe', { signup_enabled: 'maybe' }],
        ['signin_enabled as an object', { signin_enabled: { a: 1 } }],
        ['home_page_url=not-a-url', { home_page_url: 'not-a-url' }],
        ['after_sign_out_path=javascript:alert(1)', { after_sign_out_path: 'javascript:alert(1)' }],
        ['default_projects_limit=-1', { default_projects_limit: -1 }],
        ['default_projects_limit=abc', { default_projects_limit: 'abc' }],
        ['default_projects_limit=1.5', { default_projects_limit: 1.5 }],
        ['max_attachment_size=0', { max_attachment_size: 0 }],
        ['session_expire_delay=-5', { session_expire_delay: -5 }],
        ['container_registry_token_expire_delay=x', { container_registry_token_expire_delay: 'x' }],
        ['restricted_visibility_levels=[5]', { restricted_visibility_levels: [5] }],
        ['restricted_visibility_levels=0,x', { restricted_visibility_levels: '0,x' }],
        ['restricted_signup_domains=not a domain', { restricted_signup_domains: ['not a domain'] }],
        ['sign_in_text too long', { sign_in_text: 'x'.repeat(65536) }],
      ];
      it.each(cases)('%s', async (_name, body) => {
        const before = (await get()).body;
        const res = await put(body).expect(400);
        expect(res.headers['content-type']).toBe('application/json');
        const field = Object.keys(body)[0];
        expect(typeof res.body.message).toBe('object');
        expect(Object.keys(res.body.message)).toEqual([field]);
        expect(Array.isArray(res.body.message[field])).toBe(true);
        expect(res.body.message[field].length).toBeGreaterThan(0);
        for (const m of res.body.message[field]) expect(typeof m).toBe('string');
        expect((await get()).body).toEqual(before);
      });

      it('names every invalid field at once and applies none of the valid ones', async () => {
        const res = await put({
          default_branch_protection: 7,
          default_project_visibility: 5,
          signup_enabled: 'maybe',
          home_page_url: 'not-a-url',
          default_projects_limit: 99,
        }).expect(400);
        expect(Object.keys(res.body.message).sort()).toEqual(['default_branch_protection', 'default_project_visibility', 'home_page_url', 'signup_enabled']);
        expect((await get()).body.default_projects_limit).toBe(10);
      });
    });
  });

  describe('effects on other areas', () => {
    it('default_projects_limit applies to users created afterwards', async () => {
      await put({ default_projects_limit: 3 }).expect(200);
      try {
        const created = await t.http
          .post('/api/v3/users')
          .set('PRIVATE-TOKEN', t.root.token)
          .send({ username: 'limited', email: 'limited@example.com', name: 'Limited', password: 'password-limited' })
          .expect(201);
        expect(created.body.projects_limit).toBe(3);
        const shown = await t.http.get(`/api/v3/users/${created.body.id}`).set('PRIVATE-TOKEN', t.root.token).expect(200);
        expect(shown.body.projects_limit).toBe(3);

        const zero = await put({ default_projects_limit: 0 }).expect(200);
        expect(zero.body.default_projects_limit).toBe(0);
        const none = await t.http
          .post('/api/v3/users')
          .set('PRIVATE-TOKEN', t.root.token)
          .send({ username: 'nolimit', email: 'nolimit@example.com', name: 'No Limit', password: 'password-nolimit' })
          .expect(201);
        expect(none.body).toMatchObject({ projects_limit: 0, can_create_project: false });

        // an explicit projects_limit still wins
        const explicit = await t.http
          .post('/api/v3/users')
          .set('PRIVATE-TOKEN', t.root.token)
          .send({ username: 'explicit', email: 'explicit@example.com', name: 'Explicit', password: 'password-explicit', projects_limit: 5 })
          .expect(201);
        expect(explicit.body.projects_limit).toBe(5);
      } finally {
        await put({ default_projects_limit: 10 }).expect(200);
      }
      // existing users keep theirs
      const me = await t.http.get('/api/v3/user').set('PRIVATE-TOKEN', user.token).expect(200);
      expect(me.body.projects_limit).toBe(10);
    });

    it('gravatar_enabled=false makes avatar_url null in GET /user and user lists', async () => {
      const on = await t.http.get('/api/v3/user').set('PRIVATE-TOKEN', user.token).expect(200);
      expect(on.body.avatar_url).toMatch(/^https:\/\/www\.gravatar\.com\/avatar\/[0-9a-f]{32}/);

      await put({ gravatar_enabled: false }).expect(200);
      try {
        const off = await t.http.get('/api/v3/user').set('PRIVATE-TOKEN', user.token).expect(200);
        expect(off.body).toHaveProperty('avatar_url', null);
        const list = await t.http.get('/api/v3/users').set('PRIVATE-TOKEN', t.root.token).expect(200);
        expect(list.body.length).toBeGreaterThan(1);
        for (const u of list.body) expect(u.avatar_url).toBeNull();
      } finally {
        await put({ gravatar_enabled: true }).expect(200);
      }
      const back = await t.http.get('/api/v3/user').set('PRIVATE-TOKEN', user.token).expect(200);
      expect(back.body.avatar_url).toBe(on.body.avatar_url);
    });

    it('avatar_enabled=false has the same effect', async () => {
      await put({ avatar_enabled: false }).expect(200);
      try {
        const off = await t.http.get('/api/v3/user').set('PRIVATE-TOKEN', user.token).expect(200);
        expect(off.body.avatar_url).toBeNull();
      } finally {
        await put({ avatar_enabled: true }).expect(200);
      }
    });

    it('signin_enabled=false refuses password sign-in until it is switched back on', async () => {
      await put({ signin_enabled: false }).expect(200);
      try {
        const res = await t.http.post('/api/v3/session').send({ login: user.username, password: user.password });
        expect(res.status).toBe(403);
        expect(res.body.message).toMatch(/^403 Forbidden/);
        // existing tokens keep working
        await t.http.get('/api/v3/user').set('PRIVATE-TOKEN', user.token).expect(200);
      } finally {
        await put({ signin_enabled: true }).expect(200);
      }
      await t.http.post('/api/v3/session').send({ login: user.username, password: user.password }).expect(201);
    });
  });
});
