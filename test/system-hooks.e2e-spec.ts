import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { createApp } from '../src/app.factory';
import { GitCli } from './helpers/git-cli';
import { HookReceiver, Received, sleep } from './helpers/hook-receiver';
import { Json, planning } from './helpers/planning';
import { expectSchema } from './helpers/schema';
import { startTestApp, TestApp } from './helpers/test-app';
import { workerlessInstance } from './helpers/workerless-instance';

const SAMPLE = {
  event_name: 'project_create',
  name: 'Ruby',
  path: 'ruby',
  project_id: 1,
  owner_name: 'Someone',
  owner_email: 'example@gitlabhq.com',
};
const XMLSCHEMA = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;

/** System hooks: admin-only API (GitLab 8.8 shapes), model events, push and tag push, durable delivery. */
describe('system hooks', () => {
  let t: TestApp;
  let rx: HookReceiver;
  let api: ReturnType<typeof planning>;
  let home: string;

  const allowLocal = (on: boolean) => api.put(t.root, '/application/settings').send({ allow_local_requests_from_hooks_and_services: on }).expect(200);

  beforeAll(async () => {
    t = await startTestApp({ QUEUE_POLL_SECONDS: '0.5', WEBHOOK_RETRY_DELAY_SECONDS: '1', WEBHOOK_RETRY_LIMIT: '2' });
    rx = await HookReceiver.start();
    api = planning(t);
    home = mkdtempSync(join(tmpdir(), 'glv3-syshooks-'));
  });
  afterAll(async () => {
    await t.close();
    await rx.close();
    rmSync(home, { recursive: true, force: true });
  });

  describe('API', () => {
    it('is for administrators only: 401 anonymous, 403 for a user', async () => {
      const user = await t.createUser();
      await t.http.get('/api/v3/hooks').expect(401);
      await api.get(user, '/hooks').expect(403);
      await api
        .post(user, '/hooks')
        .send({ url: rx.url('/nope') })
        .expect(403);
      await api.get(user, '/hooks/1').expect(403);
      await api.get(user, '/hooks/1/events').expect(403);
      await api.del(user, '/hooks/1').expect(403);
      expect(rx.at('/nope')).toHaveLength(0);
    });

    it('POST: 201 with a single hook object; 400 without url; 400 (8.17 validation error) for an invalid or refused URL (a refused address says why)', async () => {
      await allowLocal(false);
      await api.post(t.root, '/hooks').send({}).expect(400, { message: '400 (Bad request) "url" not given' });
      for (const url of ['ftp://example.com/', 'nonsense', 'hp://mep.mep', 'http://exa mple.com/']) {
        await api
          .post(t.root, '/hooks')
          .send({ url })
          .expect(400, { message: { url: ['must be a valid URL'] } });
      }
      const why = (kind: string) =>
        `is blocked: it is ${kind} (requests to the local network are not allowed); ` +
        'an administrator can allow local requests with the setting allow_local_requests_from_hooks_and_services';
      for (const [url, kind] of [
        [rx.url('/x'), 'a loopback address'],
        ['http://[::127.0.0.1]:1/x', 'a loopback address'],
        ['http://2130706433/x', 'a loopback address'],
        ['http://169.254.169.254/', 'a link-local address'],
        ['http://192.168.1.1/', 'a private address'],
      ]) {
        await api
          .post(t.root, '/hooks')
          .send({ url })
          .expect(400, { message: { url: [why(kind)] } });
      }
      const exact = await api.post(t.root, '/hooks').send({ url: 'http://sys-exact.invalid' }).expect(201);
      expect(exact.body.url).toBe('http://sys-exact.invalid'); // as given: no `/` added
      await api.del(t.root, `/hooks/${exact.body.id}`).expect(200);
      await allowLocal(true);
      const res = await api
        .post(t.root, '/hooks')
        .send({ url: rx.url('/api', 'u:p') })
        .expect(201);
      await expectSchema(res, 'SystemHook');
      expect(Array.isArray(res.body)).toBe(false);
      expect(res.body).toMatchObject({
        id: expect.any(Number),
        url: rx.url('/api'),
        created_at: expect.stringMatching(/Z$/),
        push_events: true,
        tag_push_events: false,
      });
      const list = await api.get(t.root, '/hooks').expect(200);
      await expectSchema(list, 'SystemHook[]');
      expect(list.body.find((h: Json) => h.id === res.body.id)).toMatchObject({ id: res.body.id, url: rx.url('/api') });
      expect(list.headers['x-total']).toBe(String(list.body.length)); // paged like every list, whole on the first page
    });

    it('GET /hooks/:id sends the fixed sample synchronously and returns it; 404 for an unknown hook', async () => {
      const hook = (
        await api
          .post(t.root, '/hooks')
          .send({ url: rx.url('/test', 'user:pw'), token: 'sys-token' })
          .expect(201)
      ).body;
      const res = await api.get(t.root, `/hooks/${hook.id}`).expect(200);
      await expectSchema(res, 'SystemHookTest');
      expect(res.body).toEqual(SAMPLE);
      const got = rx.at('/test'); // already there: the test is synchronous
      expect(got).toHaveLength(1);
      expect(got[0].body).toEqual(SAMPLE);
      expect(got[0].headers).toMatchObject({
        'content-type': 'application/json',
        'x-gitlab-event': 'System Hook',
        'x-gitlab-token': 'sys-token',
        authorization: 'Basic ' + Buffer.from('user:pw').toString('base64'),
      });
      const log = await api.get(t.root, `/hooks/${hook.id}/events`).expect(200);
      await expectSchema(log, 'HookDelivery[]');
      expect(log.body[0]).toMatchObject({ trigger: 'project_create', event: 'System Hook', response_status: 200, response_body: 'answer 200' });
      await api.get(t.root, '/hooks/999999').expect(404, { message: '404 Hook Not Found' });
      await api.get(t.root, '/hooks/abc').expect(404);
    });

    it('a URL whose host does not resolve is accepted (decision 34); its deliveries fail, are retried and logged', async () => {
      await allowLocal(false);
      const hook = (await api.post(t.root, '/hooks').send({ url: 'http://sys-hook-target.invalid/x' }).expect(201)).body;
      expect(hook.url).toBe('http://sys-hook-target.invalid/x');
      // the test delivery is synchronous: it fails, is logged, and the sample is answered all the same
      expect((await api.get(t.root, `/hooks/${hook.id}`).expect(200)).body).toEqual(SAMPLE);
      const log = (await api.get(t.root, `/hooks/${hook.id}/events`).expect(200)).body;
      expect(log[0]).toMatchObject({ trigger: 'project_create', response_status: null, error: 'URL host could not be resolved' });
      // a model event is queued: the failed lookup is retried (WEBHOOK_RETRY_LIMIT 2 here), each attempt logged
      await api.post(t.root, '/groups').send({ name: 'unresolved-sys', path: 'unresolved-sys' }).expect(201);
      let attempts: Json[] = [];
      for (let i = 0; i < 200 && attempts.length < 3; i++) {
        attempts = (await api.get(t.root, `/hooks/${hook.id}/events`).expect(200)).body.filter((l: Json) => l.trigger === 'group_create');
        await sleep(100);
      }
      expect(attempts.map((l: Json) => [l.attempt, l.response_status, l.error])).toEqual([
        [2, null, 'URL host could not be resolved'],
        [1, null, 'URL host could not be resolved'],
        [0, null, 'URL host could not be resolved'],
      ]);
      await allowLocal(true);
      await api.del(t.root, `/hooks/${hook.id}`).expect(200);
    });

    it('DELETE: 200 with the raw row, 200 with null when absent', async () => {
      const hook = (
        await api
          .post(t.root, '/hooks')
          .send({ url: rx.url('/del'), token: 'x' })
          .expect(201)
      ).body;
      const res = await api.del(t.root, `/hooks/${hook.id}`).expect(200);
      await expectSchema(res, 'SystemHookRecord');
      expect(res.body).toEqual({
        id: hook.id,
        url: rx.url('/del'),
        project_id: null,
        created_at: expect.any(String),
        updated_at: expect.any(String),
        type: 'SystemHook',
        service_id: null,
        push_events: true,
        issues_events: false,
        merge_requests_events: false,
        tag_push_events: false,
        note_events: false,
        enable_ssl_verification: true,
        build_events: false,
        wiki_page_events: false,
        token: '[FILTERED]',
      });
      const again = await api.del(t.root, `/hooks/${hook.id}`).expect(200);
      expect(again.body).toBeNull();
    });
  });

  describe('model events, push and tag push', () => {
    let events: Received[];
    const byName = (name: string) => events.filter((r) => r.body.event_name === name).map((r) => r.body);

    beforeAll(async () => {
      await allowLocal(true);
      for (const h of (await api.get(t.root, '/hooks').expect(200)).body) await api.del(t.root, `/hooks/${h.id}`).expect(200);
      await api
        .post(t.root, '/hooks')
        .send({ url: rx.url('/sys'), tag_push_events: true })
        .expect(201);
      await api
        .post(t.root, '/hooks')
        .send({ url: rx.url('/sys-nopush'), push_events: false })
        .expect(201);

      // users, keys
      const alice = await t.createUser({ username: 'alice', name: 'Alice A', email: 'alice@example.com' });
      const bob = await t.createUser({ username: 'bob', name: 'Bob B', email: 'bob@example.com' });
      await api.put(t.root, `/users/${alice.id}`).send({ projects_limit: 100 }).expect(200);
      execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'alice key', '-f', join(home, 'k')], { stdio: 'ignore' });
      const pub = readFileSync(join(home, 'k.pub'), 'utf8').trim();
      const key = (await api.post(alice, '/user/keys').send({ title: 'laptop', key: pub }).expect(201)).body;
      await api.del(alice, `/user/keys/${key.id}`).expect(200);
      // groups and group members
      const group = (await api.post(t.root, '/groups').send({ name: 'Team', path: 'team' }).expect(201)).body;
      await api.post(t.root, `/groups/${group.id}/members`).send({ user_id: bob.id, access_level: 30 }).expect(201);
      await api.del(t.root, `/groups/${group.id}/members/${bob.id}`).expect(200);
      // projects and project members
      const project = (await api.post(alice, '/projects').send({ name: 'Widget', visibility_level: 10 }).expect(201)).body;
      await api.post(alice, `/projects/${project.id}/members`).send({ user_id: bob.id, access_level: 40 }).expect(201);
      await api.del(alice, `/projects/${project.id}/members/${bob.id}`).expect(200);
      await api.put(alice, `/projects/${project.id}`).send({ path: 'widget-2' }).expect(200);
      // push and tag push
      const git = await GitCli.listen(t, home);
      const work = join(home, 'work');
      await git.ok(['init', '-q', work]);
      await git.commit(work, { 'a.txt': 'a\n' }, 'one');
      await git.ok(['tag', 'v1'], work);
      await git.ok(['push', '-q', git.url('alice/widget-2', 'alice', alice.password), 'master', 'v1'], work);
      await rx.waitFor('/sys', 12); // wait for the push and tag push before moving the project
      await api.post(t.root, `/groups/${group.id}/projects/${project.id}`).expect(201);
      await api.del(t.root, `/projects/${project.id}`).expect(200);
      await api.del(t.root, `/groups/${group.id}`).expect(200);
      await api.del(t.root, `/users/${bob.id}`).expect(200);
      events = await rx.waitFor('/sys', 16);
      await sleep(1000);
      events = rx.at('/sys');
    });

    it('sends every event once, as System Hook JSON', () => {
      const names = events.map((r) => r.body.event_name).sort();
      expect(names).toEqual(
        [
          'user_create',
          'user_create',
          'key_create',
          'key_destroy',
          'group_create',
          'user_add_to_group',
          'user_add_to_group',
          'user_remove_from_group',
          'project_create',
          'user_add_to_team',
          'user_add_to_team',
          'user_remove_from_team',
          'project_rename',
          'push',
          'tag_push',
          'project_transfer',
          'project_destroy',
          'group_destroy',
          'user_destroy',
        ].sort(),
      );
      for (const r of events) {
        expect(r.headers['x-gitlab-event']).toBe('System Hook');
        expect(r.headers['content-type']).toBe('application/json');
      }
      // push_events: false and tag_push_events: false (default) → model events only
      const other = rx.at('/sys-nopush').map((r) => r.body.event_name);
      expect(other).not.toContain('push');
      expect(other).not.toContain('tag_push');
      expect(other).toContain('project_create');
    });

    it('user_create / user_destroy', () => {
      const [alice] = byName('user_create').filter((e) => e.username === 'alice');
      expect(alice).toEqual({
        event_name: 'user_create',
        created_at: expect.stringMatching(XMLSCHEMA),
        updated_at: expect.stringMatching(XMLSCHEMA),
        name: 'Alice A',
        email: 'alice@example.com',
        user_id: expect.any(Number),
        username: 'alice',
      });
      expect(byName('user_destroy')[0]).toMatchObject({ username: 'bob', name: 'Bob B', email: 'bob@example.com' });
    });

    it('key_create / key_destroy', () => {
      expect(byName('key_create')[0]).toEqual({
        event_name: 'key_create',
        created_at: expect.stringMatching(XMLSCHEMA),
        updated_at: expect.stringMatching(XMLSCHEMA),
        key: expect.stringMatching(/^ssh-ed25519 /),
        id: expect.any(Number),
        username: 'alice',
      });
      expect(byName('key_destroy')[0]).toMatchObject({ id: byName('key_create')[0].id, username: 'alice' });
    });

    it('group_create / group_destroy and group membership', () => {
      expect(byName('group_create')[0]).toEqual({
        event_name: 'group_create',
        created_at: expect.stringMatching(XMLSCHEMA),
        updated_at: expect.stringMatching(XMLSCHEMA),
        name: 'Team',
        path: 'team',
        group_id: expect.any(Number),
        owner_name: 'Administrator',
        owner_email: expect.any(String),
      });
      expect(byName('group_destroy')[0]).toMatchObject({ name: 'Team', path: 'team' });
      const bobAdd = byName('user_add_to_group').find((e) => e.user_username === 'bob');
      expect(bobAdd).toEqual({
        event_name: 'user_add_to_group',
        created_at: expect.stringMatching(XMLSCHEMA),
        updated_at: expect.stringMatching(XMLSCHEMA),
        group_name: 'Team',
        group_path: 'team',
        group_id: expect.any(Number),
        user_username: 'bob',
        user_name: 'Bob B',
        user_email: 'bob@example.com',
        user_id: expect.any(Number),
        group_access: 'Developer',
      });
      expect(byName('user_add_to_group').find((e) => e.user_username === 'root')).toMatchObject({ group_access: 'Owner' });
      expect(byName('user_remove_from_group')[0]).toMatchObject({ user_username: 'bob', group_access: 'Developer' });
    });

    it('project_create / rename / transfer / destroy and team membership', () => {
      expect(byName('project_create')[0]).toEqual({
        event_name: 'project_create',
        created_at: expect.stringMatching(XMLSCHEMA),
        updated_at: expect.stringMatching(XMLSCHEMA),
        name: 'Widget',
        path: 'widget',
        path_with_namespace: 'alice/widget',
        project_id: expect.any(Number),
        owner_name: 'Alice A',
        owner_email: 'alice@example.com',
        project_visibility: 'internal',
      });
      expect(byName('project_rename')[0]).toMatchObject({ path: 'widget-2', path_with_namespace: 'alice/widget-2', old_path_with_namespace: 'alice/widget' });
      expect(byName('project_transfer')[0]).toMatchObject({
        path_with_namespace: 'team/widget-2',
        old_path_with_namespace: 'alice/widget-2',
        owner_name: 'Team',
        owner_email: '',
      });
      expect(byName('project_destroy')[0]).toMatchObject({ path_with_namespace: 'team/widget-2', project_visibility: 'internal' });
      const bobTeam = byName('user_add_to_team').find((e) => e.user_username === 'bob');
      expect(bobTeam).toEqual({
        event_name: 'user_add_to_team',
        created_at: expect.stringMatching(XMLSCHEMA),
        updated_at: expect.stringMatching(XMLSCHEMA),
        project_name: 'Widget',
        project_path: 'widget',
        project_path_with_namespace: 'alice/widget',
        project_id: expect.any(Number),
        user_username: 'bob',
        user_name: 'Bob B',
        user_email: 'bob@example.com',
        user_id: expect.any(Number),
        access_level: 'Master',
        project_visibility: 'internal',
      });
      expect(byName('user_add_to_team').find((e) => e.user_username === 'alice')).toMatchObject({ access_level: 'Master' });
      expect(byName('user_remove_from_team')[0]).toMatchObject({ user_username: 'bob', access_level: 'Master' });
    });

    it('push and tag push: the push data without commits', () => {
      const push = byName('push')[0];
      expect(push).toMatchObject({
        object_kind: 'push',
        ref: 'refs/heads/master',
        before: '0000000000000000000000000000000000000000',
        after: expect.stringMatching(/^[0-9a-f]{40}$/),
        commits: [],
        total_commits_count: 0,
        project: { path_with_namespace: 'alice/widget-2' },
        repository: { name: 'Widget' },
      });
      expect(byName('tag_push')[0]).toMatchObject({ object_kind: 'tag_push', ref: 'refs/tags/v1', commits: [], total_commits_count: 0 });
    });
  });
});

