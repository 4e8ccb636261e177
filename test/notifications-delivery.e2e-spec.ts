import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { App, createApp } from '../src/app.factory';
import { loadConfig } from '../src/config/config';
import { EXTERNAL_URL, ROOT_PASSWORD, startTestApp, TestApp, TestUser } from './helpers/test-app';
import { SmtpTestServer } from './helpers/smtp';

const pg = process.env.DATABASE_URL ? describe : describe.skip;

/**
 * Delivery of notification mails: queued with the change, sent by the queue's workers, retried while
 * the SMTP server is away or answers 4xx, not retried on a permanent 5xx, never slowing the request;
 * a job queued before a restart is sent once after it; two instances send each mail once.
 */
describe('notification delivery', () => {
  let smtp: SmtpTestServer;
  let t: TestApp;
  let owner: TestUser;
  let a: TestUser;
  let b: TestUser;
  let projectId: number;
  let issueId: number;
  const extra: App[] = [];

  const as = (u: TestUser, http = t.http) => ({
    post: (p: string, body: object = {}) => http.post(`/api/v3${p}`).set('PRIVATE-TOKEN', u.token).send(body),
    del: (p: string) => http.delete(`/api/v3${p}`).set('PRIVATE-TOKEN', u.token),
  });
  /** Another instance on the same database and data folder (no schema reset). */
  async function instance(env: Record<string, string> = {}): Promise<App> {
    const app = await createApp(
      loadConfig({
        DATA_DIR: mkdtempSync(join(tmpdir(), 'glv3-inst-')),
        DATABASE_URL: t.config.databaseUrl ?? '',
        LOG_LEVEL: 'silent',
        SSH_ENABLED: 'false',
        ROOT_PASSWORD,
        EXTERNAL_URL,
        SECRET_KEY: 'test-secret-key-test-secret-key-0123456789',
        ...smtp.env(),
        ...env,
      }),
    );
    await app.app.init();
    extra.push(app);
    return app;
  }
  const noteCount = (subject: string, to: string) => smtp.received.filter((m) => m.parsed.subject === subject && m.to[0] === to).length;

  beforeAll(async () => {
    smtp = await SmtpTestServer.start();
    t = await startTestApp(smtp.env({ EMAIL_RETRY_LIMIT: '10' }));
    owner = await t.createUser({ name: 'Owner' });
    a = await t.createUser({ name: 'A' });
    b = await t.createUser({ name: 'B' });
    const p = await as(owner).post('/projects', { name: 'Deliver', visibility_level: 0 }).expect(201);
    projectId = p.body.id;
    for (const u of [a, b]) await as(t.root).post(`/projects/${projectId}/members`, { user_id: u.id, access_level: 30 }).expect(201);
    const i = await as(owner).post(`/projects/${projectId}/issues`, { title: 'Deliver me' }).expect(201);
    issueId = i.body.id;
    for (const u of [a, b]) await as(u).post(`/projects/${projectId}/issues/${issueId}/subscription`).expect(201);
  }, 60_000);

  afterAll(async () => {
    for (const x of extra) await x.close().catch(() => undefined);
    await t?.close();
    await smtp?.close();
  });

  const subject = 'Re: Deliver | Deliver me (#1)';

  it('SMTP down when the change happens: the request is not slowed, the mail arrives once the server is back', async () => {
    await smtp.stop();
    const started = Date.now();
    await as(owner).post(`/projects/${projectId}/issues/${issueId}/notes`, { body: 'while down' }).expect(201);
    expect(Date.now() - started).toBeLessThan(2000);
    await new Promise((r) => setTimeout(r, 2500)); // a few failed attempts
    await smtp.start();
    await smtp.waitFor(() => noteCount(subject, a.email) === 1 && noteCount(subject, b.email) === 1, 40_000);
    const m = await t.http.get('/-/metrics').expect(200);
    expect(m.text).toMatch(/notification_mails_total\{result="retried"\} [1-9]/);
  }, 60_000);

  it('a temporary 4xx is retried; a permanent 5xx is given up at once with the reason kept', async () => {
    smtp.received.length = 0;
    smtp.refuse.set(a.email, { code: 451, message: 'Try again later' });
    smtp.refuse.set(b.email, { code: 550, message: 'No such mailbox here' });
    await as(owner).post(`/projects/${projectId}/issues/${issueId}/notes`, { body: 'refused' }).expect(201);
    await new Promise((r) => setTimeout(r, 2500));
    smtp.refuse.delete(a.email);
    smtp.refuse.delete(b.email); // too late for b: not retried
    await smtp.waitFor(() => noteCount(subject, a.email) === 1, 40_000);
    await smtp.quiet(3000);
    expect(noteCount(subject, b.email)).toBe(0);
    const failed = await t.sql<{ retry_count: number; output: { message: string } }>(
      `SELECT retry_count, output FROM pgboss.job WHERE name = 'notifications.mail' AND state = 'failed'`,
    );
    expect(failed).toHaveLength(1);
    expect(failed[0].retry_count).toBe(0);
    expect(failed[0].output.message).toContain('No such mailbox here');
  }, 60_000);

  pg('a job queued before a restart is sent once after it (PostgreSQL)', () => {
    it('an instance without workers queues; it stops; a new one sends each mail once', async () => {
      smtp.received.length = 0;
      const enqueuer = await instance({ QUEUE_WORKERS: 'false' });
      await smtp.stop(); // the test app's own workers cannot send meanwhile either
      const http = request(enqueuer.app.getHttpServer());
      await as(owner, http).post(`/projects/${projectId}/issues/${issueId}/notes`, { body: 'before restart' }).expect(201);
      await enqueuer.close();
      extra.splice(extra.indexOf(enqueuer), 1);
      await smtp.start();
      await instance();
      await smtp.waitFor(() => noteCount(subject, a.email) >= 1 && noteCount(subject, b.email) >= 1, 40_000);
      await smtp.quiet(3000);
      expect(noteCount(subject, a.email)).toBe(1);
      expect(noteCount(subject, b.email)).toBe(1);
    }, 90_000);

    it('two instances send each mail once', async () => {
      smtp.received.length = 0;
      const users: TestUser[] = [];
      for (let i = 0; i < 6; i++) {
        const u = await t.createUser();
        await as(u).post(`/projects/${projectId}/issues/${issueId}/subscription`).expect(404); // not a member of the private project
        await as(t.root).post(`/projects/${projectId}/members`, { user_id: u.id, access_level: 20 }).expect(201);
        await as(u).post(`/projects/${projectId}/issues/${issueId}/subscription`).expect(201);
        users.push(u);
      }
      await instance();
      for (let n = 0; n < 3; n++)
        await as(owner)
          .post(`/projects/${projectId}/issues/${issueId}/notes`, { body: `two instances ${n}` })
          .expect(201);
      const everyone = [a, b, ...users];
      await smtp.waitFor(() => everyone.every((u) => noteCount(subject, u.email) >= 3), 40_000);
      await smtp.quiet(3000);
      for (const u of everyone) expect(noteCount(subject, u.email)).toBe(3);
    }, 90_000);
  });
});

