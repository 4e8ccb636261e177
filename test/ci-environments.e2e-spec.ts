import { ci, Json, waitFor } from './helpers/ci';
import { expectSchema } from './helpers/schema';
import { countQueries, startTestApp, TestApp, TestUser } from './helpers/test-app';

/**
 * Environments and deployments as GitLab 8.17 (lib/api/environments.rb, lib/api/deployments.rb,
 * app/models/environment.rb, CreateDeploymentService, Ci::StopEnvironmentsService; access from
 * app/policies/project_policy.rb: reporters read, developers create, masters update and delete).
 */
const NAME_MESSAGE = "can contain only letters, digits, '-', '_', '/', '$', '{', '}', '.' and spaces";
const SLUG_ERROR = { error: 'slug is automatically generated and cannot be changed' };

const YML = `
stages: [deploy]
deploy_review:
  stage: deploy
  script: echo deploy
  environment:
    name: review/$CI_BUILD_REF_NAME
    url: https://$CI_BUILD_REF_SLUG.review.example.com
    on_stop: stop_review
stop_review:
  stage: deploy
  script: echo stop
  when: manual
  environment:
    name: review/$CI_BUILD_REF_NAME
    action: stop
deploy_plain:
  stage: deploy
  script: echo plain
  environment: plain/$CI_BUILD_REF_NAME
`;

