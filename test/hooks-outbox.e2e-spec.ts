import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { GitCli } from './helpers/git-cli';
import { HookReceiver, sleep } from './helpers/hook-receiver';
import { planning } from './helpers/planning';
import { startTestApp, TestApp } from './helpers/test-app';
import { workerlessInstance } from './helpers/workerless-instance';

const jobs = async (t: TestApp, name: string, state?: string) =>
  (await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM pgboss.job WHERE name = $1 AND ($2::text IS NULL OR state::text = $2)`, [name, state ?? null]))[0]
    .n;

/**
 * The hook outbox: a change writes its `hooks.event` job in its own transaction (rolled back → none),
 * and workers fan it out to the hooks after the commit — also after a restart, exactly once.
 */
describe('hook outbox', () => {
  let rx: HookReceiver;
  beforeAll(async () => {
    rx = await HookReceiver.start();
  });
  afterAll(() => rx.close());

  describe('in the transaction of the change', () => {
    let t: TestApp;
    let api: ReturnType<typeof planning>;
    beforeAll(async () => {
      t = await startTestApp({ QUEUE_POLL_SECONDS: '0.5' });
      api = planning(t);
      await api.put(t.root, '/application/settings').send({ allow_local_requests_from_hooks_and_services: true }).expect(200);
      await api
        .post(t.root, '/hooks')
        .send({ url: rx.url('/tx') })
        .expect(201);
    });
    afterAll(() => t.close());

    it('a change that rolls back enqueues nothing; the committed one is delivered once', async () => {
      // created without signing in: an LDAP-linked user's local password never signs in (issue 25)
      const first = (
        await api
          .post(t.root, '/users')
          .send({
            username: 'outbox-first',
            email: 'outbox-first@example.com',
            name: 'First',
            password: 'password-first',
            provider: 'ldapmain',
            extern_uid: 'uid=outbox',
          })
          .expect(201)
      ).body as { id: number };
      const [created] = await rx.waitFor('/tx', 1);
      expect(created.body).toMatchObject({ event_name: 'user_create', username: 'outbox-first', user_id: first.id });
      const before = await jobs(t, 'hooks.event');
      expect(before).toBeGreaterThan(0);

      // the user row and its outbox job are written, then the taken identity fails the transaction
      await api
        .post(t.root, '/users')
        .send({
          username: 'outbox-second',
          email: 'outbox-second@example.com',
          name: 'Second',
          password: 'password-second',
          provider: 'ldapmain',
          extern_uid: 'uid=outbox',
        })
        .expect(409, { message: '409 Extern uid has already been taken' });
      expect(await t.sql(`SELECT id FROM users WHERE username = 'outbox-second'`)).toHaveLength(0);
      expect(await jobs(t, 'hooks.event')).toBe(before);
      await sleep(1500);
      expect(rx.at('/tx').map((r) => r.body.username)).toEqual(['outbox-first']);
    });

    it('fans each event out once: the event job completes with its delivery jobs', async () => {
      const deliveries = await jobs(t, 'hooks.deliver');
      const user = await t.createUser({ username: 'outbox-third' });
      const got = await rx.waitFor('/tx', 2);
      expect(got[1].body).toMatchObject({ event_name: 'user_create', username: 'outbox-third', user_id: user.id });
      await sleep(1500);
      expect(rx.at('/tx')).toHaveLength(2);
      expect(await jobs(t, 'hooks.deliver')).toBe(deliveries + 1);
      expect(await jobs(t, 'hooks.event', 'created')).toBe(0);
      expect(await jobs(t, 'hooks.event', 'retry')).toBe(0);
    });
  });

  it('a push made while no worker runs is delivered exactly once after a restart', async () => {
    // instance A records the push (and its outbox job) but runs no workers, then stops
    const instance = await workerlessInstance('glv3-outbox-', { url: rx.url('/restart-system'), push_events: true });
    const { a, A, dir } = instance;
    try {
      const tm = await A.team();
      const project = await A.project(tm, 0);
      await A.post(tm.master, `/projects/${project.id}/hooks`)
        .send({ url: rx.url('/restart-push'), push_events: true })
        .expect(201);
      mkdirSync(join(dir, 'home'));
      const git = await GitCli.listen(a, join(dir, 'home'));
      const work = join(dir, 'work');
      await git.ok(['init', '-q', work]);
      await git.commit(work, { 'README.md': '# outbox\n' }, 'first commit');
      await git.ok(['push', '-q', git.url(project.path_with_namespace, tm.master.username, tm.master.password), 'master'], work);

      await sleep(1000);
      expect(rx.at('/restart-push')).toHaveLength(0);
      const systemPushes = () => rx.at('/restart-system').filter((r) => r.body.object_kind === 'push');
      expect(rx.at('/restart-system')).toHaveLength(0);
      const pushJobs = await a.sql<{ n: number }>(
        `SELECT count(*)::int AS n FROM pgboss.job WHERE name = 'hooks.event' AND state = 'created' AND data->>'name' = 'push.received'`,
      );
      expect(pushJobs[0].n).toBe(1);
      expect(await jobs(a, 'hooks.deliver')).toBe(0); // fanned out by workers only, after the commit
      // instance B on the same database, with workers
      const b = await instance.restart();
      const [push] = await rx.waitFor('/restart-push', 1);
      expect(push.headers['x-gitlab-event']).toBe('Push Hook');
      expect(push.body).toMatchObject({ object_kind: 'push', ref: 'refs/heads/master', project_id: project.id, total_commits_count: 1 });
      for (let i = 0; i < 100 && systemPushes().length === 0; i++) await sleep(100);
      const [sys] = systemPushes();
      expect(sys.headers['x-gitlab-event']).toBe('System Hook');
      expect(sys.body).toMatchObject({ object_kind: 'push', project_id: project.id });
      await sleep(2500);
      expect(rx.at('/restart-push')).toHaveLength(1);
      expect(systemPushes()).toHaveLength(1);
      await request(b.app.getHttpServer()).get('/api/v3/hooks').set('PRIVATE-TOKEN', a.root.token).expect(200);
    } finally {
      await instance.close();
    }
  }, 180_000); // two boots of the app on one database: slow on the embedded default on a busy machine
});
