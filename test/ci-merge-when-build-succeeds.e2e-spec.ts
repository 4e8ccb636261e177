import { ci, Json, waitFor } from './helpers/ci';
import { startTestApp, TestApp, TestUser } from './helpers/test-app';

const YML = `
test:
  script: ["make test"]
`;

/**
 * Merge when the build succeeds, end to end: the MR waits for the pipeline of its source head; a
 * runner claims the build through the runner API and reports success, and the MR is merged with the
 * stored parameters by the user who asked. A failed build keeps it open.
 */
describe('merge when the build succeeds, driven by a real pipeline', () => {
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

  async function mrWithPipeline(branch: string): Promise<{ project: number; iid: number; id: number; sourceSha: string }> {
    const p = await c.project(owner, YML);
    await t.http
      .post(`/api/v3/projects/${p.id}/repository/branches`)
      .set('PRIVATE-TOKEN', owner.token)
      .send({ branch_name: branch, ref: 'master' })
      .expect(201);
    await t.http
      .post(`/api/v3/projects/${p.id}/repository/files`)
      .set('PRIVATE-TOKEN', owner.token)
      .send({ file_path: `${branch}.txt`, branch_name: branch, content: 'feature\n', commit_message: `add ${branch}` })
      .expect(201);
    const head = await t.http.get(`/api/v3/projects/${p.id}/repository/commits/${branch}`).set('PRIVATE-TOKEN', owner.token).expect(200);
    const mr = await t.http
      .post(`/api/v3/projects/${p.id}/merge_requests`)
      .set('PRIVATE-TOKEN', owner.token)
      .send({ source_branch: branch, target_branch: 'master', title: `feature ${branch}` })
      .expect(201);
    // the pipeline of the source head exists and is pending
    await waitFor(async () => (await c.pipelines(p.id)).find((pl: Json) => pl.sha === head.body.id && pl.status === 'pending'), 'source pipeline');
    return { project: p.id, iid: mr.body.iid, id: mr.body.id, sourceSha: head.body.id };
  }

  async function runBuildOf(sha: string, state: 'success' | 'failed') {
    const claimed = await waitFor(async () => {
      const res = await c.api.requestBuild(runner.token);
      return res.status === 201 && res.body.sha === sha ? res.body : undefined;
    }, 'build for the source head');
    await c.api.update(claimed.id, { token: runner.token, state: 'running', trace: 'running\n' }).expect(200);
    await c.api.update(claimed.id, { token: runner.token, state, trace: `done: ${state}\n` }).expect(200);
  }

  it('merges once the source head pipeline succeeds, with the stored parameters, by the user who asked', async () => {
    // drain the master pipelines' builds so that the runner's next claim is the source head's
    const m = await mrWithPipeline('feature-ok');
    const mrUrl = `/api/v3/projects/${m.project}/merge_requests/${m.id}`;
    const waiting = await t.http
      .put(`${mrUrl}/merge`)
      .set('PRIVATE-TOKEN', owner.token)
      .send({ merge_when_build_succeeds: true, merge_commit_message: 'Merged after green CI', should_remove_source_branch: true })
      .expect(200);
    expect(waiting.body.state).toBe('opened');
    expect(waiting.body.merge_when_build_succeeds).toBe(true);
    await runBuildOf(m.sourceSha, 'success');
    const merged = await waitFor(async () => {
      const res = await t.http.get(mrUrl).set('PRIVATE-TOKEN', owner.token).expect(200);
      return res.body.state === 'merged' ? res.body : undefined;
    }, 'merged');
    expect(merged.merge_when_build_succeeds).toBe(false);
    const master = await t.http.get(`/api/v3/projects/${m.project}/repository/commits/master`).set('PRIVATE-TOKEN', owner.token).expect(200);
    expect(master.body.message).toContain('Merged after green CI');
    expect(master.body.parent_ids).toContain(m.sourceSha);
    expect(master.body.author_email).toBe(owner.email);
    // the source branch was removed as asked
    await t.http.get(`/api/v3/projects/${m.project}/repository/branches/feature-ok`).set('PRIVATE-TOKEN', owner.token).expect(404);
  });

  it('a failed build keeps the merge request open', async () => {
    const m = await mrWithPipeline('feature-red');
    const mrUrl = `/api/v3/projects/${m.project}/merge_requests/${m.id}`;
    await t.http.put(`${mrUrl}/merge`).set('PRIVATE-TOKEN', owner.token).send({ merge_when_build_succeeds: true }).expect(200);
    await runBuildOf(m.sourceSha, 'failed');
    await waitFor(async () => (await c.pipelines(m.project)).find((pl: Json) => pl.sha === m.sourceSha && pl.status === 'failed'), 'failed pipeline');
    const res = await t.http.get(mrUrl).set('PRIVATE-TOKEN', owner.token).expect(200);
    expect(res.body.state).toBe('opened');
  });
});
