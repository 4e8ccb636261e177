import { ci, waitFor } from './helpers/ci';
import { API, Json } from './helpers/planning';
import { startTestApp, TestApp, TestUser } from './helpers/test-app';

const YML = 'test:\n  script: echo ok\n';

/**
 * Merge when the build succeeds with real CI: a pipeline from `.gitlab-ci.yml` on the merge request's
 * source head, its build claimed and finished through the runner API (as gitlab-ci-multi-runner 1.3.5
 * does); the pipeline's outcome merges the merge request, a failed build keeps it open.
 */
describe('merge requests and CI pipelines', () => {
  let t: TestApp;
  let c: ReturnType<typeof ci>;
  let owner: TestUser;
  let runner: { id: number; token: string };

  beforeAll(async () => {
    t = await startTestApp();
    c = ci(t);
    owner = await t.createUser();
    runner = await c.registerRunner();
  });
  afterAll(() => t.close());

  const as = (req: ReturnType<TestApp['http']['get']>) => req.set('PRIVATE-TOKEN', owner.token);

  /** A project with CI, a `feature` branch one commit ahead of master, and an MR from it. */
  async function setup(): Promise<{ p: Json; mr: Json; sha: string }> {
    const p = await c.project(owner, YML);
    const P = `${API}/projects/${p.id}`;
    await as(t.http.post(`${P}/repository/branches`)).send({ branch_name: 'feature', ref: 'master' }).expect(201);
    await as(t.http.post(`${P}/repository/files`))
      .send({ file_path: 'feature.txt', branch_name: 'feature', content: 'feature', commit_message: 'Feature' })
      .expect(201);
    const sha = (await as(t.http.get(`${P}/repository/commits/feature`)).expect(200)).body.id as string;
    await waitFor(async () => (await c.pipelines(p.id)).find((pl) => pl.sha === sha), 'feature pipeline');
    const mr = (await as(t.http.post(`${P}/merge_requests`)).send({ source_branch: 'feature', target_branch: 'master', title: 'CI' }).expect(201)).body;
    return { p, mr, sha };
  }

  /** Claims builds until the one of `sha` comes; others are finished as successes. */
  async function claim(sha: string): Promise<Json> {
    for (let i = 0; i < 20; i++) {
      const res = await c.api.requestBuild(runner.token);
      if (res.status !== 201) throw new Error(`no build for ${sha}: ${res.status}`);
      if (res.body.sha === sha) return res.body;
      await c.api.update(res.body.id, { token: runner.token, state: 'success' }).expect(200);
    }
    throw new Error(`no build for ${sha}`);
  }

  it('merges when the pipeline of the source head succeeds', async () => {
    const { p, mr, sha } = await setup();
    const M = `${API}/projects/${p.id}/merge_requests/${mr.id}`;
    const waiting = await as(t.http.put(`${M}/merge`)).send({ merge_when_build_succeeds: true }).expect(200);
    expect(waiting.body).toMatchObject({ state: 'opened', merge_when_build_succeeds: true });
    const build = await claim(sha);
    await c.api.update(build.id, { token: runner.token, state: 'running' }).expect(200);
    expect((await as(t.http.get(M)).expect(200)).body.state).toBe('opened');
    await c.api.update(build.id, { token: runner.token, state: 'success' }).expect(200);
    const merged = await waitFor(async () => {
      const got = (await as(t.http.get(M)).expect(200)).body;
      return got.state === 'merged' ? got : undefined;
    }, 'merged');
    expect(merged.merge_when_build_succeeds).toBe(false);
  });

  it('keeps the merge request open when the build fails', async () => {
    const { p, mr, sha } = await setup();
    const M = `${API}/projects/${p.id}/merge_requests/${mr.id}`;
    await as(t.http.put(`${M}/merge`)).send({ merge_when_build_succeeds: true }).expect(200);
    const build = await claim(sha);
    await c.api.update(build.id, { token: runner.token, state: 'failed' }).expect(200);
    await waitFor(async () => (await c.pipelines(p.id)).find((pl) => pl.sha === sha && pl.status === 'failed'), 'failed pipeline');
    await new Promise((r) => setTimeout(r, 300));
    expect((await as(t.http.get(M)).expect(200)).body).toMatchObject({ state: 'opened', merge_when_build_succeeds: true });
  });
});
