import request from 'supertest';
import type TestAgent from 'supertest/lib/agent';
import { App, createApp } from '../src/app.factory';
import { ci } from './helpers/ci';
import { countQueries, startTestApp, TestApp, TestUser } from './helpers/test-app';

const API = '/api/v3';
const pg = !!process.env.DATABASE_URL;

/**
 * The authentication cache (token → user for a few seconds) never serves a caller who may no
 * longer act: a revoked OAuth token, a reset private token, a blocked or deleted user take effect
 * on the next request, on the instance that made the change and on another instance sharing the
 * database (LISTEN/NOTIFY from database triggers). Memberships and visibility are not cached: a
 * removed member and a project made private lose access at once too.
 */
describe('authentication cache invalidation', () => {
  let t: TestApp;
  let bApp: App | undefined;
  /** The second instance on the same database (PostgreSQL only; the embedded default is one process). */
  let b: TestAgent;

  beforeAll(async () => {
    t = await startTestApp();
    if (pg) {
      bApp = await createApp(t.config);
      b = request(bApp.app.getHttpServer());
    } else {
      b = t.http;
    }
  });
  afterAll(async () => {
    await bApp?.close();
    await t.close();
  });

  const admin = () => ({ 'PRIVATE-TOKEN': t.root.token });
  const user = (http: TestAgent, token: string) => http.get(`${API}/user`).set('PRIVATE-TOKEN', token);
  const bearer = (http: TestAgent, token: string) => http.get(`${API}/user`).set('Authorization', `Bearer ${token}`);
  async function oauthToken(u: TestUser): Promise<string> {
    const res = await t.http.post('/oauth/token').type('form').send({ grant_type: 'password', username: u.username, password: u.password }).expect(200);
    return res.body.access_token;
  }
  /** Each instance has looked the credential up (so each would have it cached). */
  async function warm(check: (http: TestAgent) => Promise<unknown>): Promise<void> {
    await check(t.http);
    await check(b);
  }

  it('a second request with the same token sends no authentication statement', async () => {
    const u = await t.createUser();
    const cold = await countQueries(t, () => user(t.http, u.token).expect(200)); // empties the cache first
    const before = t.counter.count;
    await user(t.http, u.token).expect(200);
    expect(t.counter.count - before).toBe(cold - 1);
  });

  for (const where of ['the same instance', 'another instance'] as const) {
    describe(`changes made through one instance, seen through ${where}`, () => {
      const other = () => (where === 'the same instance' ? t.http : b);

      it('a blocked user gets 401 at once (private token and OAuth token); unblocked, 200 again', async () => {
        const u = await t.createUser();
        const access = await oauthToken(u);
        await warm((h) => user(h, u.token).expect(200));
        await warm((h) => bearer(h, access).expect(200));
        await t.http.put(`${API}/users/${u.id}/block`).set(admin()).expect(200);
        expect((await user(other(), u.token)).status).toBe(401);
        expect((await bearer(other(), access)).status).toBe(401);
        await t.http.put(`${API}/users/${u.id}/unblock`).set(admin()).expect(200);
        await user(other(), u.token).expect(200);
      });

      it('a revoked OAuth token gets 401 at once', async () => {
        const u = await t.createUser();
        const access = await oauthToken(u);
        await warm((h) => bearer(h, access).expect(200));
        await t.http.post('/oauth/revoke').type('form').send({ token: access }).expect(200);
        const res = await bearer(other(), access);
        expect(res.status).toBe(401);
        expect(res.body.error).toBe('invalid_token');
      });

      it('a reset private token gets 401 at once (changed by hand in the database)', async () => {
        const u = await t.createUser();
        await warm((h) => user(h, u.token).expect(200));
        await t.sql(`UPDATE users SET private_token_digest = encode(sha256(random()::text::bytea), 'hex') WHERE id = $1`, [u.id]);
        expect((await user(other(), u.token)).status).toBe(401);
      });

      it('a deleted user gets 401 at once', async () => {
        const u = await t.createUser();
        await warm((h) => user(h, u.token).expect(200));
        await t.http.delete(`${API}/users/${u.id}`).set(admin()).expect(200);
        expect((await user(other(), u.token)).status).toBe(401);
      });

      it('an admin made a regular user loses admin routes at once; a changed name shows at once', async () => {
        const u = await t.createUser({ admin: true });
        await warm((h) => h.get(`${API}/hooks`).set('PRIVATE-TOKEN', u.token).expect(200));
        await t.http.put(`${API}/users/${u.id}`).set(admin()).send({ admin: false, name: 'Renamed' }).expect(200);
        expect((await other().get(`${API}/hooks`).set('PRIVATE-TOKEN', u.token)).status).toBe(403);
        expect((await user(other(), u.token).expect(200)).body.name).toBe('Renamed');
      });

      it('a password change keeps the token working and the new password signs in', async () => {
        const u = await t.createUser();
        await warm((h) => user(h, u.token).expect(200));
        await t.http.put(`${API}/users/${u.id}`).set(admin()).send({ password: 'a-new-password-123' }).expect(200);
        await user(other(), u.token).expect(200);
        await other().post(`${API}/session`).send({ login: u.username, password: u.password }).expect(401);
        await other().post(`${API}/session`).send({ login: u.username, password: 'a-new-password-123' }).expect(201);
      });

      it('a removed member loses the private project at once (404)', async () => {
        const member = await t.createUser();
        const p = await t.http
          .post(`${API}/projects`)
          .set(admin())
          .send({ name: `cache-member-${where.length}`, visibility_level: 0 })
          .expect(201);
        await t.http.post(`${API}/projects/${p.body.id}/members`).set(admin()).send({ user_id: member.id, access_level: 30 }).expect(201);
        await warm((h) => h.get(`${API}/projects/${p.body.id}/issues`).set('PRIVATE-TOKEN', member.token).expect(200));
        await t.http.delete(`${API}/projects/${p.body.id}/members/${member.id}`).set(admin()).expect(200);
        const res = await other().get(`${API}/projects/${p.body.id}/issues`).set('PRIVATE-TOKEN', member.token);
        expect(res.status).toBe(404);
        expect(res.body).toEqual({ message: '404 Project Not Found' });
      });

      it('a project made private disappears at once for non-members (404, and from the lists)', async () => {
        const stranger = await t.createUser();
        const p = await t.http
          .post(`${API}/projects`)
          .set(admin())
          .send({ name: `cache-public-${where.length}`, visibility_level: 20 })
          .expect(201);
        await t.http.post(`${API}/projects/${p.body.id}/issues`).set(admin()).send({ title: 'public issue' }).expect(201);
        await warm((h) => h.get(`${API}/projects/${p.body.id}/issues`).set('PRIVATE-TOKEN', stranger.token).expect(200));
        await t.http.put(`${API}/projects/${p.body.id}`).set(admin()).send({ visibility_level: 0 }).expect(200);
        expect((await other().get(`${API}/projects/${p.body.id}/issues`).set('PRIVATE-TOKEN', stranger.token)).status).toBe(404);
        const all = await other().get(`${API}/projects/all`).set(admin()).expect(200);
        expect(all.body.map((x: { id: number }) => x.id)).toContain(p.body.id);
        const visible = await other().get(`${API}/projects`).set('PRIVATE-TOKEN', stranger.token).expect(200);
        expect(visible.body.map((x: { id: number }) => x.id)).not.toContain(p.body.id);
      });
    });
  }

  it('every change is seen by the very next request on both instances, however fast it follows (60 changes in a row)', async () => {
    // the notification reaches each instance asynchronously, on its listener connection: a cache hit
    // waits for a round trip there (DbNotifications.sync), so even a request sent the moment the
    // change committed never gets the old row
    const u = await t.createUser();
    const stale: string[] = [];
    for (let i = 0; i < 30; i++) {
      await warm((h) => user(h, u.token).expect(200));
      await t.sql(`UPDATE users SET state = 'blocked' WHERE id = $1`, [u.id]);
      const [here, there] = await Promise.all([user(t.http, u.token), user(b, u.token)]);
      if (here.status !== 401 || there.status !== 401) stale.push(`block ${i}: ${here.status} here, ${there.status} on the other instance`);
      await t.sql(`UPDATE users SET state = 'active', name = $2 WHERE id = $1`, [u.id, `Name ${i}`]);
      const [here2, there2] = await Promise.all([user(t.http, u.token), user(b, u.token)]);
      if (here2.body.name !== `Name ${i}` || there2.body.name !== `Name ${i}`)
        stale.push(`rename ${i}: ${here2.body.name} here, ${there2.body.name} on the other instance`);
    }
    expect(stale).toEqual([]);
  });

  describe('the runner cache (runner token → runner, for the poll)', () => {
    const V1 = '/ci/api/v1';
    const poll = (http: TestAgent, token: string) =>
      http
        .post(`${V1}/builds/register.json`)
        .set('Content-Type', 'application/json')
        .send(JSON.stringify({ token, info: { name: 'gitlab-ci-multi-runner', version: '1.3.5' } }));
    async function runner(): Promise<{ id: number; token: string }> {
      const token = (await t.http.get(`${API}/application/settings`).set(admin()).expect(200)).body.runners_registration_token;
      const res = await t.http
        .post(`${V1}/runners/register.json`)
        .send({ token, info: { name: 'gitlab-ci-multi-runner', version: '1.3.5' } })
        .expect(201);
      return res.body;
    }

    it('an empty poll with a known runner sends one statement (the claim), not two', async () => {
      const r = await runner();
      await poll(t.http, r.token).expect(404); // records the runner's contact (which drops its cached row)
      await poll(t.http, r.token).expect(404); // loads and caches the runner
      const before = t.counter.count;
      const res = await poll(t.http, r.token);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({});
      expect(t.counter.count - before).toBe(1);
    });

    for (const where of ['the same instance', 'another instance'] as const) {
      const other = () => (where === 'the same instance' ? t.http : b);
      it(`a paused runner gets no build at once, resumed it gets one, deleted 403 — seen through ${where}`, async () => {
        const r = await runner();
        await warm((h) => poll(h, r.token).expect(404));
        await t.http.put(`${API}/runners/${r.id}`).set(admin()).send({ active: false }).expect(200);
        // a build the runner could take
        const owner = await t.createUser();
        await ci(t).project(owner, 'job:\n  script: echo hi\n');
        await poll(other(), r.token).expect(404);
        await t.http.put(`${API}/runners/${r.id}`).set(admin()).send({ active: true }).expect(200);
        const claimed = await poll(other(), r.token);
        expect(claimed.status).toBe(201);
        expect(claimed.body.name).toBe('job');
        await t.http.delete(`${V1}/runners/delete`).send({ token: r.token }).expect(200);
        const gone = await poll(other(), r.token);
        expect(gone.status).toBe(403);
        expect(gone.body).toEqual({ message: '403 Forbidden' });
      });

      it(`a runner deleted by hand in the database gets 403 at once, seen through ${where}`, async () => {
        const r = await runner();
        await warm((h) => poll(h, r.token).expect(404));
        await t.sql(`DELETE FROM ci_runners WHERE id = $1`, [r.id]);
        expect((await poll(other(), r.token)).status).toBe(403);
      });
    }
  });
});
