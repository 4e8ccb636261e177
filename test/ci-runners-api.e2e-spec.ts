import { ci, Json } from './helpers/ci';
import { planning } from './helpers/planning';
import { expectSchema } from './helpers/schema';
import { startTestApp, TestApp } from './helpers/test-app';

describe('v3 runners API', () => {
  let t: TestApp;
  let c: ReturnType<typeof ci>;
  let pl: ReturnType<typeof planning>;
  let team: Awaited<ReturnType<ReturnType<typeof planning>['team']>>;
  let p1: number;
  let p2: number;
  let token1: string;
  let specific: { id: number; token: string };
  let shared: { id: number; token: string };

  const runnersTokenOf = async (pid: number) => (await pl.get(team.owner, `/projects/${pid}`).expect(200)).body.runners_token as string;
  const registerSpecific = async (pid: number, body: Json = {}) => {
    const res = await c.api.register({ token: await runnersTokenOf(pid), ...body });
    expect(res.status).toBe(201);
    return res.body as { id: number; token: string };
  };

  beforeAll(async () => {
    t = await startTestApp();
    c = ci(t);
    pl = planning(t);
    team = await pl.team();
    p1 = (await pl.project(team, 0)).id;
    p2 = (await pl.project(team, 0)).id;
    token1 = await runnersTokenOf(p1);
    specific = (await c.api.register({ token: token1, description: 'mine', tag_list: 'ruby, docker' })).body;
    shared = await c.registerRunner({ description: 'everyone' });
  }, 240_000);
  afterAll(() => t.close());

  it('GET /runners: the specific runners of projects the caller masters; scopes; 400 on unknown scope; 401', async () => {
    const mine = (await pl.get(team.master, '/runners').expect(200)).body;
    expect(mine).toEqual([{ id: specific.id, description: 'mine', active: true, is_shared: false, name: 'gitlab-ci-multi-runner' }]);
    expect((await pl.get(team.owner, '/runners').expect(200)).body.map((r: Json) => r.id)).toEqual([specific.id]);
    expect((await pl.get(team.developer, '/runners').expect(200)).body).toEqual([]);
    expect((await pl.get(team.master, '/runners?scope=active').expect(200)).body).toHaveLength(1);
    expect((await pl.get(team.master, '/runners?scope=paused').expect(200)).body).toEqual([]);
    expect((await pl.get(team.master, '/runners?scope=online').expect(200)).body).toEqual([]); // never contacted yet
    await t.sql(`UPDATE ci_runners SET contacted_at = now() - interval '4 minutes' WHERE id = $1`, [specific.id]);
    expect((await pl.get(team.master, '/runners?scope=online').expect(200)).body).toHaveLength(1);
    await t.sql(`UPDATE ci_runners SET contacted_at = now() - interval '6 minutes' WHERE id = $1`, [specific.id]);
    expect((await pl.get(team.master, '/runners?scope=online').expect(200)).body).toEqual([]);
    expect((await pl.get(team.master, '/runners?scope=shared').expect(400)).body).toEqual({ message: '400 Scope contains invalid value' });
    expect((await pl.get(team.master, '/runners?scope=bogus').expect(400)).body).toEqual({ message: '400 Scope contains invalid value' });
    await t.http.get('/api/v3/runners').expect(401);
  });

  it('GET /runners/all: admin only; specific and shared scopes; paginated in constant queries', async () => {
    expect((await pl.get(team.admin, '/runners/all').expect(200)).body.map((r: Json) => r.id)).toEqual([shared.id, specific.id]);
    expect((await pl.get(team.admin, '/runners/all?scope=shared').expect(200)).body.map((r: Json) => r.id)).toEqual([shared.id]);
    expect((await pl.get(team.admin, '/runners/all?scope=specific').expect(200)).body.map((r: Json) => r.id)).toEqual([specific.id]);
    expect((await pl.get(team.admin, '/runners/all?scope=nope').expect(400)).body).toEqual({ message: '400 Scope contains invalid value' });
    expect((await pl.get(team.master, '/runners/all')).status).toBe(403);
    await t.http.get('/api/v3/runners/all').expect(401);

    const page = await pl.get(team.admin, '/runners/all?per_page=1&page=2').expect(200);
    await expectSchema(page, 'Runner[]');
    expect(page.body.map((r: Json) => r.id)).toEqual([specific.id]);
    expect(page.headers['x-total']).toBe('2');
    const small = await pl.measure(() => pl.get(team.admin, '/runners/all?per_page=1').expect(200));
    for (let i = 0; i < 4; i++) await registerSpecific(p1);
    const big = await pl.measure(() => pl.get(team.admin, '/runners/all?per_page=100').expect(200));
    expect(big).toBe(small);
    const mineSmall = await pl.measure(() => pl.get(team.master, '/runners?per_page=1').expect(200));
    const mineBig = await pl.measure(() => pl.get(team.master, '/runners?per_page=100').expect(200));
    expect(mineBig).toBe(mineSmall);
  });

  it('GET /runners/:id: detail with token to masters of its projects and admins; shared visible to all without token; 403/404', async () => {
    const d = (await pl.get(team.master, `/runners/${specific.id}`).expect(200)).body;
    expect(d).toMatchObject({
      id: specific.id,
      description: 'mine',
      active: true,
      is_shared: false,
      name: 'gitlab-ci-multi-runner',
      tag_list: ['ruby', 'docker'],
      run_untagged: true,
      version: '1.3.5',
      revision: '3af07be',
      platform: 'linux',
      architecture: 'amd64',
      token: specific.token,
    });
    expect(d.contacted_at).toMatch(/Z$/);
    expect(d.projects).toEqual([
      {
        id: p1,
        name: expect.any(String),
        name_with_namespace: expect.stringMatching(/^owner \d+ \/ plan-/),
        path: expect.any(String),
        path_with_namespace: expect.stringMatching(/^owner\d+\/plan-/),
      },
    ]);
    const s = (await pl.get(team.developer, `/runners/${shared.id}`).expect(200)).body;
    expect(s.is_shared).toBe(true);
    expect(s).not.toHaveProperty('token');
    expect((await pl.get(team.admin, `/runners/${shared.id}`).expect(200)).body.token).toBe(shared.token);
    expect((await pl.get(team.developer, `/runners/${specific.id}`).expect(403)).body).toEqual({ message: '403 Forbidden - No access granted' });
    expect((await pl.get(team.stranger, `/runners/${specific.id}`).expect(403)).body).toEqual({ message: '403 Forbidden - No access granted' });
    expect((await pl.get(team.master, '/runners/999999').expect(404)).body).toEqual({ message: '404 Not found' });
    await pl.get(team.master, '/runners/abc').expect(404);
    await t.http.get(`/api/v3/runners/${specific.id}`).expect(401);
  });

  it('PUT /runners/:id: description, active, tag_list as the full set, run_untagged; 400, 403 shared / no access, 404', async () => {
    const res = await pl
      .put(team.master, `/runners/${specific.id}`)
      .send({ description: 'renamed', active: false, tag_list: ['go'] })
      .expect(200);
    await expectSchema(res, 'RunnerDetail');
    expect(res.body).toMatchObject({ description: 'renamed', active: false, tag_list: ['go'], run_untagged: true, token: specific.token });
    expect((await pl.get(team.master, '/runners?scope=paused').expect(200)).body.map((r: Json) => r.id)).toEqual([specific.id]);
    const cleared = await pl.put(team.master, `/runners/${specific.id}`).send({ tag_list: [], active: true }).expect(200);
    expect(cleared.body.tag_list).toEqual([]);
    const bad = await pl.put(team.master, `/runners/${specific.id}`).send({ run_untagged: false }).expect(400);
    expect(bad.body.message).toHaveProperty('tags_list');
    await pl.put(team.master, `/runners/${specific.id}`).send({ active: 'maybe' }).expect(400);
    expect((await pl.put(team.master, `/runners/${shared.id}`).send({ description: 'x' }).expect(403)).body).toEqual({
      message: '403 Forbidden - Runner is shared',
    });
    expect((await pl.put(team.developer, `/runners/${specific.id}`).send({ description: 'x' }).expect(403)).body).toEqual({
      message: '403 Forbidden - No access granted',
    });
    await pl.put(team.master, '/runners/999999').send({ description: 'x' }).expect(404);
    await t.http.put(`/api/v3/runners/${specific.id}`).send({ description: 'x' }).expect(401);
    expect((await pl.put(team.admin, `/runners/${shared.id}`).send({ description: 'by admin' }).expect(200)).body.description).toBe('by admin');
  });

  it('projects/:id/runners: list (specific + shared), enable (201), disable; GitLab 403s; developers 403, outsiders 404', async () => {
    const list = (await pl.get(team.master, `/projects/${p1}/runners?per_page=100`).expect(200)).body.map((r: Json) => r.id);
    expect(list).toContain(specific.id);
    expect(list).toContain(shared.id);
    expect((await pl.get(team.master, `/projects/${p2}/runners`).expect(200)).body.map((r: Json) => r.id)).toEqual([shared.id]);
    expect((await pl.get(team.developer, `/projects/${p1}/runners`)).status).toBe(403);
    expect((await pl.get(team.stranger, `/projects/${p1}/runners`)).status).toBe(404);
    await t.http.get(`/api/v3/projects/${p1}/runners`).expect(401);

    expect((await pl.post(team.master, `/projects/${p2}/runners`).send({ runner_id: specific.id }).expect(201)).body.id).toBe(specific.id);
    await pl.post(team.master, `/projects/${p2}/runners`).send({ runner_id: specific.id }).expect(201); // already enabled: still 201
    expect((await pl.get(team.master, `/runners/${specific.id}`).expect(200)).body.projects.map((p: Json) => p.id)).toEqual([p1, p2]);
    expect((await pl.post(team.master, `/projects/${p2}/runners`).send({ runner_id: shared.id }).expect(403)).body).toEqual({
      message: '403 Forbidden - Runner is shared',
    });
    expect((await pl.post(team.master, `/projects/${p2}/runners`).send({}).expect(400)).body).toEqual({ message: '400 (Bad request) "runner_id" not given' });
    await pl.post(team.master, `/projects/${p2}/runners`).send({ runner_id: 'x' }).expect(400);
    await pl.post(team.master, `/projects/${p2}/runners`).send({ runner_id: 999999 }).expect(404);
    expect((await pl.post(team.developer, `/projects/${p2}/runners`).send({ runner_id: specific.id })).status).toBe(403);
    // a runner of a project the caller does not master
    const other = await pl
      .post(team.stranger, '/projects')
      .send({ name: `theirs-${Date.now()}` })
      .expect(201);
    const theirToken = (await pl.get(team.stranger, `/projects/${other.body.id}`).expect(200)).body.runners_token;
    const theirs = (await c.api.register({ token: theirToken }).expect(201)).body;
    expect((await pl.post(team.master, `/projects/${p2}/runners`).send({ runner_id: theirs.id }).expect(403)).body).toEqual({
      message: '403 Forbidden - No access granted',
    });
    await pl.post(team.admin, `/projects/${p2}/runners`).send({ runner_id: theirs.id }).expect(201);

    // DELETE /runners/:id of a runner of two projects: only admins
    expect((await pl.del(team.master, `/runners/${specific.id}`).expect(403)).body).toEqual({
      message: '403 Forbidden - Runner associated with more than one project',
    });

    expect((await pl.del(team.master, `/projects/${p2}/runners/${specific.id}`).expect(200)).body.id).toBe(specific.id);
    expect((await pl.del(team.master, `/projects/${p2}/runners/${specific.id}`).expect(404)).body).toEqual({ message: '404 Runner Not Found' });
    expect((await pl.del(team.master, `/projects/${p1}/runners/${specific.id}`).expect(403)).body).toEqual({
      message: '403 Forbidden - Only one project associated with the runner. Please remove the runner instead',
    });
    expect((await pl.del(team.developer, `/projects/${p1}/runners/${specific.id}`)).status).toBe(403);
    expect((await pl.del(team.stranger, `/projects/${p1}/runners/${specific.id}`)).status).toBe(404);
    await t.http.delete(`/api/v3/projects/${p1}/runners/${specific.id}`).expect(401);
  });

  it('DELETE /runners/:id: masters remove their specific runner (200 summary); shared → 403 but admins may; 404; 401', async () => {
    const extra = await registerSpecific(p1, { description: 'to go' });
    expect((await pl.del(team.master, `/runners/${shared.id}`).expect(403)).body).toEqual({ message: '403 Forbidden - Runner is shared' });
    expect((await pl.del(team.developer, `/runners/${extra.id}`).expect(403)).body).toEqual({ message: '403 Forbidden - No access granted' });
    await t.http.delete(`/api/v3/runners/${extra.id}`).expect(401);
    expect((await pl.del(team.master, `/runners/${extra.id}`).expect(200)).body).toEqual({
      id: extra.id,
      description: 'to go',
      active: true,
      is_shared: false,
      name: 'gitlab-ci-multi-runner',
    });
    await pl.del(team.master, `/runners/${extra.id}`).expect(404);
    await c.api.verify(extra.token).expect(403); // the runner API no longer knows it
    expect((await pl.del(team.admin, `/runners/${shared.id}`).expect(200)).body.is_shared).toBe(true);
  });

  it('application settings show the runners registration token to admins (the one that registers shared runners)', async () => {
    const res = await pl.get(team.admin, '/application/settings').expect(200);
    expect(res.body.runners_registration_token).toBe(await c.registrationToken());
    expect((await pl.put(team.admin, '/application/settings').send({ signup_enabled: true }).expect(200)).body.runners_registration_token).toBe(
      res.body.runners_registration_token,
    );
    expect((await pl.get(team.owner, '/application/settings')).status).toBe(403);
  });
});
