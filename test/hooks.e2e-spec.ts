import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GitCli } from './helpers/git-cli';
import { HookReceiver, sleep } from './helpers/hook-receiver';
import { Json, planning, Team, TestProject } from './helpers/planning';
import { expectSchema } from './helpers/schema';
import { startTestApp, TestApp } from './helpers/test-app';

/** Project webhooks: GitLab 8.8's v3 endpoints (master+), deliveries through the durable queue. */
describe('project webhooks', () => {
  let t: TestApp;
  let rx: HookReceiver;
  let git: GitCli;
  let home: string;
  let api: ReturnType<typeof planning>;
  let tm: Team;
  let project: TestProject;
  let work: string;

  const allowLocal = (on: boolean) => api.put(t.root, '/application/settings').send({ allow_local_requests_from_hooks_and_services: on }).expect(200);
  const addHook = async (path: string, extra: Json = {}, auth?: string) =>
    (
      await api
        .post(tm.master, `/projects/${project.id}/hooks`)
        .send({ url: rx.url(path, auth), ...extra })
        .expect(201)
    ).body;
  const deliveries = async (hookId: number) => (await api.get(tm.master, `/projects/${project.id}/hooks/${hookId}/events`).expect(200)).body;
  async function waitForLog(hookId: number, n: number, ms = 20_000): Promise<Json[]> {
    const end = Date.now() + ms;
    for (;;) {
      const log = await deliveries(hookId);
      if (log.length >= n || Date.now() > end) return log;
      await sleep(100);
    }
  }

  beforeAll(async () => {
    t = await startTestApp({
      QUEUE_POLL_SECONDS: '0.5',
      WEBHOOK_TIMEOUT_MS: '1000',
      WEBHOOK_RETRY_LIMIT: '2',
      WEBHOOK_RETRY_DELAY_SECONDS: '1',
      WEBHOOK_DISABLE_AFTER_FAILURES: '3',
    });
    rx = await HookReceiver.start();
    home = mkdtempSync(join(tmpdir(), 'glv3-hooks-'));
    git = await GitCli.listen(t, home);
    api = planning(t);
    tm = await api.team();
    project = await api.project(tm, 0);
    work = join(home, 'work');
    await git.ok(['init', '-q', work]);
    await git.commit(work, { 'README.md': '# hooks\n' }, 'first commit');
  });
  afterAll(async () => {
    await t.close();
    await rx.close();
    rmSync(home, { recursive: true, force: true });
  });

  describe('endpoints', () => {
    beforeAll(() => allowLocal(true));

    it('creates (201) with GitLab 8.8 defaults, never shows the token or the URL userinfo', async () => {
      const res = await api
        .post(tm.master, `/projects/${project.id}/hooks`)
        .send({ url: rx.url('/crud', 'alice:s3cret'), token: 'tok-123', issues_events: 'true' })
        .expect(201);
      expect(res.body).toMatchObject({
        url: rx.url('/crud'),
        project_id: project.id,
        push_events: true,
        issues_events: true,
        merge_requests_events: false,
        tag_push_events: false,
        note_events: false,
        build_events: false,
        enable_ssl_verification: true,
        recent_failures: 0,
        disabled: false,
      });
      expect(typeof res.body.id).toBe('number');
      expect(res.body.created_at).toMatch(/Z$/);
      expect(JSON.stringify(res.body)).not.toMatch(/s3cret|tok-123|alice/);
      const rows = await t.sql<Json>(`SELECT url, url_userinfo_encrypted, token_encrypted FROM web_hooks WHERE id = $1`, [res.body.id]);
      expect(rows[0].url).toBe(rx.url('/crud'));
      expect(JSON.stringify(rows[0])).not.toMatch(/s3cret|tok-123/);
    });

    it('lists, shows, updates and deletes (200 with the hook; 200 null when absent)', async () => {
      const hook = await addHook('/crud2');
      const list = await api.get(tm.master, `/projects/${project.id}/hooks`).expect(200);
      await expectSchema(list, 'ProjectHook[]');
      expect(list.body.map((h: Json) => h.id)).toContain(hook.id);
      await api.get(tm.owner, `/projects/${project.id}/hooks/${hook.id}`).expect(200);
      const upd = await api
        .put(tm.master, `/projects/${project.id}/hooks/${hook.id}`)
        .send({ url: rx.url('/crud3'), push_events: false, note_events: true, enable_ssl_verification: 'false' })
        .expect(200);
      expect(upd.body).toMatchObject({ id: hook.id, url: rx.url('/crud3'), push_events: false, note_events: true, enable_ssl_verification: false });
      const del = await api.del(tm.master, `/projects/${project.id}/hooks/${hook.id}`).expect(200);
      await expectSchema(del, 'ProjectHook');
      expect(del.body.id).toBe(hook.id);
      const again = await api.del(tm.master, `/projects/${project.id}/hooks/${hook.id}`).expect(200);
      expect(again.body).toBeNull();
      await api.get(tm.master, `/projects/${project.id}/hooks/${hook.id}`).expect(404, { message: '404 Hook Not Found' });
    });

    it('401 without credentials; 403 for a developer; 404 for a stranger on a private project', async () => {
      const hook = await addHook('/perm');
      await t.http.get(`/api/v3/projects/${project.id}/hooks`).expect(401);
      for (const u of [tm.developer, tm.reporter]) {
        await api.get(u, `/projects/${project.id}/hooks`).expect(403);
        await api
          .post(u, `/projects/${project.id}/hooks`)
          .send({ url: rx.url('/x') })
          .expect(403);
        await api
          .put(u, `/projects/${project.id}/hooks/${hook.id}`)
          .send({ url: rx.url('/x'), push_events: false })
          .expect(403);
        await api.del(u, `/projects/${project.id}/hooks/${hook.id}`).expect(403);
        await api.get(u, `/projects/${project.id}/hooks/${hook.id}/events`).expect(403);
      }
      await api.get(tm.stranger, `/projects/${project.id}/hooks`).expect(404, { message: '404 Project Not Found' });
      await api
        .post(tm.stranger, `/projects/${project.id}/hooks`)
        .send({ url: rx.url('/x') })
        .expect(404);
      await api.get(tm.stranger, `/projects/${project.id}/hooks/${hook.id}`).expect(404);
      // another project's hook id is not this project's
      const other = await api.project(tm, 0);
      await api.get(tm.master, `/projects/${other.id}/hooks/${hook.id}`).expect(404);
    });

    it('400 for a missing url or an invalid switch; 422 "Invalid url given" (after the status) for a non-http URL', async () => {
      await api.post(tm.master, `/projects/${project.id}/hooks`).send({}).expect(400, { message: '400 (Bad request) "url" not given' });
      await api
        .post(tm.master, `/projects/${project.id}/hooks`)
        .send({ url: rx.url('/x'), push_events: 'maybe' })
        .expect(400, { message: '400 (Bad request) "push_events" is invalid' });
      for (const url of [
        'ftp://example.com/hook',
        'not a url',
        'javascript:alert(1)',
        'http://',
        'http://exa mple.com/',
        'http:\\\\example.com/',
        'http:example.com',
      ]) {
        await api.post(tm.master, `/projects/${project.id}/hooks`).send({ url }).expect(422, { message: '422 Invalid url given' });
      }
    });

    it('PUT needs url, as 8.17 (400 without it)', async () => {
      const hook = await addHook('/put-url');
      await api
        .put(tm.master, `/projects/${project.id}/hooks/${hook.id}`)
        .send({ push_events: false })
        .expect(400, { message: '400 (Bad request) "url" not given' });
      const kept = (await api.get(tm.master, `/projects/${project.id}/hooks/${hook.id}`).expect(200)).body;
      expect(kept).toMatchObject({ url: rx.url('/put-url'), push_events: true });
    });

    it('returns the URL exactly as given (no `/` added, case and query kept), minus its userinfo', async () => {
      const create = async (url: string) => (await api.post(tm.master, `/projects/${project.id}/hooks`).send({ url }).expect(201)).body;
      for (const url of ['http://hook-target.invalid', 'HTTP://Hook-Target.invalid:8080?x=1', 'https://hook-target.invalid/a/../b?c=d%20e#f']) {
        const hook = await create(url);
        expect(hook.url).toBe(url);
        expect((await api.get(tm.master, `/projects/${project.id}/hooks/${hook.id}`).expect(200)).body.url).toBe(url);
      }
      const withAuth = await create('  http://u%40x:p%3Aw@hook-target.invalid  ');
      expect(withAuth.url).toBe('http://hook-target.invalid');
      const rows = await t.sql<Json>(`SELECT url FROM web_hooks WHERE id = $1`, [withAuth.id]);
      expect(rows[0].url).toBe('http://hook-target.invalid');
      const upd = await api.put(tm.master, `/projects/${project.id}/hooks/${withAuth.id}`).send({ url: 'http://other-target.invalid' }).expect(200);
      expect(upd.body.url).toBe('http://other-target.invalid');
    });
  });

  describe('SSRF', () => {
    beforeAll(() => allowLocal(false));
    afterAll(() => allowLocal(true));

    it.each([
      'http://127.0.0.1/hook',
      'http://localhost/hook',
      'http://[::1]/hook',
      'http://[::127.0.0.1]/hook', // IPv4-compatible IPv6
      'http://[::ffff:127.0.0.1]/hook', // IPv4-mapped IPv6
      'http://2130706433/hook', // decimal
      'http://0177.0.0.1/hook', // octal
      'http://0x7f.1/hook', // hex, short form
      'http://10.1.2.3/hook',
      'http://172.16.0.1/hook',
      'http://192.168.1.1/hook',
      'http://169.254.169.254/latest/meta-data', // link-local (cloud metadata)
      'http://[fd00::1]/hook', // unique-local
      'http://[fe80::1]/hook', // link-local v6
      'http://0.0.0.0/hook',
    ])('refuses %s without the admin setting, saying why', async (url) => {
      const res = await api.post(tm.master, `/projects/${project.id}/hooks`).send({ url }).expect(422);
      expect(res.body.message).toMatch(
        /^422 Invalid url given: url is blocked: it (is|resolves to) (a|an|the) [a-z() -]+ address \(requests to the local network are not allowed\); an administrator can allow local requests with the setting allow_local_requests_from_hooks_and_services$/,
      );
    });

    it('names the kind of address: loopback (literal or by name), private, link-local, unique-local', async () => {
      const why = (how: string) =>
        `422 Invalid url given: url is blocked: it ${how} (requests to the local network are not allowed); ` +
        'an administrator can allow local requests with the setting allow_local_requests_from_hooks_and_services';
      const post = (url: string) => api.post(tm.master, `/projects/${project.id}/hooks`).send({ url }).expect(422);
      expect((await post('http://127.0.0.1/hook')).body).toEqual({ message: why('is a loopback address') });
      expect((await post('http://localhost/hook')).body).toEqual({ message: why('resolves to a loopback address') });
      expect((await post('http://10.1.2.3/hook')).body).toEqual({ message: why('is a private address') });
      expect((await post('http://169.254.169.254/latest')).body).toEqual({ message: why('is a link-local address') });
      expect((await post('http://[fd00::1]/hook')).body).toEqual({ message: why('is a unique-local address') });
      expect((await post('http://[::ffff:10.0.0.1]/hook')).body).toEqual({ message: why('is a private address') });
      // a malformed URL keeps GitLab's plain message, after the status (decision 32)
      expect((await post('ftp://example.com/hook')).body).toEqual({ message: '422 Invalid url given' });
    });

    it('re-checks at delivery time: a hook saved while allowed is not called once the setting is off', async () => {
      await allowLocal(true);
      const hook = await addHook('/ssrf-late', { push_events: false, issues_events: true });
      await allowLocal(false);
      await api.issue(tm.master, project.id);
      const log = await waitForLog(hook.id, 1);
      expect(log[0]).toMatchObject({ trigger: 'issue', response_status: null });
      expect(log[0].error).toMatch(/local network/);
      await sleep(500);
      expect(rx.at('/ssrf-late')).toHaveLength(0);
    });
  });

  describe('deliveries', () => {
    beforeAll(() => allowLocal(true));

    it('push and tag push: GitLab 8.8 payloads with X-Gitlab-Event, X-Gitlab-Token, JSON and Basic auth from the URL', async () => {
      const push = await addHook('/push', { token: 'push-token' }, 'hookuser:hook%20pass');
      const tags = await addHook('/tags', { push_events: false, tag_push_events: true });
      const sha = (await git.ok(['rev-parse', 'HEAD'], work)).trim();
      await git.ok(['tag', 'v1.0'], work);
      await git.ok(['push', '-q', git.url(project.path_with_namespace, tm.master.username, tm.master.password), 'master', 'v1.0'], work);

      const [p] = await rx.waitFor('/push');
      expect(p.headers['content-type']).toBe('application/json');
      expect(p.headers['x-gitlab-event']).toBe('Push Hook');
      expect(p.headers['x-gitlab-token']).toBe('push-token');
      expect(p.headers.authorization).toBe('Basic ' + Buffer.from('hookuser:hook pass').toString('base64'));
      expect(p.body).toMatchObject({
        object_kind: 'push',
        before: '0000000000000000000000000000000000000000',
        after: sha,
        ref: 'refs/heads/master',
        checkout_sha: sha,
        user_id: tm.master.id,
        user_name: expect.any(String),
        project_id: project.id,
        total_commits_count: 1,
        project: { path_with_namespace: project.path_with_namespace, git_http_url: expect.stringMatching(/\.git$/) },
        repository: { name: expect.any(String), url: expect.any(String), homepage: expect.any(String) },
      });
      expect(p.body.commits).toHaveLength(1);
      expect(p.body.commits[0]).toMatchObject({ id: sha, message: expect.stringContaining('first commit'), added: ['README.md'] });

      const [tg] = await rx.waitFor('/tags');
      expect(tg.headers['x-gitlab-event']).toBe('Tag Push Hook');
      expect(tg.headers['x-gitlab-token']).toBeUndefined();
      expect(tg.headers.authorization).toBeUndefined();
      expect(tg.body).toMatchObject({ object_kind: 'tag_push', ref: 'refs/tags/v1.0', after: sha });
      // each hook got only its kind
      expect(rx.at('/push').every((r) => r.body.object_kind === 'push')).toBe(true);
      expect(rx.at('/tags').every((r) => r.body.object_kind === 'tag_push')).toBe(true);
      expect((await deliveries(push.id))[0]).toMatchObject({ trigger: 'push', event: 'Push Hook', response_status: 200, error: null });
      expect((await deliveries(tags.id))[0]).toMatchObject({ trigger: 'tag_push', event: 'Tag Push Hook', response_status: 200 });
    });

    it('issue events: open, update, close with object_attributes.action', async () => {
      await addHook('/issues', { push_events: false, issues_events: true });
      const issue = await api.issue(tm.developer, project.id, { description: 'broken', assignee_id: tm.master.id });
      await api.put(tm.developer, `/projects/${project.id}/issues/${issue.id}`).send({ title: 'renamed' }).expect(200);
      await api.put(tm.developer, `/projects/${project.id}/issues/${issue.id}`).send({ state_event: 'close' }).expect(200);
      const got = await rx.waitFor('/issues', 3);
      expect(got.map((r) => r.headers['x-gitlab-event'])).toEqual(['Issue Hook', 'Issue Hook', 'Issue Hook']);
      const actions = got.map((r) => r.body.object_attributes.action).sort();
      expect(actions).toEqual(['close', 'open', 'update']);
      const open = got.find((r) => r.body.object_attributes.action === 'open')!.body;
      expect(open).toMatchObject({
        object_kind: 'issue',
        user: { username: tm.developer.username, name: expect.any(String) },
        project: { path_with_namespace: project.path_with_namespace },
        repository: { name: expect.any(String) },
        object_attributes: { id: issue.id, iid: issue.iid, title: issue.title, description: 'broken', state: 'opened', project_id: project.id },
        assignee: { username: tm.master.username },
      });
      expect(open.object_attributes.url).toMatch(new RegExp(`/${project.path_with_namespace}/issues/${issue.iid}$`));
    });

    it('note events carry the note and its issue', async () => {
      await addHook('/notes', { push_events: false, note_events: true });
      const issue = await api.issue(tm.developer, project.id);
      const note = await api.note(tm.reporter, project.id, 'issues', issue.id, 'a comment');
      const [n] = await rx.waitFor('/notes');
      expect(n.headers['x-gitlab-event']).toBe('Note Hook');
      expect(n.body).toMatchObject({
        object_kind: 'note',
        user: { username: tm.reporter.username },
        project_id: project.id,
        object_attributes: { id: note.id, note: 'a comment', noteable_type: 'Issue', noteable_id: issue.id },
        issue: { id: issue.id, iid: issue.iid },
      });
      expect(n.body.object_attributes.url).toMatch(new RegExp(`/issues/${issue.iid}#note_${note.id}$`));
    });

    it('a URL whose host does not resolve is accepted at save (decision 34); each delivery fails, is retried and logged', async () => {
      await allowLocal(false); // the save-time refusal of local addresses does not extend to names that do not resolve
      try {
        const url = 'http://hook-target.invalid/hook';
        const hook = (await api.post(tm.master, `/projects/${project.id}/hooks`).send({ url, push_events: false, issues_events: true }).expect(201)).body;
        expect(hook.url).toBe(url);
        const other = (await api.post(tm.master, `/projects/${project.id}/hooks`).send({ url: 'http://first-target.invalid/' }).expect(201)).body;
        await api.put(tm.master, `/projects/${project.id}/hooks/${other.id}`).send({ url: 'http://other-target.invalid/' }).expect(200);
        await api.del(tm.master, `/projects/${project.id}/hooks/${other.id}`).expect(200);
        await api.issue(tm.master, project.id);
        const log = await waitForLog(hook.id, 3); // WEBHOOK_RETRY_LIMIT 2 here: three attempts
        expect(log.map((l: Json) => [l.attempt, l.trigger, l.response_status, l.error])).toEqual([
          [2, 'issue', null, 'URL host could not be resolved'],
          [1, 'issue', null, 'URL host could not be resolved'],
          [0, 'issue', null, 'URL host could not be resolved'],
        ]);
        await sleep(1500);
        expect(await deliveries(hook.id)).toHaveLength(3); // no attempt beyond the retry limit
        await api.del(tm.master, `/projects/${project.id}/hooks/${hook.id}`).expect(200);
      } finally {
        await allowLocal(true);
      }
    });

    it('retries after a 500 with backoff, then succeeds; the log shows both attempts', async () => {
      rx.on('/flaky', { statuses: [500, 200] });
      const hook = await addHook('/flaky', { push_events: false, issues_events: true });
      await api.issue(tm.master, project.id);
      const got = await rx.waitFor('/flaky', 2);
      expect(got[1].at - got[0].at).toBeGreaterThanOrEqual(900);
      expect(got[1].body).toEqual(got[0].body);
      const log = await waitForLog(hook.id, 2);
      expect(log.map((l: Json) => [l.attempt, l.response_status])).toEqual([
        [1, 200],
        [0, 500],
      ]);
      expect(log[1].response_body).toBe('answer 500');
      const h = (await api.get(tm.master, `/projects/${project.id}/hooks/${hook.id}`).expect(200)).body;
      expect(h).toMatchObject({ recent_failures: 0, last_status: 200, last_error: 'HTTP 500', disabled: false });
    });

    it('does not follow redirects, and does not retry a 4xx/3xx', async () => {
      rx.on('/redirect', { statuses: [302], headers: { Location: '/redirect-target' } });
      const hook = await addHook('/redirect', { push_events: false, issues_events: true });
      await api.issue(tm.master, project.id);
      await rx.waitFor('/redirect');
      const log = await waitForLog(hook.id, 1);
      expect(log[0]).toMatchObject({ response_status: 302, error: 'HTTP 302' });
      await sleep(2500);
      expect(rx.at('/redirect')).toHaveLength(1);
      expect(rx.at('/redirect-target')).toHaveLength(0);
    });

    it('times out (shortened to 1 s here) and retries the timed-out delivery', async () => {
      rx.on('/slow', { delayMs: 3000 });
      const hook = await addHook('/slow', { push_events: false, issues_events: true });
      await api.issue(tm.master, project.id);
      const log = await waitForLog(hook.id, 2);
      expect(log.length).toBeGreaterThanOrEqual(2);
      expect(log[log.length - 1].error).toMatch(/timed out after 1000 ms/);
      expect(log[log.length - 1].execution_duration).toBeLessThan(2);
    });

    it('disables a hook after N consecutive failures (3 here); saving it enables it again', async () => {
      rx.on('/gone', { statuses: [404] });
      const hook = await addHook('/gone', { push_events: false, issues_events: true });
      for (let i = 0; i < 3; i++) await api.issue(tm.master, project.id);
      await waitForLog(hook.id, 3);
      const h = (await api.get(tm.master, `/projects/${project.id}/hooks/${hook.id}`).expect(200)).body;
      expect(h).toMatchObject({ recent_failures: 3, last_status: 404, last_error: 'HTTP 404', disabled: true });
      await api.issue(tm.master, project.id);
      await sleep(1500);
      expect(rx.at('/gone')).toHaveLength(3);
      const again = (
        await api
          .put(tm.master, `/projects/${project.id}/hooks/${hook.id}`)
          .send({ url: rx.url('/gone'), issues_events: true })
          .expect(200)
      ).body;
      expect(again).toMatchObject({ disabled: false, recent_failures: 0 });
    });

    it('keeps the last 100 deliveries per hook', async () => {
      const hook = await addHook('/many', { push_events: false, issues_events: true });
      await t.sql(
        `INSERT INTO web_hook_logs (web_hook_id, trigger, event, execution_duration) SELECT $1, 'issue', 'Issue Hook', 0.01 FROM generate_series(1, 105)`,
        [hook.id],
      );
      await api.issue(tm.master, project.id);
      await rx.waitFor('/many');
      const log = await waitForLog(hook.id, 100);
      expect(log).toHaveLength(100);
      const rows = await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM web_hook_logs WHERE web_hook_id = $1`, [hook.id]);
      expect(rows[0].n).toBe(100);
      expect(log[0].response_status).toBe(200);
    });
  });
});
