import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { App, createApp } from '../../src/app.factory';
import { ApplicationSettingsService } from '../../src/application-settings/application-settings.service';
import { LoginAttemptsRepository } from '../../src/throttle/login-attempts.repository';
import { LoginThrottle } from '../../src/throttle/login-throttle';
import { GitCli } from '../helpers/git-cli';
import { startTestApp, TestApp } from '../helpers/test-app';

const API = '/api/v3';
const pg = !!process.env.DATABASE_URL;
type Json = Record<string, any>;

/** A fast-import stream: `n` commits on `branch` from `from`, each adding one file; then one commit touching `files` files. */
function bigHistory(branch: string, from: string, n: number, files: number, bigFileBytes: number): string {
  const parts: string[] = [];
  const data = (s: string) => `data ${Buffer.byteLength(s)}\n${s}\n`;
  for (let i = 1; i <= n + 2; i++) {
    parts.push(`commit refs/heads/${branch}\nmark :${i}\ncommitter A <a@example.com> ${1_700_000_000 + i} +0000\n${data(`commit ${i}`)}`);
    parts.push(i === 1 ? `from ${from}\n` : `from :${i - 1}\n`);
    if (i <= n) parts.push(`M 100644 inline history/${i}.txt\n${data(`${i}\n`)}`);
    else if (i === n + 1) for (let f = 0; f < files; f++) parts.push(`M 100644 inline wide/${f}.txt\n${data(`${f}\n`)}`);
    else parts.push(`M 100644 inline big.txt\n${data(Array.from({ length: bigFileBytes / 50 }, (_, k) => `line ${k} `.padEnd(49, 'x')).join('\n'))}`);
  }
  return parts.join('');
}

function pipeInto(cmd: string, args: string[], cwd: string, input: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const c = spawn(cmd, args, { cwd, stdio: ['pipe', 'ignore', 'pipe'] });
    let err = '';
    c.stderr.on('data', (d: Buffer) => (err += d.toString()));
    c.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`${cmd} ${args.join(' ')}: ${code} ${err}`))));
    c.stdin.end(input);
  });
}

/**
 * Abuse limits: the sign-in throttle cannot be cleared by flooding; GitLab 8's ban on git over HTTP
 * after repeated Basic-auth failures from one IP; the optional per-IP / per-token rate limit; caps on
 * expensive reads; raw files and artifacts never rendered as HTML from the API origin.
 * TRUST_PROXY is on here so that each test speaks from its own client IP (X-Forwarded-For).
 */
