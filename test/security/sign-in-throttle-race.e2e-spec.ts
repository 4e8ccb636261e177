import request from 'supertest';
import { App, createApp } from '../../src/app.factory';
import { startTestApp, TestApp } from '../helpers/test-app';

const API = '/api/v3';
const pg = !!process.env.DATABASE_URL;

const count = (statuses: number[]) => statuses.reduce<Record<number, number>>((m, s) => ({ ...m, [s]: (m[s] ?? 0) + 1 }), {});

/**
 * The sign-in throttle and the git Basic-auth ban reserve each attempt atomically in the database
 * before the credential is checked: a burst of concurrent guesses gets no more checks than the limit
 * (10), on PostgreSQL across instances and on the embedded default alike.
 */
describe('security: sign-in throttle and git auth ban hold under concurrency', () => {
  let t: TestApp;
  let project: { path_with_namespace: string };
  const basic = (login: string, secret: string) => 'Basic ' + Buffer.from(`${login}:${secret}`).toString('base64');

  beforeAll(async () => {
    t = await startTestApp({ TRUST_PROXY: 'true' });
    project = (await t.http.post(`${API}/projects`).set('PRIVATE-TOKEN', t.root.token).send({ name: 'throttled' }).expect(201)).body;
  });
  afterAll(() => t.close());

  const signIn = (http: request.Agent | ReturnType<typeof request>, ip: string, login: string, password: string) =>
    http.post(`${API}/session`).set('X-Forwarded-For', ip).send({ login, password });

  it('60 concurrent wrong passwords for one login: exactly 10 checked (401), 50 refused (429); then locked, saying until when', async () => {
    const victim = await t.createUser();
    const ip = '198.51.100.40';
    const res = await Promise.all(Array.from({ length: 60 }, (_, i) => signIn(t.http, ip, victim.username, `wrong-${i}`)));
    const statuses = count(res.map((r) => r.status));
    console.log(`sign-in throttle, 60 concurrent wrong passwords (${pg ? 'PostgreSQL' : 'embedded'}): ${JSON.stringify(statuses)}`);
    expect(statuses).toEqual({ 401: 10, 429: 50 });
    const locked = await signIn(t.http, ip, victim.username, victim.password);
    expect(locked.status).toBe(429);
    const m =
      /^429 Too Many Requests - this login is locked after too many failed sign-ins until (\w{3}, \d\d \w{3} \d{4} \d\d:\d\d:\d\d GMT) \((\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)\)$/.exec(
        locked.body.message,
      );
    expect(m).not.toBeNull();
    const until = new Date(m![2]).getTime();
    expect(new Date(m![1]).getTime()).toBe(Math.floor(until / 1000) * 1000);
    const inMs = until - Date.now();
    expect(inMs).toBeGreaterThan(14 * 60 * 1000);
    expect(inMs).toBeLessThanOrEqual(15 * 60 * 1000 + 1000);
    expect(Math.abs(Number(locked.headers['retry-after']) * 1000 - inMs)).toBeLessThan(5000);
    // the same login from another IP is its own budget
    await signIn(t.http, '198.51.100.41', victim.username, victim.password).expect(201);
  }, 60_000);

  it('the account budget is shared by username and email under concurrency too', async () => {
    const victim = await t.createUser();
    const ip = '198.51.100.42';
    const res = await Promise.all(Array.from({ length: 40 }, (_, i) => signIn(t.http, ip, i % 2 ? victim.username : victim.email, `wrong-${i}`)));
    expect(count(res.map((r) => r.status))).toEqual({ 401: 10, 429: 30 });
  }, 60_000);

  it('60 concurrent wrong Basic credentials for git from one IP: exactly 10 checked (401), the rest refused (403); then banned', async () => {
    const ip = '192.0.2.50';
    const res = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        t.http
          .get(`/${project.path_with_namespace}.git/info/refs?service=git-upload-pack`)
          .set('X-Forwarded-For', ip)
          .set('Authorization', basic(`guess-${i}`, 'bad')),
      ),
    );
    const statuses = count(res.map((r) => r.status));
    console.log(`git auth ban, 60 concurrent wrong credentials (${pg ? 'PostgreSQL' : 'embedded'}): ${JSON.stringify(statuses)}`);
    expect(statuses).toEqual({ 401: 10, 403: 50 });
    const banned = await t.http
      .get(`/${project.path_with_namespace}.git/info/refs?service=git-upload-pack`)
      .set('X-Forwarded-For', ip)
      .set('Authorization', basic('root', t.root.token));
    expect(banned.status).toBe(403);
  }, 60_000);

  (pg ? it : it.skip)(
    'across two instances (PostgreSQL): 60 concurrent wrong passwords, 30 through each, still exactly 10 checked',
    async () => {
      const b: App = await createApp(t.config);
      try {
        const other = request(b.app.getHttpServer());
        const victim = await t.createUser();
        const ip = '198.51.100.43';
        const res = await Promise.all(Array.from({ length: 60 }, (_, i) => signIn(i % 2 ? t.http : other, ip, victim.username, `wrong-${i}`)));
        expect(count(res.map((r) => r.status))).toEqual({ 401: 10, 429: 50 });
        const git = await Promise.all(
          Array.from({ length: 40 }, (_, i) =>
            (i % 2 ? t.http : other)
              .get(`/${project.path_with_namespace}.git/info/refs?service=git-upload-pack`)
              .set('X-Forwarded-For', '192.0.2.51')
              .set('Authorization', basic(`guess-${i}`, 'bad')),
          ),
        );
        expect(count(git.map((r) => r.status))).toEqual({ 401: 10, 403: 30 });
      } finally {
        await b.close();
      }
    },
    60_000,
  );
});