describe('environments and deployments (GitLab 8.17)', () => {
  let t: TestApp;
  let c: ReturnType<typeof ci>;
  let owner: TestUser;
  let master: TestUser;
  let developer: TestUser;
  let reporter: TestUser;
  let guest: TestUser;
  let stranger: TestUser;
  let project: { id: number };

  const api = (path: string) => `/api/v3/projects/${project.id}${path}`;
  const as = (u: TestUser) => ({
    get: (path: string) => t.http.get(api(path)).set('PRIVATE-TOKEN', u.token),
    post: (path: string, body: Json = {}) => t.http.post(api(path)).set('PRIVATE-TOKEN', u.token).send(body),
    put: (path: string, body: Json = {}) => t.http.put(api(path)).set('PRIVATE-TOKEN', u.token).send(body),
    del: (path: string) => t.http.delete(api(path)).set('PRIVATE-TOKEN', u.token),
  });

  async function member(projectId: number, u: TestUser, level: number) {
    await t.http.post(`/api/v3/projects/${projectId}/members`).set('PRIVATE-TOKEN', owner.token).send({ user_id: u.id, access_level: level }).expect(201);
  }

  beforeAll(async () => {
    t = await startTestApp({ LOG_LEVEL: process.env.CI_TEST_LOG ?? 'silent' });
    c = ci(t);
    [owner, master, developer, reporter, guest, stranger] = await Promise.all([1, 2, 3, 4, 5, 6].map(() => t.createUser()));
    project = await c.project(owner, null);
    await member(project.id, master, 40);
    await member(project.id, developer, 30);
    await member(project.id, reporter, 20);
    await member(project.id, guest, 10);
  });
  afterAll(() => t.close());

  describe('POST /projects/:id/environments', () => {
    it('201 for a developer: slug as 8.17 generates it, project embedded', async () => {
      const res = await as(developer).post('/environments', { name: 'production', external_url: 'https://prod.example.com' });
      expect(res.status).toBe(201);
      await expectSchema(res, 'Environment');
      expect(res.body).toMatchObject({ name: 'production', slug: 'production', external_url: 'https://prod.example.com' });
      expect(Object.keys(res.body)).toEqual(['id', 'name', 'slug', 'external_url', 'project']);
      expect(res.body.project.id).toBe(project.id);
      const review = await as(developer).post('/environments', { name: 'review/Feature 1' });
      expect(review.status).toBe(201);
      expect(review.body.slug).toMatch(/^review-feature-1-[a-z0-9]{6}$/);
      expect(review.body.external_url).toBeNull();
    });

    it('400 with 8.17 model messages: taken name, bad name, bad URL; blank URL is no URL', async () => {
      const taken = await as(developer).post('/environments', { name: 'production' });
      expect(taken.status).toBe(400);
      expect(taken.body).toEqual({ message: { name: ['has already been taken'] } });
      const bad = await as(developer).post('/environments', { name: 'a<b>', external_url: 'test.gitlab.com' });
      expect(bad.status).toBe(400);
      expect(bad.body).toEqual({ message: { name: [NAME_MESSAGE], external_url: ['must be a valid URL'] } });
      const blank = await as(developer).post('/environments', { name: '' });
      expect(blank.status).toBe(400);
      expect(blank.body.message.name).toEqual(["can't be blank", NAME_MESSAGE]);
      const url = await as(developer).post('/environments', { name: 'staging', external_url: 'https://prod.example.com' });
      expect(url.body).toEqual({ message: { external_url: ['has already been taken'] } });
      const long = await as(developer).post('/environments', { name: 'x'.repeat(256) });
      expect(long.body).toEqual({ message: { name: ['is too long (maximum is 255 characters)'] } });
      const ok = await as(developer).post('/environments', { name: 'staging', external_url: '' });
      expect(ok.status).toBe(201);
      expect(ok.body.external_url).toBeNull();
    });

    it("400 without name, and for any slug (Grape's error body), before the project is looked up", async () => {
      const missing = await as(developer).post('/environments', { external_url: 'https://x.example.com' });
      expect(missing.status).toBe(400);
      expect(missing.body).toEqual({ message: '400 (Bad request) "name" not given' });
      const slug = await as(developer).post('/environments', { name: 'foo', slug: 'foo' });
      expect(slug.status).toBe(400);
      expect(slug.body).toEqual(SLUG_ERROR);
    });

    it('401 without a token, 403 for a reporter, 404 for a stranger', async () => {
      expect((await t.http.post(api('/environments')).send({ name: 'x' })).status).toBe(401);
      const r = await as(reporter).post('/environments', { name: 'x' });
      expect(r.status).toBe(403);
      expect(r.body).toEqual({ message: '403 Forbidden' });
      const s = await as(stranger).post('/environments', { name: 'x' });
      expect(s.status).toBe(404);
      expect(s.body).toEqual({ message: '404 Project Not Found' });
    });
  });

  describe('GET /projects/:id/environments', () => {
    it('200 for a reporter, paginated, by id', async () => {
      const res = await as(reporter).get('/environments');
      expect(res.status).toBe(200);
      await expectSchema(res, 'Environment[]');
      expect(res.body.map((e: Json) => e.name)).toEqual(['production', 'review/Feature 1', 'staging']);
      expect(res.headers['x-total']).toBe('3');
      const page = await as(reporter).get('/environments?per_page=1&page=2');
      expect(page.body.map((e: Json) => e.name)).toEqual(['review/Feature 1']);
      expect(page.headers['x-total-pages']).toBe('3');
    });

    it('401 without a token, 403 for a guest, 404 for a stranger', async () => {
      expect((await t.http.get(api('/environments'))).status).toBe(401);
      expect((await as(guest).get('/environments')).status).toBe(403);
      expect((await as(stranger).get('/environments')).status).toBe(404);
    });

    it('403 on a public project for a non-member (8.17 gives read_environment to reporters only), and when builds are disabled', async () => {
      const pub = await c.project(owner, null, { visibility_level: 20 });
      expect((await t.http.get(`/api/v3/projects/${pub.id}/environments`).set('PRIVATE-TOKEN', stranger.token)).status).toBe(403);
      const off = await c.project(owner, null, { builds_enabled: false });
      expect((await t.http.get(`/api/v3/projects/${off.id}/environments`).set('PRIVATE-TOKEN', owner.token)).status).toBe(403);
    });
  });

  describe('PUT /projects/:id/environments/:environment_id', () => {
    let id: number;
    let slug: string;
    beforeAll(async () => {
      const res = await as(master).post('/environments', { name: 'renamed-later', external_url: 'https://old.example.com' });
      id = res.body.id;
      slug = res.body.slug;
    });

    it('200 for a master: name and URL change, the slug stays', async () => {
      const res = await as(master).put(`/environments/${id}`, { name: 'Mepmep', external_url: 'https://mepmep.example.com' });
      expect(res.status).toBe(200);
      await expectSchema(res, 'Environment');
      expect(res.body).toMatchObject({ id, name: 'Mepmep', slug, external_url: 'https://mepmep.example.com' });
    });

    it('only the name given: the URL stays', async () => {
      const res = await as(master).put(`/environments/${id}`, { name: 'Mepmep2' });
      expect(res.body).toMatchObject({ name: 'Mepmep2', external_url: 'https://mepmep.example.com', slug });
    });

    it('400: a slug, a taken name, a bad URL', async () => {
      expect((await as(master).put(`/environments/${id}`, { slug: `${slug}-foo` })).body).toEqual(SLUG_ERROR);
      const taken = await as(master).put(`/environments/${id}`, { name: 'production' });
      expect(taken.status).toBe(400);
      expect(taken.body).toEqual({ message: { name: ['has already been taken'] } });
      const url = await as(master).put(`/environments/${id}`, { external_url: 'javascript:alert(1)' });
      expect(url.body).toEqual({ message: { external_url: ['must be a valid URL'] } });
    });

    it('404 Not found for an unknown environment or one of another project; 403 for a developer; 401; 404 for a stranger', async () => {
      const unknown = await as(master).put('/environments/12345', { name: 'x' });
      expect(unknown.status).toBe(404);
      expect(unknown.body).toEqual({ message: '404 Not found' });
      const other = await c.project(master, null);
      const theirs = await t.http.post(`/api/v3/projects/${other.id}/environments`).set('PRIVATE-TOKEN', master.token).send({ name: 'elsewhere' });
      expect((await as(master).put(`/environments/${theirs.body.id}`, { name: 'x' })).status).toBe(404);
      expect((await as(developer).put(`/environments/${id}`, { name: 'x' })).status).toBe(403);
      expect((await t.http.put(api(`/environments/${id}`)).send({ name: 'x' })).status).toBe(401);
      expect((await as(stranger).put(`/environments/${id}`, { name: 'x' })).status).toBe(404);
    });
  });

  describe('DELETE /projects/:id/environments/:environment_id', () => {
    it('403 for a developer, 200 for a master (the environment as it was), then 404 Not found', async () => {
      const made = await as(developer).post('/environments', { name: 'doomed' });
      expect((await as(developer).del(`/environments/${made.body.id}`)).status).toBe(403);
      expect((await as(stranger).del(`/environments/${made.body.id}`)).status).toBe(404);
      expect((await t.http.delete(api(`/environments/${made.body.id}`))).status).toBe(401);
      const res = await as(master).del(`/environments/${made.body.id}`);
      expect(res.status).toBe(200);
      await expectSchema(res, 'Environment');
      expect(res.body).toMatchObject({ id: made.body.id, name: 'doomed' });
      const again = await as(master).del(`/environments/${made.body.id}`);
      expect(again.status).toBe(404);
      expect(again.body).toEqual({ message: '404 Not found' });
    });
  });

  describe('deployments from a pipeline run through the runner API', () => {
    let p: Awaited<ReturnType<ReturnType<typeof ci>['project']>>;
    let runner: { id: number; token: string };
    const ciApi = (path: string) => `/api/v3/projects/${p.id}${path}`;

    /** Claims the next build and ends it with `state`; returns the payload. */
    async function run(state = 'success'): Promise<Json> {
      const claimed = await c.api.requestBuild(runner.token);
      expect(claimed.status).toBe(201);
      const done = await c.api.update(claimed.body.id, { token: runner.token, state, trace: `ran ${claimed.body.name}\n` });
      expect(done.status).toBe(200);
      return claimed.body;
    }
    const deploymentOf = (buildId: number) =>
      waitFor(async () => (await t.sql<Json>(`SELECT * FROM deployments WHERE deployable_id = $1`, [buildId]))[0], `deployment of ${buildId}`);
    const envNamed = async (name: string) => (await t.sql<Json>(`SELECT * FROM environments WHERE project_id = $1 AND name = $2`, [p.id, name]))[0];

    beforeAll(async () => {
      p = await c.project(owner, YML);
      await t.http.post(`/api/v3/projects/${p.id}/members`).set('PRIVATE-TOKEN', owner.token).send({ user_id: reporter.id, access_level: 20 }).expect(201);
      await t.http.post(`/api/v3/projects/${p.id}/members`).set('PRIVATE-TOKEN', owner.token).send({ user_id: guest.id, access_level: 10 }).expect(201);
      runner = await c.registerRunner({ token: p.runnersToken });
    });

    it("the environments of a pipeline's builds exist from its creation, before any build ran (8.17's CreatePipelineBuildsService)", async () => {
      const env = await waitFor(async () => (await envNamed('plain/master')) && (await envNamed('review/master')), 'environments of the pipeline');
      expect(env).toMatchObject({ state: 'available', external_url: null });
      expect(env.slug).toMatch(/^review-master-[a-z0-9]{6}$/);
      expect(await envNamed('plain/master')).toBeDefined();
      expect(await t.sql(`SELECT id FROM deployments WHERE project_id = $1`, [p.id])).toEqual([]);
    });

    it('a successful build with an environment records a deployment (iid 1), expands the name and URL, sets the environment URL, keeps its slug', async () => {
      const slugBefore = (await envNamed('review/master')).slug;
      const first = await run();
      const second = await run();
      const byName = new Map([first, second].map((b) => [b.name, b]));
      expect([...byName.keys()].sort()).toEqual(['deploy_plain', 'deploy_review']);
      const review = byName.get('deploy_review')!;
      const d = await deploymentOf(review.id);
      await deploymentOf(byName.get('deploy_plain')!.id);
      expect(d).toMatchObject({ ref: 'master', sha: p.sha, tag: false, user_id: owner.id, on_stop: 'stop_review' });
      const env = await envNamed('review/master');
      expect(env).toMatchObject({ state: 'available', external_url: 'https://master.review.example.com' });
      expect(env.slug).toBe(slugBefore);
      expect(d.environment_id).toBe(env.id);
      // 8.17's persisted_environment.predefined_variables in the payload (no CI_ENVIRONMENT_URL in 8.17)
      const vars = new Map<string, string>(review.variables.map((v: Json) => [v.key, v.value]));
      expect(vars.get('CI_ENVIRONMENT_NAME')).toBe('review/master');
      expect(vars.get('CI_ENVIRONMENT_SLUG')).toBe(env.slug);
      expect(vars.has('CI_ENVIRONMENT_URL')).toBe(false);
      expect(review.variables.slice(-2).map((v: Json) => v.key)).toEqual(['CI_ENVIRONMENT_NAME', 'CI_ENVIRONMENT_SLUG']);
      expect((await envNamed('plain/master')).external_url).toBeNull();

      const list = await t.http.get(ciApi('/deployments')).set('PRIVATE-TOKEN', reporter.token);
      expect(list.status).toBe(200);
      await expectSchema(list, 'Deployment[]');
      expect(list.body.map((x: Json) => x.iid).sort()).toEqual([1, 2]);
      const shown = await t.http.get(ciApi(`/deployments/${d.id}`)).set('PRIVATE-TOKEN', reporter.token);
      expect(shown.status).toBe(200);
      await expectSchema(shown, 'Deployment');
      expect(Object.keys(shown.body)).toEqual(['id', 'iid', 'ref', 'sha', 'created_at', 'user', 'environment', 'deployable']);
      expect(shown.body).toMatchObject({
        id: d.id,
        iid: d.iid,
        ref: 'master',
        sha: p.sha,
        user: { id: owner.id, username: owner.username },
        environment: { id: env.id, name: 'review/master', slug: env.slug, external_url: 'https://master.review.example.com' },
        deployable: { id: review.id, name: 'deploy_review', status: 'success', ref: 'master', commit: { id: p.sha }, runner: { id: runner.id } },
      });
      expect(Object.keys(shown.body.environment)).toEqual(['id', 'name', 'slug', 'external_url']);
    });

    it("the lists cost the same for 1 and 100 rows: at most 4 statements with authentication (deployments 5: their builds' users, as query-counts)", async () => {
      const count = (path: string) => countQueries(t, () => t.http.get(ciApi(path)).set('PRIVATE-TOKEN', owner.token).expect(200));
      await count('/deployments');
      for (const path of ['/deployments', '/environments']) {
        const [one, all] = [await count(`${path}?per_page=1`), await count(`${path}?per_page=100`)];
        expect(one).toBe(all);
        expect(all).toBeLessThanOrEqual(path === '/deployments' ? 5 : 4);
      }
    });

    it('deployments: 401, 403 for a guest, 404 for a stranger, 404 Not found for an unknown id, paginated', async () => {
      expect((await t.http.get(ciApi('/deployments'))).status).toBe(401);
      expect((await t.http.get(ciApi('/deployments')).set('PRIVATE-TOKEN', guest.token)).status).toBe(403);
      expect((await t.http.get(ciApi('/deployments/1')).set('PRIVATE-TOKEN', guest.token)).status).toBe(403);
      expect((await t.http.get(ciApi('/deployments')).set('PRIVATE-TOKEN', stranger.token)).status).toBe(404);
      const unknown = await t.http.get(ciApi('/deployments/999999')).set('PRIVATE-TOKEN', owner.token);
      expect(unknown.status).toBe(404);
      expect(unknown.body).toEqual({ message: '404 Not found' });
      const page = await t.http.get(ciApi('/deployments?per_page=1')).set('PRIVATE-TOKEN', owner.token);
      expect(page.body).toHaveLength(1);
      expect(page.headers['x-total']).toBe('2');
    });

    it('deleting a branch stops the environments last deployed from it, playing their on_stop action; one without a stop action is only marked stopped', async () => {
      await t.http.post(ciApi('/repository/branches')).set('PRIVATE-TOKEN', owner.token).send({ branch_name: 'feature', ref: 'master' }).expect(201);
      await waitFor(async () => (await c.pipelines(p.id)).length === 2, 'feature pipeline');
      const built = [await run(), await run()];
      for (const b of built) await deploymentOf(b.id);
      expect((await envNamed('review/feature')).state).toBe('available');
      const stopBuild = (await c.builds(p.id)).find((b) => b.name === 'stop_review' && b.ref === 'feature')!;
      expect(stopBuild.status).toBe('manual');

      await t.http.delete(ciApi('/repository/branches/feature')).set('PRIVATE-TOKEN', owner.token).expect(200);
      await waitFor(async () => (await envNamed('review/feature')).state === 'stopped', 'review/feature stopped');
      await waitFor(async () => (await envNamed('plain/feature')).state === 'stopped', 'plain/feature stopped');
      expect((await envNamed('review/master')).state).toBe('available');
      const played = await waitFor(async () => (await c.builds(p.id)).find((b) => b.id === stopBuild.id && b.status === 'pending'), 'stop action pending');
      expect(played.name).toBe('stop_review');
      const [{ user_id }] = await t.sql<Json>(`SELECT user_id FROM ci_builds WHERE id = $1`, [stopBuild.id]);
      expect(user_id).toBe(owner.id);

      // the stop action runs and succeeds: the environment stays stopped, no deployment is recorded
      const stop = await run();
      expect(stop.id).toBe(stopBuild.id);
      await new Promise((r) => setTimeout(r, 500));
      expect(await t.sql(`SELECT id FROM deployments WHERE deployable_id = $1`, [stop.id])).toEqual([]);
      expect((await envNamed('review/feature')).state).toBe('stopped');
    });

    it('a stop action played on an available environment stops it when it succeeds (POST .../builds/:id/play)', async () => {
      const stopMaster = (await c.builds(p.id)).find((b) => b.name === 'stop_review' && b.ref === 'master')!;
      const played = await t.http.post(ciApi(`/builds/${stopMaster.id}/play`)).set('PRIVATE-TOKEN', owner.token);
      expect(played.status).toBe(200);
      const ran = await run();
      expect(ran.id).toBe(stopMaster.id);
      await waitFor(async () => (await envNamed('review/master')).state === 'stopped', 'review/master stopped');
    });

    it('a new deployment to a stopped environment makes it available again (8.17: start)', async () => {
      await t.http.post(ciApi('/repository/branches')).set('PRIVATE-TOKEN', owner.token).send({ branch_name: 'feature', ref: 'master' }).expect(201);
      await waitFor(async () => (await c.pipelines(p.id)).length === 3, 'the second feature pipeline');
      const built = [await run(), await run()];
      const review = built.find((b) => b.name === 'deploy_review')!;
      const d = await deploymentOf(review.id);
      await deploymentOf(built.find((b) => b.name === 'deploy_plain')!.id);
      const env = await envNamed('review/feature');
      expect(env.state).toBe('available');
      expect(d).toMatchObject({ environment_id: env.id, ref: 'feature' });
      expect((await t.sql<Json>(`SELECT max(iid) AS iid FROM deployments WHERE project_id = $1`, [p.id]))[0].iid).toBe(6);
    });

    it('environments and deployments go with their project', async () => {
      const gone = await c.project(owner, YML);
      await t.http.post(`/api/v3/projects/${gone.id}/environments`).set('PRIVATE-TOKEN', owner.token).send({ name: 'x' }).expect(201);
      await t.http.delete(`/api/v3/projects/${gone.id}`).set('PRIVATE-TOKEN', owner.token).expect(200);
      await waitFor(
        async () => (await t.sql<Json>(`SELECT count(*)::int AS n FROM environments WHERE project_id = $1`, [gone.id]))[0].n === 0,
        'environments removed',
      );
    });
  });
});
