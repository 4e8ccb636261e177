import { ci, waitFor } from './helpers/ci';
import { HookReceiver } from './helpers/hook-receiver';
import { startTestApp, TestApp, TestUser } from './helpers/test-app';

/** Merge request and build events reach project webhooks with GitLab 8.8's payloads and headers. */
describe('project webhooks: merge request and build events', () => {
  let t: TestApp;
  let rx: HookReceiver;
  let owner: TestUser;
  let c: ReturnType<typeof ci>;

  beforeAll(async () => {
    t = await startTestApp({ QUEUE_POLL_SECONDS: '0.5' });
    rx = await HookReceiver.start();
    c = ci(t);
    owner = await t.createUser();
    await t.http
      .put('/api/v3/application/settings')
      .set('PRIVATE-TOKEN', t.root.token)
      .send({ allow_local_requests_from_hooks_and_services: true })
      .expect(200);
  });
  afterAll(async () => {
    await t.close();
    await rx.close();
  });

  it('Merge Request Hook on open, update and merge', async () => {
    const p = await c.project(owner, null);
    await t.http
      .post(`/api/v3/projects/${p.id}/hooks`)
      .set('PRIVATE-TOKEN', owner.token)
      .send({ url: rx.url('/mr'), push_events: false, merge_requests_events: true, token: 'mr-secret' })
      .expect(201);
    await t.http
      .post(`/api/v3/projects/${p.id}/repository/branches`)
      .set('PRIVATE-TOKEN', owner.token)
      .send({ branch_name: 'topic', ref: 'master' })
      .expect(201);
    await t.http
      .post(`/api/v3/projects/${p.id}/repository/files`)
      .set('PRIVATE-TOKEN', owner.token)
      .send({ file_path: 'topic.txt', branch_name: 'topic', content: 'x\n', commit_message: 'topic' })
      .expect(201);
    const mr = await t.http
      .post(`/api/v3/projects/${p.id}/merge_requests`)
      .set('PRIVATE-TOKEN', owner.token)
      .send({ source_branch: 'topic', target_branch: 'master', title: 'WIP: hooked' })
      .expect(201);
    await t.http.put(`/api/v3/projects/${p.id}/merge_requests/${mr.body.id}`).set('PRIVATE-TOKEN', owner.token).send({ title: 'hooked' }).expect(200);
    await t.http.put(`/api/v3/projects/${p.id}/merge_requests/${mr.body.id}/merge`).set('PRIVATE-TOKEN', owner.token).send({}).expect(200);
    const got = await rx.waitFor('/mr', 3);
    const actions = got.map((r) => r.body.object_attributes.action);
    expect(actions.sort()).toEqual(['merge', 'open', 'update']);
    const open = got.find((r) => r.body.object_attributes.action === 'open')!;
    expect(open.headers['x-gitlab-event']).toBe('Merge Request Hook');
    expect(open.headers['x-gitlab-token']).toBe('mr-secret');
    expect(open.body).toMatchObject({
      object_kind: 'merge_request',
      user: { username: owner.username },
      object_attributes: {
        id: mr.body.id,
        iid: mr.body.iid,
        source_branch: 'topic',
        target_branch: 'master',
        state: 'opened',
        work_in_progress: true,
        target_project_id: p.id,
      },
    });
    const merged = got.find((r) => r.body.object_attributes.action === 'merge')!;
    expect(merged.body.object_attributes.state).toBe('merged');
  });

  it("Build Hook when a build finishes, with GitLab 8.8's build data", async () => {
    const runner = await c.registerRunner();
    const p = await c.project(owner, 'unit:\n  script: ["make test"]\n');
    await t.http
      .post(`/api/v3/projects/${p.id}/hooks`)
      .set('PRIVATE-TOKEN', owner.token)
      .send({ url: rx.url('/build'), push_events: false, build_events: true })
      .expect(201);
    const claimed = await waitFor(async () => {
      const res = await c.api.requestBuild(runner.token);
      return res.status === 201 && res.body.sha === p.sha ? res.body : undefined;
    }, 'claimed build');
    await c.api.update(claimed.id, { token: runner.token, state: 'success', trace: 'ok\n' }).expect(200);
    const [got] = await rx.waitFor('/build', 1);
    expect(got.headers['x-gitlab-event']).toBe('Build Hook');
    expect(got.body).toMatchObject({
      object_kind: 'build',
      ref: 'master',
      sha: p.sha,
      build_id: claimed.id,
      build_name: 'unit',
      build_stage: 'test',
      build_status: 'success',
      project_id: p.id,
      commit: { sha: p.sha, message: 'add ci' },
    });
  });
});
