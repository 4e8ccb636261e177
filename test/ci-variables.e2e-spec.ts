import { ci } from './helpers/ci';
import { planning } from './helpers/planning';
import { expectSchema } from './helpers/schema';
import { startTestApp, TestApp } from './helpers/test-app';

describe('v3 build variables (/projects/:id/variables)', () => {
  let t: TestApp;
  let pl: ReturnType<typeof planning>;
  let team: Awaited<ReturnType<ReturnType<typeof planning>['team']>>;
  let pid: number;

  beforeAll(async () => {
    t = await startTestApp();
    pl = planning(t);
    team = await pl.team();
    pid = (await pl.project(team, 0)).id;
  }, 240_000);
  afterAll(() => t.close());

  it('create (201), list, get, update, delete; values encrypted at rest', async () => {
    const created = await pl.post(team.master, `/projects/${pid}/variables`).send({ key: 'SECRET_KEY', value: 'secret_value' }).expect(201);
    await expectSchema(created, 'Variable');
    expect(created.body).toEqual({ key: 'SECRET_KEY', value: 'secret_value' });
    const [row] = await t.sql<{ value_encrypted: string }>(`SELECT value_encrypted FROM ci_variables WHERE project_id = $1`, [pid]);
    expect(row.value_encrypted).not.toContain('secret_value');
    await pl.post(team.master, `/projects/${pid}/variables`).send({ key: 'OTHER', value: 'x' }).expect(201);
    expect((await pl.get(team.master, `/projects/${pid}/variables`).expect(200)).body).toEqual([
      { key: 'SECRET_KEY', value: 'secret_value' },
      { key: 'OTHER', value: 'x' },
    ]);
    expect((await pl.get(team.owner, `/projects/${pid}/variables/OTHER`).expect(200)).body).toEqual({ key: 'OTHER', value: 'x' });
    expect((await pl.put(team.master, `/projects/${pid}/variables/OTHER`).send({ value: 'y' }).expect(200)).body).toEqual({ key: 'OTHER', value: 'y' });
    expect((await pl.del(team.master, `/projects/${pid}/variables/OTHER`).expect(200)).body).toEqual({ key: 'OTHER', value: 'y' });
    expect((await pl.get(team.master, `/projects/${pid}/variables/OTHER`).expect(404)).body).toEqual({ message: '404 Variable Not Found' });
  });

  it('400: missing key/value, invalid key, duplicate key', async () => {
    expect((await pl.post(team.master, `/projects/${pid}/variables`).send({ value: 'x' }).expect(400)).body).toEqual({
      message: '400 (Bad request) "key" not given',
    });
    expect((await pl.post(team.master, `/projects/${pid}/variables`).send({ key: 'K' }).expect(400)).body).toEqual({
      message: '400 (Bad request) "value" not given',
    });
    expect((await pl.post(team.master, `/projects/${pid}/variables`).send({ key: 'BAD-KEY', value: 'x' }).expect(400)).body).toEqual({
      message: { key: ["can contain only letters, digits and '_'."] },
    });
    expect(
      (
        await pl
          .post(team.master, `/projects/${pid}/variables`)
          .send({ key: 'A'.repeat(256), value: 'x' })
          .expect(400)
      ).body.message.key,
    ).toContain('is too long (maximum is 255 characters)');
    expect((await pl.post(team.master, `/projects/${pid}/variables`).send({ key: 'SECRET_KEY', value: 'x' }).expect(400)).body).toEqual({
      message: { key: ['has already been taken'] },
    });
    expect((await pl.put(team.master, `/projects/${pid}/variables/SECRET_KEY`).send({}).expect(400)).body).toEqual({
      message: '400 (Bad request) "value" not given',
    });
  });

  it('permissions: 401 anonymous, 404 outsider, 403 developer, 200 admin', async () => {
    expect((await t.http.get(`/api/v3/projects/${pid}/variables`)).status).toBe(401);
    expect((await pl.get(team.stranger, `/projects/${pid}/variables`)).status).toBe(404);
    expect((await pl.get(team.developer, `/projects/${pid}/variables`)).status).toBe(403);
    expect((await pl.post(team.developer, `/projects/${pid}/variables`).send({ key: 'X', value: 'y' })).status).toBe(403);
    expect((await pl.get(team.admin, `/projects/${pid}/variables`)).status).toBe(200);
  });

  it('variables reach the builds (public: false)', async () => {
    const c = ci(t);
    const shown = await pl.get(team.owner, `/projects/${pid}`).expect(200);
    await pl
      .post(team.owner, `/projects/${pid}/repository/files`)
      .send({ file_path: '.gitlab-ci.yml', branch_name: 'master', content: 'job:\n  script: x\n', commit_message: 'ci' })
      .expect(201);
    for (let i = 0; i < 200 && (await c.builds(pid)).length === 0; i++) await new Promise((r) => setTimeout(r, 50));
    const runner = (await c.api.register({ token: shown.body.runners_token })).body;
    const build = (await c.api.requestBuild(runner.token).expect(201)).body;
    expect(build.variables).toContainEqual({ key: 'SECRET_KEY', value: 'secret_value', public: false });
  });
});