/** Restarts and several instances: each run on its own database (the other specs' apps are stopped). */
describe('system hooks: durable delivery', () => {
  let rx: HookReceiver;
  beforeAll(async () => {
    rx = await HookReceiver.start();
  });
  afterAll(() => rx.close());

  it('a delivery queued by one instance is delivered exactly once after a restart on the same database', async () => {
    // instance A enqueues but runs no workers, then stops
    const instance = await workerlessInstance('glv3-durable-', { url: rx.url('/durable') });
    const { a } = instance;
    try {
      await a.createUser({ username: 'durable' });
      await sleep(1000);
      expect(rx.at('/durable')).toHaveLength(0);
      // the change's outbox job (fanned out to the hooks by a worker: none runs here)
      const queued = await a.sql<{ n: number }>(
        `SELECT count(*)::int AS n FROM pgboss.job WHERE name IN ('hooks.event', 'hooks.deliver') AND state = 'created'`,
      );
      expect(queued[0].n).toBe(1);
      // instance B on the same database, with workers
      const b = await instance.restart();
      const got = await rx.waitFor('/durable', 1);
      expect(got[0].body).toMatchObject({ event_name: 'user_create', username: 'durable' });
      await sleep(2000);
      expect(rx.at('/durable')).toHaveLength(1);
      await request(b.app.getHttpServer()).get('/api/v3/hooks').set('PRIVATE-TOKEN', a.root.token).expect(200);
    } finally {
      await instance.close();
    }
  });

  (process.env.DATABASE_URL ? it : it.skip)('two instances on one PostgreSQL database deliver each event once', async () => {
    const a = await startTestApp({ QUEUE_POLL_SECONDS: '0.5' });
    const b = await createApp(a.config);
    try {
      const A = planning(a);
      await A.put(a.root, '/application/settings').send({ allow_local_requests_from_hooks_and_services: true }).expect(200);
      await A.post(a.root, '/hooks')
        .send({ url: rx.url('/shared') })
        .expect(201);
      const B = request(b.app.getHttpServer());
      for (let i = 0; i < 20; i++) {
        const via = i % 2 ? B : a.http;
        await via
          .post('/api/v3/users')
          .set('PRIVATE-TOKEN', a.root.token)
          .send({ username: `shared${i}`, email: `shared${i}@example.com`, name: `S ${i}`, password: 'password-123' })
          .expect(201);
      }
      const got = await rx.waitFor('/shared', 20);
      await sleep(2000);
      expect(rx.at('/shared')).toHaveLength(20);
      expect(new Set(got.map((r) => r.body.username)).size).toBe(20);
    } finally {
      await b.close();
      await a.close();
    }
  });
});
