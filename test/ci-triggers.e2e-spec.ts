import { ci, Json } from './helpers/ci';
import { planning } from './helpers/planning';
import { expectSchema } from './helpers/schema';
import { startTestApp, TestApp } from './helpers/test-app';

const YML = 'always:\n  script: x\nonly-triggers:\n  script: y\n  only: [triggers]\n';

describe('v3 build triggers', () => {
  let t: TestApp;
  let c: ReturnType<typeof ci>;
  let pl: ReturnType<typeof planning>;
  let team: Awaited<ReturnType<ReturnType<typeof planning>['team']>>;
  let pid: number;
  let runnersToken: string;
  let token: string;

  beforeAll(async () => {
    t = await startTestApp();
    c = ci(t);
    pl = planning(t);
    team = await pl.team();
    pid = (await pl.project(team, 0)).id;
    runnersToken = (await pl.get(team.owner, `/projects/${pid}`).expect(200)).body.runners_token;
    await pl
      .post(team.owner, `/projects/${pid}/repository/files`)
      .send({ file_path: '.gitlab-ci.yml', branch_name: 'master', content: YML, commit_message: 'ci' })
      .expect(201);
    for (let i = 0; i < 200 && (await c.builds(pid)).length === 0; i++) await new Promise((r) => setTimeout(r, 50));
  }, 240_000);
  afterAll(() => t.close());

  it('create (201), list, get by token; token digested at rest; developers 403, outsiders 404', async () => {
    const res = await pl.post(team.master, `/projects/${pid}/triggers`).expect(201);
    await expectSchema(res, 'Trigger');
    token = res.body.token;
    expect(res.body).toMatchObject({ deleted_at: null, last_used: null });
    expect(token).toMatch(/^[A-Za-z0-9]{30}$/);
    const [row] = await t.sql<Json>(`SELECT token_digest FROM ci_triggers WHERE project_id = $1`, [pid]);
    expect(row.token_digest).not.toBe(token);
    expect((await pl.get(team.master, `/projects/${pid}/triggers`).expect(200)).body.map((x: Json) => x.token)).toEqual([token]);
    expect((await pl.get(team.master, `/projects/${pid}/triggers/${token}`).expect(200)).body.token).toBe(token);
    expect((await pl.get(team.master, `/projects/${pid}/triggers/nope`).expect(404)).body).toEqual({ message: '404 Trigger Not Found' });
    expect((await pl.get(team.developer, `/projects/${pid}/triggers`)).status).toBe(403);
    expect((await pl.get(team.stranger, `/projects/${pid}/triggers`)).status).toBe(404);
  });

  it('POST trigger/builds without login: 201 {id, variables}; only: [triggers] jobs run; variables reach the build', async () => {
    const before = (await c.builds(pid)).length;
    const res = await t.http
      .post(`/api/v3/projects/${pid}/trigger/builds`)
      .send({ token, ref: 'master', variables: { DEPLOY: 'yes' } })
      .expect(201);
    await expectSchema(res, 'TriggerRequest');
    expect(res.body).toEqual({ id: expect.any(Number), variables: { DEPLOY: 'yes' } });
    const builds = await c.builds(pid);
    expect(
      builds
        .slice(before)
        .map((b) => b.name)
        .sort(),
    ).toEqual(['always', 'only-triggers']);
    const runner = (await c.api.register({ token: runnersToken })).body;
    const claimed: Json[] = [];
    for (;;) {
      const r = await c.api.requestBuild(runner.token);
      if (r.status !== 201) break;
      claimed.push(r.body);
    }
    const triggered = claimed.find((b) => b.name === 'only-triggers')!;
    expect(triggered.variables).toContainEqual({ key: 'CI_BUILD_TRIGGERED', value: 'true', public: true });
    expect(triggered.variables).toContainEqual({ key: 'DEPLOY', value: 'yes', public: false });
    expect((await pl.get(team.master, `/projects/${pid}/triggers/${token}`).expect(200)).body.last_used).toMatch(/Z$/);
  });

  it('errors: unknown token 404, bad variables 400, unknown ref 400 No builds created, missing ref 400', async () => {
    expect((await t.http.post(`/api/v3/projects/${pid}/trigger/builds`).send({ token: 'nope', ref: 'master' })).status).toBe(404);
    expect((await t.http.post(`/api/v3/projects/999999/trigger/builds`).send({ token, ref: 'master' })).status).toBe(404);
    expect(
      (
        await t.http
          .post(`/api/v3/projects/${pid}/trigger/builds`)
          .send({ token, ref: 'master', variables: ['a'] })
          .expect(400)
      ).body,
    ).toEqual({
      message: '400 variables needs to be a hash',
    });
    expect(
      (
        await t.http
          .post(`/api/v3/projects/${pid}/trigger/builds`)
          .send({ token, ref: 'master', variables: { A: 1 } })
          .expect(400)
      ).body,
    ).toEqual({
      message: '400 variables needs to be a map of key-valued strings',
    });
    expect((await t.http.post(`/api/v3/projects/${pid}/trigger/builds`).send({ token, ref: 'nope' }).expect(400)).body).toEqual({
      message: '400 No builds created',
    });
    expect((await t.http.post(`/api/v3/projects/${pid}/trigger/builds`).send({ token }).expect(400)).body).toEqual({
      message: '400 (Bad request) "ref" not given',
    });
    const other = await pl.project(team, 0);
    expect((await t.http.post(`/api/v3/projects/${other.id}/trigger/builds`).send({ token, ref: 'master' })).status).toBe(401);
  });

  it('delete is soft: deleted_at set, then the token is gone', async () => {
    const res = await pl.del(team.master, `/projects/${pid}/triggers/${token}`).expect(200);
    await expectSchema(res, 'Trigger');
    expect(res.body.deleted_at).toMatch(/Z$/);
    expect((await pl.get(team.master, `/projects/${pid}/triggers`).expect(200)).body).toEqual([]);
    expect((await t.http.post(`/api/v3/projects/${pid}/trigger/builds`).send({ token, ref: 'master' })).status).toBe(404);
  });
});