(pg ? describe : describe.skip)('security: abuse limits (PostgreSQL: several instances share the counters)', () => {
  let t: TestApp;
  let git: GitCli;
  let home: string;
  let work: string;
  let project: Json;
  const root = <T extends { set(k: string, v: string): T }>(r: T) => r.set('PRIVATE-TOKEN', t.root.token);
  const basic = (login: string, secret: string) => 'Basic ' + Buffer.from(`${login}:${secret}`).toString('base64');

  beforeAll(async () => {
    t = await startTestApp({ TRUST_PROXY: 'true' });
    home = mkdtempSync(join(tmpdir(), 'glv3-abuse-'));
    git = await GitCli.listen(t, home);
    project = (
      await root(t.http.post(`${API}/projects`))
        .send({ name: 'limits' })
        .expect(201)
    ).body;
    work = join(home, 'work');
    await git.ok(['init', '-q', work]);
    await git.commit(
      work,
      {
        'README.md': '# limits\n',
        'page.html': '<html><body><script>alert(document.cookie)</script></body></html>\n',
        'image.svg': '<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"><script>alert(2)</script></svg>\n',
      },
      'first',
    );
    await git.ok(['push', '-q', git.url(project.path_with_namespace, 'root', t.root.token), 'master'], work);
  });
  afterAll(async () => {
    await t.close();
    rmSync(home, { recursive: true, force: true });
  });

  describe('(a) sign-in throttle', () => {
    const signIn = (ip: string, login: string, password: string) => t.http.post(`${API}/session`).set('X-Forwarded-For', ip).send({ login, password });

    it('a lock survives a flood of failed sign-ins for other logins (no eviction an attacker can use); expired rows are pruned', async () => {
      const victim = await t.createUser();
      const ip = '198.51.100.7';
      for (let i = 0; i < 10; i++) expect((await signIn(ip, victim.username, 'wrong')).status).toBe(401);
      const locked = await signIn(ip, victim.username, victim.password);
      expect(locked.status).toBe(429);
      expect(Number(locked.headers['retry-after'])).toBeGreaterThan(0);
      const [before] = await t.sql<{ n: string }>(`SELECT count(*) AS n FROM login_attempts`);
      // the attacker floods: 10 failed sign-ins over HTTP for other logins, then 2,500 more through the
      // throttle itself (enough to run its pruning twice)
      for (let i = 0; i < 10; i++) await signIn(ip, `nobody-${i}`, 'x');
      const throttle = t.app.app.get(LoginThrottle);
      const started = Date.now();
      for (let i = 0; i < 2500; i += 50) {
        await Promise.all(Array.from({ length: 50 }, (_, k) => throttle.reserve(ip, `flood-${i + k}`)));
      }
      const floodMs = Date.now() - started;
      const still = await signIn(ip, victim.username, victim.password);
      expect(still.status).toBe(429);
      // the lock is per (IP, login): the same login from another IP signs in
      await signIn('198.51.100.8', victim.username, victim.password).expect(201);
      // bounded: once their window is over, the flood's rows are pruned (the throttle prunes every 1,000
      // failures; run here directly); the lock in force stays
      await t.sql(`UPDATE login_attempts SET first_at = now() - interval '16 minutes' WHERE locked_until IS NULL`);
      const [aged] = await t.sql<{ n: string }>(`SELECT count(*) AS n FROM login_attempts`);
      await t.app.app.get(LoginAttemptsRepository).prune(15 * 60);
      const [after] = await t.sql<{ n: string; locked: string; expired: string }>(
        `SELECT count(*) AS n, count(*) FILTER (WHERE locked_until > now()) AS locked,
                count(*) FILTER (WHERE first_at < now() - interval '15 minutes' AND (locked_until IS NULL OR locked_until < now())) AS expired
         FROM login_attempts`,
      );
      console.log(
        `sign-in throttle: ${before.n} rows before the flood, 2,510 flood failures in ${floodMs} ms, ${aged.n} rows once the window is over, ` +
          `${after.n} after pruning (${after.locked} locks in force, ${after.expired} expired left)`,
      );
      expect(Number(after.expired)).toBe(0);
      expect(Number(after.locked)).toBeGreaterThanOrEqual(1);
      expect(Number(after.n)).toBe(Number(after.locked));
      expect((await signIn(ip, victim.username, victim.password)).status).toBe(429);
    }, 240_000);
  });

  describe('(b) ban on git over HTTP after repeated Basic-auth failures', () => {
    const refs = (ip: string, auth?: string) => {
      const r = t.http.get(`/${project.path_with_namespace}.git/info/refs?service=git-upload-pack`).set('X-Forwarded-For', ip);
      return auth ? r.set('Authorization', auth) : r;
    };

    it('10 failures in 60 s from one IP: banned (403) even with good credentials, on every instance; other IPs and the API unaffected', async () => {
      const ip = '192.0.2.10';
      for (let i = 0; i < 10; i++) {
        const r = await refs(ip, basic('root', `wrong-${i}`));
        expect(r.status).toBe(401);
        expect(r.headers['www-authenticate']).toBe('Basic realm="GitLab"');
      }
      const banned = await refs(ip, basic('root', t.root.token));
      expect(banned.status).toBe(403);
      expect(banned.body).toEqual({ message: '403 Forbidden' });
      expect((await refs(ip)).status).toBe(403); // anonymous too
      await refs('192.0.2.11', basic('root', t.root.token)).expect(200);
      await root(t.http.get(`${API}/projects/${project.id}`))
        .set('X-Forwarded-For', ip)
        .expect(200);
      const b: App = await createApp(t.config);
      try {
        const other = request(b.app.getHttpServer());
        const r = await other
          .get(`/${project.path_with_namespace}.git/info/refs?service=git-upload-pack`)
          .set('X-Forwarded-For', ip)
          .set('Authorization', basic('root', t.root.token));
        expect(r.status).toBe(403);
      } finally {
        await b.close();
      }
      // a real git client is refused too
      const clone = await git.run(
        ['clone', '-q', `http://root:${t.root.token}@127.0.0.1:${git.port}/${project.path_with_namespace}.git`, join(home, 'banned')],
        home,
        {
          GIT_CONFIG_COUNT: '1',
          GIT_CONFIG_KEY_0: 'http.extraHeader',
          GIT_CONFIG_VALUE_0: `X-Forwarded-For: ${ip}`,
        },
      );
      expect(clone.code).not.toBe(0);
      expect(clone.stderr).toMatch(/403/);
      // the ban lasts an hour (GIT_AUTH_BAN_TIME); once over, the IP may try again
      const [row] = await t.sql<{ seconds: number }>(
        `SELECT ceil(extract(epoch FROM max(locked_until) - now()))::int AS seconds FROM login_attempts WHERE locked_until > now()`,
      );
      expect(row.seconds).toBeGreaterThan(3500);
      expect(row.seconds).toBeLessThanOrEqual(3600);
      await t.sql(
        `UPDATE login_attempts SET locked_until = now() - interval '1 second', first_at = now() - interval '2 minutes' WHERE locked_until > now() + interval '30 minutes'`,
      );
      await refs(ip, basic('root', t.root.token)).expect(200);
    });

    it('a success forgets the failures counted so far (as GitLab); 9 failures then nothing more is not a ban; no credentials are not failures', async () => {
      const ip = '192.0.2.20';
      // other logins each time: the sign-in throttle (per IP and login) would answer 429 after 10 for one login
      for (let i = 0; i < 9; i++) expect((await refs(ip, basic(`guess-${i}`, 'bad'))).status).toBe(401);
      await refs(ip, basic('root', t.root.token)).expect(200);
      for (let i = 0; i < 9; i++) expect((await refs(ip, basic(`guess-again-${i}`, 'bad'))).status).toBe(401);
      for (let i = 0; i < 20; i++) expect((await refs(ip)).status).toBe(401); // anonymous on a private project: the challenge
      await refs(ip, basic('root', t.root.token)).expect(200);
    });

    it('configurable (GIT_AUTH_BAN_*): 3 failures ban for the configured time; a whitelisted IP is never banned; 0 turns it off', async () => {
      const b = await createApp({ ...t.config, gitAuthBan: { maxRetry: 3, findTimeSeconds: 60, banTimeSeconds: 120, ipWhitelist: ['192.0.2.99'] } });
      const off = await createApp({ ...t.config, gitAuthBan: { maxRetry: 0, findTimeSeconds: 60, banTimeSeconds: 120, ipWhitelist: [] } });
      try {
        const via = (app: App, ip: string, auth: string) =>
          request(app.app.getHttpServer())
            .get(`/${project.path_with_namespace}.git/info/refs?service=git-upload-pack`)
            .set('X-Forwarded-For', ip)
            .set('Authorization', auth);
        for (let i = 0; i < 3; i++) expect((await via(b, '192.0.2.30', basic(`guess-${i}`, 'bad'))).status).toBe(401);
        expect((await via(b, '192.0.2.30', basic('root', t.root.token))).status).toBe(403);
        const [row] = await t.sql<{ n: string }>(
          `SELECT count(*) AS n FROM login_attempts WHERE locked_until > now() + interval '100 seconds' AND locked_until <= now() + interval '120 seconds'`,
        );
        expect(Number(row.n)).toBe(1); // the 120 s ban
        for (let i = 0; i < 10; i++) expect((await via(b, '192.0.2.99', basic(`guess-${i}`, 'bad'))).status).toBe(401);
        expect((await via(b, '192.0.2.99', basic('root', t.root.token))).status).toBe(200);
        for (let i = 0; i < 12; i++) expect((await via(off, '192.0.2.40', basic(`guess-${i}`, 'bad'))).status).toBe(401);
        expect((await via(off, '192.0.2.40', basic('root', t.root.token))).status).toBe(200);
      } finally {
        await b.close();
        await off.close();
      }
    });
  });

  describe('(c) optional request rate limit', () => {
    it('off by default: no middleware, no counter query, no row; hot reads pay nothing', async () => {
      // two fresh instances, one with the default (off), one with the limit on; the fewest statements
      // over 5 reads each (background work, such as queue polling, may add to one measurement)
      const offApp = await createApp({ ...t.config });
      const offHttp = request(offApp.app.getHttpServer());
      const read = () => offHttp.get(`${API}/projects/${project.id}`).set('PRIVATE-TOKEN', t.root.token).expect(200);
      await read();
      let off = Infinity;
      for (let i = 0; i < 5; i++) {
        await offApp.app.get(ApplicationSettingsService).reload();
        const before = offApp.db.counter.count;
        await read();
        off = Math.min(off, offApp.db.counter.count - before);
      }
      expect(await t.sql(`SELECT key FROM request_rate_counters`)).toHaveLength(0);
      const on = await createApp({ ...t.config, rateLimit: { perIp: 1_000_000, perToken: 1_000_000, periodSeconds: 60 } });
      try {
        const http = request(on.app.getHttpServer());
        const readOn = () => http.get(`${API}/projects/${project.id}`).set('PRIVATE-TOKEN', t.root.token).expect(200);
        await readOn();
        let onQueries = Infinity;
        for (let i = 0; i < 5; i++) {
          await on.app.get(ApplicationSettingsService).reload();
          const before = on.db.counter.count;
          await readOn();
          onQueries = Math.min(onQueries, on.db.counter.count - before);
        }
        // latency, 100 sequential reads each (short: a sanity figure, not a benchmark)
        const time = async (fn: () => Promise<unknown>) => {
          const s = process.hrtime.bigint();
          for (let i = 0; i < 100; i++) await fn();
          return Number(process.hrtime.bigint() - s) / 1e6 / 100;
        };
        const offMs = await time(read);
        const onMs = await time(readOn);
        console.log(
          `rate limit: GET /projects/:id sends ${off} SQL statements with the limit off, ${onQueries} with it on; ` +
            `mean latency ${offMs.toFixed(2)} ms off, ${onMs.toFixed(2)} ms on (100 reads each)`,
        );
        expect(onQueries).toBe(off + 1);
      } finally {
        await on.close();
        await offApp.close();
      }
    }, 180_000);

    it('per token and per IP, counted across instances: 429 with Retry-After and a GitLab body; health never limited', async () => {
      const cfg = { ...t.config, rateLimit: { perIp: 8, perToken: 5, periodSeconds: 60 } };
      const a = await createApp(cfg);
      const b = await createApp(cfg);
      await t.sql(`DELETE FROM request_rate_counters`); // the previous test's counts (same tokens)
      try {
        const via = [request(a.app.getHttpServer()), request(b.app.getHttpServer())];
        const user = await t.createUser();
        const statuses: number[] = [];
        let limited: request.Response | undefined;
        for (let i = 0; i < 7; i++) {
          // each request from a new IP: only the token's count grows
          const r = await via[i % 2]
            .get(`${API}/user`)
            .set('PRIVATE-TOKEN', user.token)
            .set('X-Forwarded-For', `203.0.113.${100 + i}`);
          statuses.push(r.status);
          if (r.status === 429) limited ??= r;
        }
        expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429]);
        expect(limited!.body).toEqual({ message: '429 Too Many Requests' });
        const retry = Number(limited!.headers['retry-after']);
        expect(retry).toBeGreaterThan(0);
        expect(retry).toBeLessThanOrEqual(60);
        // another token is not limited; the same token through the query string is
        await via[0].get(`${API}/user`).set('PRIVATE-TOKEN', t.root.token).set('X-Forwarded-For', '203.0.113.200').expect(200);
        expect((await via[1].get(`${API}/user?private_token=${user.token}`).set('X-Forwarded-For', '203.0.113.201')).status).toBe(429);
        // per IP, anonymous (401 for /projects), alternating instances: counted before authentication, 8 answered, then 429
        const ipStatuses: number[] = [];
        for (let i = 0; i < 10; i++) ipStatuses.push((await via[i % 2].get(`${API}/projects`).set('X-Forwarded-For', '203.0.113.50')).status);
        expect(ipStatuses).toEqual([...Array(8).fill(401), 429, 429]);
        await via[0].get('/-/readiness').set('X-Forwarded-For', '203.0.113.50').expect(200);
        // a new window lets it through again
        await t.sql(`UPDATE request_rate_counters SET window_start = now() - interval '61 seconds'`);
        await via[1].get(`${API}/projects`).set('X-Forwarded-For', '203.0.113.50').expect(401);
        const keys = await t.sql<{ key: string }>(`SELECT key FROM request_rate_counters`);
        expect(keys.every((k) => /^[0-9a-f]{64}$/.test(k.key))).toBe(true); // digests: no IP or token in clear
      } finally {
        await a.close();
        await b.close();
      }
    });
  });

  describe('(d) caps on expensive reads', () => {
    beforeAll(async () => {
      await pipeInto('git', ['fast-import', '--quiet'], work, bigHistory('big', 'refs/heads/master^0', 1100, 1100, 300 * 1024));
      await git.ok(['push', '-q', git.url(project.path_with_namespace, 'root', t.root.token), 'big'], work);
    }, 120_000);

    it('compare over more than 1,000 commits and 1,000 files: truncated with compare_timeout, a too-large diff flagged, in bounded time', async () => {
      const s = Date.now();
      const res = await root(t.http.get(`${API}/projects/${project.id}/repository/compare?from=master&to=big`)).expect(200);
      const ms = Date.now() - s;
      expect(res.body.compare_timeout).toBe(true);
      expect(res.body.commits).toHaveLength(1000);
      expect(res.body.diffs.length).toBeLessThanOrEqual(1000);
      console.log(
        `compare master...big (1,102 commits, 2,201 files): ${res.body.commits.length} commits, ${res.body.diffs.length} diffs, compare_timeout ${res.body.compare_timeout}, ${ms} ms`,
      );
      const big = await root(t.http.get(`${API}/projects/${project.id}/repository/commits/big/diff`)).expect(200);
      expect(big.body).toHaveLength(1);
      expect(big.body[0]).toMatchObject({ new_path: 'big.txt', diff: '', too_large: true });
      expect(ms).toBeLessThan(30_000);
    });

    it('tree: a path thousands of levels deep or too long answers 404 at once; a search term over 255 characters is a clear 400', async () => {
      const deep = Array(2000).fill('a').join('/');
      const s = Date.now();
      await root(t.http.get(`${API}/projects/${project.id}/repository/tree`).query({ path: deep })).expect(404);
      expect(Date.now() - s).toBeLessThan(5000);
      const wide = await root(t.http.get(`${API}/projects/${project.id}/repository/tree?ref_name=big&path=wide`)).expect(200);
      expect(wide.body).toHaveLength(1100);
      const long = 'x'.repeat(256);
      for (const path of ['/projects', '/groups', '/users', '/namespaces', `/projects/${project.id}/members`]) {
        const r = await root(t.http.get(`${API}${path}`).query({ search: long }));
        expect([path, r.status, r.body]).toEqual([path, 400, { message: '400 (Bad request) "search" is invalid' }]);
        await root(t.http.get(`${API}${path}`).query({ search: 'x'.repeat(255) })).expect(200);
      }
      await root(t.http.get(`${API}/projects/search/${long}`)).expect(400, { message: '400 (Bad request) "query" is invalid' });
      await root(t.http.get(`${API}/projects/search/${'x'.repeat(255)}`)).expect(200);
    });
  });

  describe('(e) raw files and artifacts are never HTML from the API origin', () => {
    it('raw blobs of .html and .svg files: text/plain, nosniff', async () => {
      const tree = await root(t.http.get(`${API}/projects/${project.id}/repository/tree`)).expect(200);
      const sha = (name: string) => tree.body.find((e: Json) => e.name === name).id;
      for (const file of ['page.html', 'image.svg']) {
        for (const path of [
          `/repository/blobs/master?filepath=${file}`,
          `/repository/commits/master/blob?filepath=${file}`,
          `/repository/raw_blobs/${sha(file)}`,
        ]) {
          const r = await root(t.http.get(`${API}/projects/${project.id}${path}`))
            .buffer(true)
            .expect(200);
          expect([path, r.headers['content-type'], r.headers['x-content-type-options']]).toEqual([path, 'text/plain; charset=utf-8', 'nosniff']);
          expect(r.text).toContain('<script>');
        }
      }
    });

    it('snippet raw, build trace and artifacts: text/plain or octet-stream attachment, nosniff', async () => {
      const snip = await root(t.http.post(`${API}/projects/${project.id}/snippets`))
        .send({ title: 'x', file_name: 'x.html', code: '<script>alert(1)</script>', visibility_level: 0 })
        .expect(201);
      const raw = await root(t.http.get(`${API}/projects/${project.id}/snippets/${snip.body.id}/raw`))
        .buffer(true)
        .expect(200);
      expect(raw.headers['content-type']).toBe('text/plain; charset=utf-8');
      expect(raw.headers['x-content-type-options']).toBe('nosniff');

      // a build with a trace and an HTML artifact
      const { ci } = await import('../helpers/ci');
      const c = ci(t);
      const p = await c.project({ ...t.root, id: t.root.id }, 'job:\n  script: x\n');
      const runner = await c.registerRunner();
      const build = (await c.api.requestBuild(runner.token).expect(201)).body;
      await c.api.patchTrace(build.id, build.token, 0, '<html><script>alert(1)</script>').expect(202);
      await t.http
        .post(`/ci/api/v1/builds/${build.id}/artifacts`)
        .set('BUILD-TOKEN', build.token)
        .attach('file', Buffer.from('<html><script>alert(1)</script></html>'), 'evil.html')
        .expect(201);
      const trace = await root(t.http.get(`${API}/projects/${p.id}/builds/${build.id}/trace`))
        .buffer(true)
        .expect(200);
      expect(trace.headers['content-type']).toMatch(/^text\/plain/);
      expect(trace.headers['x-content-type-options']).toBe('nosniff');
      const art = await root(t.http.get(`${API}/projects/${p.id}/builds/${build.id}/artifacts`))
        .buffer(true)
        .expect(200);
      expect(art.headers).toMatchObject({
        'content-type': 'application/octet-stream',
        'content-disposition': 'attachment; filename=evil.html',
        'x-content-type-options': 'nosniff',
      });
      const viaRunner = await t.http.get(`/ci/api/v1/builds/${build.id}/artifacts`).set('BUILD-TOKEN', build.token).buffer(true).expect(200);
      expect(viaRunner.headers).toMatchObject({ 'content-type': 'application/octet-stream', 'x-content-type-options': 'nosniff' });
    });
  });
});
