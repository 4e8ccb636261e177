import type { Test } from 'supertest';
import { ci } from './helpers/ci';
import { startTestApp, TestApp, TestUser } from './helpers/test-app';

const API = '/api/v3';

/**
 * Go clients of the v3 era send the JSON body `null` (Content-Type: application/json) on every write
 * without options; GitLab 8 (Grape) read any JSON body that is not an object as no parameters.
 * Invalid JSON stays a 400.
 */
describe('JSON bodies that are not objects (null, arrays, scalars) are no parameters', () => {
  let t: TestApp;
  let c: ReturnType<typeof ci>;
  let owner: TestUser;
  const as = (u: TestUser) => ({ 'PRIVATE-TOKEN': u.token });
  const json = (r: Test, u: TestUser, body = 'null') => r.set(as(u)).set('Content-Type', 'application/json').send(body);

  beforeAll(async () => {
    t = await startTestApp();
    c = ci(t);
    owner = await t.createUser();
  });
  afterAll(() => t.close());

  it('block and unblock a user', async () => {
    const u = await t.createUser();
    expect((await json(t.http.put(`${API}/users/${u.id}/block`), t.root)).status).toBe(200);
    expect((await t.http.get(`${API}/users/${u.id}`).set(as(t.root))).body.state).toBe('blocked');
    expect((await json(t.http.put(`${API}/users/${u.id}/unblock`), t.root)).status).toBe(200);
    expect((await t.http.get(`${API}/users/${u.id}`).set(as(t.root))).body.state).toBe('active');
  });

  it('fork, archive and unarchive a project', async () => {
    const p = await c.project(owner, null);
    const other = await t.createUser();
    await t.http.post(`${API}/projects/${p.id}/members`).set(as(owner)).send({ user_id: other.id, access_level: 20 }).expect(201);
    const fork = await json(t.http.post(`${API}/projects/fork/${p.id}`), other);
    expect(fork.status).toBe(201);
    expect(fork.body.forked_from_project.id).toBe(p.id);
    const archived = await json(t.http.post(`${API}/projects/${p.id}/archive`), owner);
    expect(archived.status).toBe(201);
    expect(archived.body.archived).toBe(true);
    const unarchived = await json(t.http.post(`${API}/projects/${p.id}/unarchive`), owner);
    expect(unarchived.status).toBe(201);
    expect(unarchived.body.archived).toBe(false);
  });

  it('protect and unprotect a branch', async () => {
    const p = await c.project(owner, null);
    const prot = await json(t.http.put(`${API}/projects/${p.id}/repository/branches/master/protect`), owner);
    expect([prot.status, prot.body.protected]).toEqual([200, true]);
    const unprot = await json(t.http.put(`${API}/projects/${p.id}/repository/branches/master/unprotect`), owner);
    expect([unprot.status, unprot.body.protected]).toEqual([200, false]);
  });

  it('create a trigger', async () => {
    const p = await c.project(owner, null);
    const res = await json(t.http.post(`${API}/projects/${p.id}/triggers`), owner);
    expect(res.status).toBe(201);
    expect(res.body.token).toEqual(expect.any(String));
  });

  it('cancel, retry and erase a build', async () => {
    const p = await c.project(owner, 'job:\n  script: x\n');
    const [build] = await c.builds(p.id);
    const cancel = await json(t.http.post(`${API}/projects/${p.id}/builds/${build.id}/cancel`), owner);
    expect([cancel.status, cancel.body.status]).toEqual([201, 'canceled']);
    const retry = await json(t.http.post(`${API}/projects/${p.id}/builds/${build.id}/retry`), owner);
    expect([retry.status, retry.body.status]).toEqual([201, 'pending']);
    // erasable: a finished build with a trace (run by a runner)
    const runner = await c.registerRunner();
    const run = (await c.api.requestBuild(runner.token).expect(201)).body;
    expect(run.id).toBe(retry.body.id);
    await c.api.patchTrace(run.id, run.token, 0, 'output').expect(202);
    await c.api.update(run.id, { token: runner.token, state: 'failed' }).expect(200);
    const erase = await json(t.http.post(`${API}/projects/${p.id}/builds/${run.id}/erase`), owner);
    expect(erase.status).toBe(201);
    expect(erase.body.erased_at).not.toBeNull();
  });

  it('accept a merge request', async () => {
    const p = await c.project(owner, null);
    await t.http.post(`${API}/projects/${p.id}/repository/branches`).set(as(owner)).send({ branch_name: 'feature', ref: 'master' }).expect(201);
    await t.http
      .post(`${API}/projects/${p.id}/repository/files`)
      .set(as(owner))
      .send({ file_path: 'feature.txt', branch_name: 'feature', content: 'f', commit_message: 'feature' })
      .expect(201);
    const mr = await t.http
      .post(`${API}/projects/${p.id}/merge_requests`)
      .set(as(owner))
      .send({ source_branch: 'feature', target_branch: 'master', title: 'F' })
      .expect(201);
    const merged = await json(t.http.put(`${API}/projects/${p.id}/merge_requests/${mr.body.id}/merge`), owner);
    expect([merged.status, merged.body.state]).toEqual([200, 'merged']);
  });

  it('arrays, strings, numbers and booleans are no parameters either; invalid JSON is still 400', async () => {
    for (const body of ['null', '[]', '[1,2]', '"x"', '1', 'true', ' null ']) {
      const u = await t.createUser();
      const res = await json(t.http.put(`${API}/users/${u.id}/block`), t.root, body);
      expect([body, res.status]).toEqual([body, 200]);
      // a create that needs parameters: the missing one is named, as with an empty body
      const issue = await json(t.http.post(`${API}/projects/fork/999999`), t.root, body);
      expect([body, issue.status]).toEqual([body, 404]);
    }
    const p = await c.project(owner, null);
    for (const body of ['null', '[]', '"title"', '7']) {
      const res = await json(t.http.post(`${API}/projects/${p.id}/issues`), owner, body);
      expect([body, res.status, res.body]).toEqual([body, 400, { message: '400 (Bad request) "title" not given' }]);
    }
    for (const body of ['nul', '{"a":', "{'a':1}", '[1,']) {
      const res = await json(t.http.post(`${API}/projects/${p.id}/issues`), owner, body);
      expect([body, res.status, res.body]).toEqual([body, 400, { message: '400 Bad request - malformed JSON body' }]);
    }
  });

  it('the runner API reads a null JSON body as no parameters too', async () => {
    const res = await t.http.post('/ci/api/v1/runners/register').set('Content-Type', 'application/json').send('null');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ message: '400 (Bad request) "token" not given' });
  });
});