describe('notifications off (no SMTP_URL)', () => {
  let t: TestApp;
  let out = '';
  const write = process.stdout.write.bind(process.stdout);

  beforeAll(async () => {
    process.stdout.write = (chunk: string | Uint8Array, ...rest: unknown[]) => {
      out += String(chunk);
      return (write as (...a: unknown[]) => boolean)(chunk, ...rest);
    };
    try {
      t = await startTestApp({ LOG_LEVEL: 'info' });
    } finally {
      process.stdout.write = write;
    }
  }, 60_000);
  afterAll(() => t?.close());

  it('says so once at start and queues nothing for notifications', async () => {
    expect(out.split('\n').filter((l) => l.includes('email notifications are off')).length).toBe(1);
    const u = await t.createUser();
    const p = await t.http.post('/api/v3/projects').set('PRIVATE-TOKEN', u.token).send({ name: 'quiet' }).expect(201);
    const i = await t.http.post(`/api/v3/projects/${p.body.id}/issues`).set('PRIVATE-TOKEN', u.token).send({ title: 'x' }).expect(201);
    await t.http.post(`/api/v3/projects/${p.body.id}/issues/${i.body.id}/notes`).set('PRIVATE-TOKEN', t.root.token).send({ body: 'y' }).expect(201);
    const jobs = await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM pgboss.job WHERE name LIKE 'notifications.%'`);
    expect(jobs[0].n).toBe(0);
    // the settings API works either way
    await t.http.get('/api/v3/notification_settings').set('PRIVATE-TOKEN', u.token).expect(200);
  });
});
