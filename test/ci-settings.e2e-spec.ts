import { BuildTimeoutSweeper } from '../src/ci/pipelines/build-timeout.sweeper';
import { ci, Json, waitFor } from './helpers/ci';
import { planning } from './helpers/planning';
import { countQueries, startTestApp, TestApp } from './helpers/test-app';

/**
 * A job only runners with this tag take, so that each test claims its own builds. Quoted: YAML 1.1 (Ruby's
 * Psych, as 8.17 reads the file) makes a bare off, on, yes or no a boolean, which tags refuse.
 */
const tagged = (tag: string) => `job:\n  script: make\n  tags: ["${tag}"]\n`;

describe('CI settings that take effect (instance and project)', () => {
  let t: TestApp;
  let c: ReturnType<typeof ci>;
  let pl: ReturnType<typeof planning>;
  let team: Awaited<ReturnType<ReturnType<typeof planning>['team']>>;

  beforeAll(async () => {
    t = await startTestApp();
    c = ci(t);
    pl = planning(t);
    team = await pl.team();
  }, 240_000);
  afterAll(() => t.close());

  const settings = () => pl.get(team.admin, '/application/settings').expect(200);
  const setSettings = (body: Json) => pl.put(team.admin, '/application/settings').send(body).expect(200);

  describe('runners_registration_token reset', () => {
    it('PUT reset_runners_registration_token=true: a new token; the old one registers nothing (403), the new one a shared runner', async () => {
      const old = (await settings()).body.runners_registration_token as string;
      expect(old).toMatch(/^\S{20}$/);
      await c.api.register({ token: old }).expect(201);
      const res = await setSettings({ reset_runners_registration_token: true });
      const fresh = res.body.runners_registration_token as string;
      expect(fresh).toMatch(/^\S{20}$/);
      expect(fresh).not.toBe(old);
      expect(res.body).not.toHaveProperty('reset_runners_registration_token');
      expect((await settings()).body.runners_registration_token).toBe(fresh);
      expect((await c.api.register({ token: old }).expect(403)).body).toEqual({ message: '403 Forbidden' });
      const runner = (await c.api.register({ token: fresh }).expect(201)).body;
      expect((await pl.get(team.admin, `/runners/${runner.id}`).expect(200)).body.is_shared).toBe(true);
      // stored as a keyed digest and an encrypted copy, never in plain text
      const [row] = await t.sql<Json>(`SELECT runners_registration_token_digest AS d, runners_registration_token_encrypted AS e FROM application_settings`);
      expect(row.d).toMatch(/^[0-9a-f]{64}$/);
      expect(JSON.stringify(row)).not.toContain(fresh);
    });

    it('PUT without the flag (or false) keeps the token; other fields apply with it in one request', async () => {
      const before = (await settings()).body.runners_registration_token;
      expect((await setSettings({ reset_runners_registration_token: false })).body.runners_registration_token).toBe(before);
      expect((await setSettings({ signup_enabled: true })).body.runners_registration_token).toBe(before);
      const both = await setSettings({ reset_runners_registration_token: 'true', max_artifacts_size: 50 });
      expect(both.body.runners_registration_token).not.toBe(before);
      expect(both.body.max_artifacts_size).toBe(50);
      await setSettings({ max_artifacts_size: 100 });
    });

    it('POST /application/settings/reset_runners_registration_token: admin 201 with the settings; others 403; 401', async () => {
      const before = (await settings()).body.runners_registration_token;
      const res = await pl.post(team.admin, '/application/settings/reset_runners_registration_token').expect(201);
      expect(res.body).toMatchObject({ id: expect.any(Number), signup_enabled: expect.any(Boolean) });
      expect(res.body.runners_registration_token).not.toBe(before);
      await c.api.register({ token: before }).expect(403);
      await c.api.register({ token: res.body.runners_registration_token }).expect(201);
      expect((await pl.post(team.owner, '/application/settings/reset_runners_registration_token').expect(403)).body).toEqual({ message: '403 Forbidden' });
      await t.http.post('/api/v3/application/settings/reset_runners_registration_token').expect(401);
      expect((await settings()).body.runners_registration_token).toBe(res.body.runners_registration_token);
    });

    it('PUT with the flag: non-admin 403 and unauthenticated 401 leave the token; a bad value is 400 and resets nothing', async () => {
      const before = (await settings()).body.runners_registration_token;
      expect((await pl.put(team.owner, '/application/settings').send({ reset_runners_registration_token: true }).expect(403)).body).toEqual({
        message: '403 Forbidden',
      });
      await t.http.put('/api/v3/application/settings').send({ reset_runners_registration_token: true }).expect(401);
      const bad = await pl.put(team.admin, '/application/settings').send({ reset_runners_registration_token: 'maybe' }).expect(400);
      expect(bad.body.message).toHaveProperty('reset_runners_registration_token');
      const badOther = await pl.put(team.admin, '/application/settings').send({ reset_runners_registration_token: true, max_artifacts_size: 0 }).expect(400);
      expect(badOther.body).toEqual({ message: { max_artifacts_size: ['must be greater than 0'] } });
      expect((await settings()).body.runners_registration_token).toBe(before);
    });
  });

  describe('shared_runners_enabled', () => {
    it('instance setting off: the default of new projects only (GitLab 8.8); shared runners still serve projects that enable them', async () => {
      expect((await settings()).body.shared_runners_enabled).toBe(true);
      const p = await c.project(team.owner, `${tagged('inst')}second:\n  script: make\n  tags: [inst]\n`);
      const shared = await c.registerRunner({ tag_list: 'inst' });
      const specific = (await c.api.register({ token: p.runnersToken, tag_list: 'inst' }).expect(201)).body;
      expect((await pl.get(team.owner, `/projects/${p.id}/runners`).expect(200)).body.map((r: Json) => r.id)).toEqual(
        expect.arrayContaining([shared.id, specific.id]),
      );

      expect((await setSettings({ shared_runners_enabled: false })).body.shared_runners_enabled).toBe(false);
      try {
        const created = await pl
          .post(team.owner, '/projects')
          .send({ name: `default-off-${Date.now()}` })
          .expect(201);
        expect(created.body.shared_runners_enabled).toBe(false);
        const explicit = await pl
          .post(team.owner, '/projects')
          .send({ name: `explicit-on-${Date.now()}`, shared_runners_enabled: true })
          .expect(201);
        expect(explicit.body.shared_runners_enabled).toBe(true);
        // the existing project keeps its own flag: its runner list and the shared runner's claims are unchanged
        expect((await pl.get(team.owner, `/projects/${p.id}/runners?per_page=100`).expect(200)).body.map((r: Json) => r.id)).toEqual(
          expect.arrayContaining([shared.id, specific.id]),
        );
        expect((await c.api.requestBuild(shared.token).expect(201)).body.project_id).toBe(p.id);
        expect((await c.api.requestBuild(specific.token).expect(201)).body.project_id).toBe(p.id);
        const all = (await pl.get(team.admin, '/runners/all?scope=shared&per_page=100').expect(200)).body;
        expect(all).toContainEqual({ id: shared.id, description: null, active: true, is_shared: true, name: 'gitlab-ci-multi-runner' });
      } finally {
        await setSettings({ shared_runners_enabled: true });
      }
      await pl.put(team.admin, '/application/settings').send({ shared_runners_enabled: 'perhaps' }).expect(400);
    });

    it('project flag off: shared runners skip its builds and its runner list has only its specific runners (decision 27)', async () => {
      const p = await c.project(team.owner, tagged('proj'), { shared_runners_enabled: false });
      const shared = await c.registerRunner({ tag_list: 'proj' });
      const specific = (await c.api.register({ token: p.runnersToken, tag_list: 'proj' }).expect(201)).body;
      expect((await pl.get(team.owner, `/projects/${p.id}/runners?per_page=100`).expect(200)).body.map((r: Json) => r.id)).toEqual([specific.id]);
      await c.api.requestBuild(shared.token).expect(404);
      // switched on through the project API: the shared runner is listed and takes the build
      await pl.put(team.owner, `/projects/${p.id}`).send({ shared_runners_enabled: true }).expect(200);
      const list = (await pl.get(team.owner, `/projects/${p.id}/runners?per_page=100`).expect(200)).body;
      expect(list.map((r: Json) => [r.id, r.is_shared])).toEqual(
        expect.arrayContaining([
          [shared.id, true],
          [specific.id, false],
        ]),
      );
      expect((await c.api.requestBuild(shared.token).expect(201)).body.project_id).toBe(p.id);
    });
  });

  describe('max_artifacts_size', () => {
    it('set through the settings API: an upload over it is 413, one under it 201; 400 for a bad size', async () => {
      const p = await c.project(team.owner, tagged('art'));
      const runner = (await c.api.register({ token: p.runnersToken, tag_list: 'art' }).expect(201)).body;
      const build = (await c.api.requestBuild(runner.token).expect(201)).body;
      expect((await setSettings({ max_artifacts_size: 1 })).body.max_artifacts_size).toBe(1);
      try {
        const big = await t.http
          .post(`/ci/api/v1/builds/${build.id}/artifacts`)
          .set('BUILD-TOKEN', build.token)
          .attach('file', Buffer.alloc(1024 * 1024 + 100, 7), 'big.zip');
        expect(big.status).toBe(413);
        expect(big.body).toEqual({ message: '413 Request Entity Too Large' });
        await t.http
          .post(`/ci/api/v1/builds/${build.id}/artifacts`)
          .set('BUILD-TOKEN', build.token)
          .attach('file', Buffer.alloc(2000, 1), 'small.zip')
          .expect(201);
      } finally {
        await setSettings({ max_artifacts_size: 100 });
      }
      expect((await pl.put(team.admin, '/application/settings').send({ max_artifacts_size: 'x' }).expect(400)).body.message).toHaveProperty(
        'max_artifacts_size',
      );
      expect((await settings()).body.max_artifacts_size).toBe(100);
    });
  });

  describe('project builds_enabled', () => {
    it('off: the builds API is 403 for members (404 for outsiders of a private project), runners take no builds, a push creates no pipeline', async () => {
      const p = await c.project(team.owner, tagged('off'));
      const runner = (await c.api.register({ token: p.runnersToken, tag_list: 'off' }).expect(201)).body;
      const [pending] = await c.builds(p.id);
      await pl.put(team.owner, `/projects/${p.id}`).send({ builds_enabled: false }).expect(200);
      await c.api.requestBuild(runner.token).expect(404);
      expect((await pl.get(team.owner, `/projects/${p.id}/builds`).expect(403)).body).toEqual({ message: '403 Forbidden' });
      await pl.get(team.owner, `/projects/${p.id}/builds/${pending.id}`).expect(403);
      await pl.post(team.owner, `/projects/${p.id}/builds/${pending.id}/cancel`).expect(403);
      await pl.get(team.stranger, `/projects/${p.id}/builds`).expect(404);
      await t.http.get(`/api/v3/projects/${p.id}/builds`).expect(401);
      await pl
        .post(team.owner, `/projects/${p.id}/repository/files`)
        .send({ file_path: 'x.txt', branch_name: 'master', content: 'x', commit_message: 'no pipeline' })
        .expect(201);
      await new Promise((r) => setTimeout(r, 300));
      expect(await c.pipelines(p.id)).toHaveLength(1);
      // back on: the pending build is served again
      await pl.put(team.owner, `/projects/${p.id}`).send({ builds_enabled: true }).expect(200);
      expect((await c.api.requestBuild(runner.token).expect(201)).body.id).toBe(pending.id);
      expect((await pl.get(team.owner, `/projects/${p.id}/builds`).expect(200)).body).toHaveLength(1);
    });
  });

  describe('project public_builds', () => {
    it('a public project: outsiders read builds when public_builds, 403 when not; members with reporter+ always', async () => {
      const p = await c.project(team.owner, tagged('pub'), { visibility_level: 20 });
      const [b] = await c.builds(p.id);
      expect((await pl.get(team.stranger, `/projects/${p.id}/builds`).expect(200)).body.map((x: Json) => x.id)).toEqual([b.id]);
      await pl.get(team.stranger, `/projects/${p.id}/builds/${b.id}`).expect(200);
      await pl.put(team.owner, `/projects/${p.id}`).send({ public_builds: false }).expect(200);
      await pl.get(team.stranger, `/projects/${p.id}/builds`).expect(403);
      await pl.get(team.stranger, `/projects/${p.id}/builds/${b.id}`).expect(403);
      await pl.get(team.stranger, `/projects/${p.id}/builds/${b.id}/trace`).expect(403);
      await pl.post(team.owner, `/projects/${p.id}/members`).send({ user_id: team.reporter.id, access_level: 20 }).expect(201);
      await pl.get(team.reporter, `/projects/${p.id}/builds`).expect(200);
      await pl.post(team.reporter, `/projects/${p.id}/builds/${b.id}/cancel`).expect(403);
    });
  });

  describe('project build_timeout', () => {
    it('goes to the runner as `timeout` and is what the sweeper fails a running build after', async () => {
      const p = await c.project(team.owner, tagged('slow'));
      await t.sql(`UPDATE projects SET build_timeout = 120 WHERE id = $1`, [p.id]);
      const runner = (await c.api.register({ token: p.runnersToken, tag_list: 'slow' }).expect(201)).body;
      const build = (await c.api.requestBuild(runner.token).expect(201)).body;
      expect(build.timeout).toBe(120);
      const sweeper = t.app.app.get(BuildTimeoutSweeper);
      await t.sql(`UPDATE commit_statuses SET started_at = now() - interval '100 seconds' WHERE id = $1`, [build.id]);
      expect(await sweeper.sweep()).not.toContain(build.id);
      await t.sql(`UPDATE commit_statuses SET started_at = now() - interval '121 seconds' WHERE id = $1`, [build.id]);
      expect(await sweeper.sweep()).toContain(build.id);
      await waitFor(async () => (await c.builds(p.id))[0].status === 'failed', 'build failed by timeout');
    });
  });

  describe('query counts of the builds and runners lists', () => {
    it("are the same for per_page=1 and per_page=100 (builds, a commit's builds, /runners, /runners/all, /projects/:id/runners)", async () => {
      const p = await c.project(team.owner, tagged('many'));
      await pl.post(team.owner, `/projects/${p.id}/members`).send({ user_id: team.master.id, access_level: 40 }).expect(201);
      const [pipeline] = await c.pipelines(p.id);
      // 120 specific runners of the project and 120 finished builds spread over them and two users
      await t.sql(
        `WITH r AS (
           INSERT INTO ci_runners (token_digest, token_encrypted, description, is_shared)
           SELECT md5('many' || g || $1::int) || md5('x' || g || $1::int), 'x', 'seeded ' || g, false FROM generate_series(1, 120) g RETURNING id)
         INSERT INTO ci_runner_projects (runner_id, project_id) SELECT id, $1::int FROM r`,
        [p.id],
      );
      await t.sql(
        `WITH s AS (
           INSERT INTO commit_statuses (project_id, sha, ref, name, stage, status, allow_failure, pipeline_id, author_id)
           SELECT $1, $2, 'master', 'job ' || g, 'test', 'success', false, $3, CASE WHEN g % 2 = 0 THEN $4::int ELSE $5::int END
           FROM generate_series(1, 120) g RETURNING id)
         INSERT INTO ci_builds (id, pipeline_id, project_id, stage_idx, commands, runner_id, user_id)
         SELECT s.id, $3, $1, 1, 'x', (SELECT id FROM ci_runner_projects rp WHERE rp.project_id = $1 ORDER BY random() LIMIT 1),
                CASE WHEN s.id % 2 = 0 THEN $4::int ELSE $5::int END
         FROM s`,
        [p.id, p.sha, pipeline.id, team.owner.id, team.master.id],
      );
      const counts: Record<string, [number, number]> = {};
      const pair = async (name: string, path: string, user = team.owner) => {
        const one = await countQueries(t, async () => expect((await pl.get(user, `${path}per_page=1`).expect(200)).body).toHaveLength(1));
        const hundred = await countQueries(t, async () => expect((await pl.get(user, `${path}per_page=100`).expect(200)).body).toHaveLength(100));
        counts[name] = [one, hundred];
      };
      await pair('GET /projects/:id/builds', `/projects/${p.id}/builds?`);
      await pair('GET /projects/:id/builds?scope[]=success&scope[]=failed', `/projects/${p.id}/builds?scope[]=success&scope[]=failed&`);
      await pair('GET /projects/:id/repository/commits/:sha/builds', `/projects/${p.id}/repository/commits/${p.sha}/builds?`);
      await pair('GET /runners', '/runners?', team.master);
      await pair('GET /runners/all', '/runners/all?', team.admin);
      await pair('GET /projects/:id/runners', `/projects/${p.id}/runners?`);
      // the total (X-Total) follows the scope
      expect((await pl.get(team.owner, `/projects/${p.id}/builds?scope[]=failed&per_page=1`).expect(200)).headers['x-total']).toBe('0');
      expect((await pl.get(team.owner, `/projects/${p.id}/builds?scope=success&per_page=1`).expect(200)).headers['x-total']).toBe('120');
      expect((await pl.get(team.owner, `/projects/${p.id}/builds?per_page=1`).expect(200)).headers['x-total']).toBe('121');
      const ofCommit = await pl.get(team.owner, `/projects/${p.id}/repository/commits/${p.sha}/builds?per_page=50&page=3&scope=success`).expect(200);
      expect([ofCommit.headers['x-total'], ofCommit.headers['x-total-pages'], ofCommit.body.length]).toEqual(['120', '3', 20]);
      const past = await pl.get(team.owner, `/projects/${p.id}/repository/commits/${p.sha}/builds?per_page=50&page=9`).expect(200);
      expect([past.headers['x-total'], past.body]).toEqual(['121', []]);
      console.log(
        `queries per request (per_page=1 vs per_page=100):\n${Object.entries(counts)
          .map(([k, [a, b]]) => `  ${k}: ${a} vs ${b}`)
          .join('\n')}`,
      );
      for (const [one, hundred] of Object.values(counts)) expect(hundred).toBe(one);
    });
  });

  describe('permission rows of the builds and project runners API (private, internal, public)', () => {
    const ROLES = ['stranger', 'guest', 'reporter', 'developer', 'master', 'admin'] as const;
    // [read a build, cancel it, list the project runners] per role; public_builds on (the default) unless said
    const EXPECTED: Record<string, Record<(typeof ROLES)[number], [number, number, number]>> = {
      private: {
        stranger: [404, 404, 404],
        guest: [200, 403, 403],
        reporter: [200, 403, 403],
        developer: [200, 201, 403],
        master: [200, 201, 200],
        admin: [200, 201, 200],
      },
      internal: {
        stranger: [200, 403, 403],
        guest: [200, 403, 403],
        reporter: [200, 403, 403],
        developer: [200, 201, 403],
        master: [200, 201, 200],
        admin: [200, 201, 200],
      },
      public: {
        stranger: [200, 403, 403],
        guest: [200, 403, 403],
        reporter: [200, 403, 403],
        developer: [200, 201, 403],
        master: [200, 201, 200],
        admin: [200, 201, 200],
      },
      'internal, public_builds off': {
        stranger: [403, 403, 403],
        guest: [403, 403, 403],
        reporter: [200, 403, 403],
        developer: [200, 201, 403],
        master: [200, 201, 200],
        admin: [200, 201, 200],
      },
    };
    const LEVELS: Record<string, [0 | 10 | 20, Json]> = {
      private: [0, {}],
      internal: [10, {}],
      public: [20, {}],
      'internal, public_builds off': [10, { public_builds: false }],
    };

    it.each(Object.keys(EXPECTED))('%s project', async (kind) => {
      const [level, extra] = LEVELS[kind];
      const p = await pl.project(team, level, extra);
      await pl
        .post(team.owner, `/projects/${p.id}/repository/files`)
        .send({ file_path: '.gitlab-ci.yml', branch_name: 'master', content: tagged(`perm${level}`), commit_message: 'ci' })
        .expect(201);
      const [b] = await waitFor(async () => {
        const list = await c.builds(p.id);
        return list.length ? list : undefined;
      }, 'build');
      const seen: Record<string, [number, number, number]> = {};
      for (const role of ROLES) {
        seen[role] = [
          (await pl.get(team[role], `/projects/${p.id}/builds/${b.id}`)).status,
          (await pl.post(team[role], `/projects/${p.id}/builds/${b.id}/cancel`)).status,
          (await pl.get(team[role], `/projects/${p.id}/runners`)).status,
        ];
      }
      expect(seen).toEqual(EXPECTED[kind]);
      await t.http.get(`/api/v3/projects/${p.id}/builds/${b.id}`).expect(401);
      await t.http.post(`/api/v3/projects/${p.id}/builds/${b.id}/cancel`).expect(401);
    });
  });
});
