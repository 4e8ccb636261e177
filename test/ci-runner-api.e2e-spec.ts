import { ci, Json, RUNNER_UA } from './helpers/ci';
import { expectSchema } from './helpers/schema';
import { startTestApp, TestApp, TestUser } from './helpers/test-app';

const YML = `
stages: [build, test, deploy]
variables:
  DB_NAME: postgres
before_script: ["echo before"]
compile:
  stage: build
  script: ["make"]
  artifacts:
    paths: [out/]
rspec:
  stage: test
  script: rake spec
  tags: [ruby]
spinach:
  stage: test
  script: rake spinach
  dependencies: [compile]
deploy:
  stage: deploy
  script: cap deploy
on-fail:
  stage: deploy
  script: notify
  when: on_failure
`;

describe('CI runner API v1 (as runner 1.3.5 drives it)', () => {
  let t: TestApp;
  let c: ReturnType<typeof ci>;
  let owner: TestUser;

  beforeAll(async () => {
    t = await startTestApp({ LOG_LEVEL: process.env.CI_TEST_LOG ?? 'silent' });
    c = ci(t);
    owner = await t.createUser();
  });
  afterAll(() => t.close());

  describe('runners/register, verify, delete', () => {
    it('registers a shared runner with the registration token: 201 {id, token}, Content-Type exactly application/json', async () => {
      const res = await c.api.register({ token: await c.registrationToken(), description: 'test-runner', tag_list: 'a, b' });
      await expectSchema(res, 'RunnerRegistration');
      expect(res.status).toBe(201);
      expect(res.headers['content-type']).toBe('application/json');
      expect(Object.keys(res.body)).toEqual(['id', 'token']);
      expect(res.body.token).toMatch(/^[0-9a-f]{30}$/);
      const [row] = await t.sql<Json>(`SELECT * FROM ci_runners WHERE id = $1`, [res.body.id]);
      expect(row).toMatchObject({
        is_shared: true,
        description: 'test-runner',
        tag_list: ['a', 'b'],
        run_untagged: true,
        active: true,
        version: '1.3.5',
        platform: 'linux',
        architecture: 'amd64',
        revision: '3af07be',
      });
      expect(row.token_digest).not.toContain(res.body.token);
    });

    it('a project runners token registers a specific runner of that project; tag_list may be an array', async () => {
      const p = await c.project(owner, null);
      const res = await c.api.register({ token: p.runnersToken, tag_list: ['x', 'y'], run_untagged: false });
      expect(res.status).toBe(201);
      const rows = await t.sql<Json>(
        `SELECT r.is_shared, r.tag_list, r.run_untagged, rp.project_id FROM ci_runners r JOIN ci_runner_projects rp ON rp.runner_id = r.id WHERE r.id = $1`,
        [res.body.id],
      );
      expect(rows).toEqual([{ is_shared: false, tag_list: ['x', 'y'], run_untagged: false, project_id: p.id }]);
    });

    it('400 without token, 403 for a wrong token, 404 when run_untagged is false without tags', async () => {
      const missing = await c.api.register({});
      expect(missing.status).toBe(400);
      expect(missing.body).toEqual({ message: '400 (Bad request) "token" not given' });
      const wrong = await c.api.register({ token: 'not-a-token' });
      expect(wrong.status).toBe(403);
      expect(wrong.body).toEqual({ message: '403 Forbidden' });
      const invalid = await c.api.register({ token: await c.registrationToken(), run_untagged: false });
      expect(invalid.status).toBe(404);
    });

    it('verify (PUT builds/-1 without .json): 404 for a live runner, 403 for an unknown token', async () => {
      const r = await c.registerRunner();
      expect((await c.api.verify(r.token)).status).toBe(404);
      expect((await c.api.verify('0'.repeat(30))).status).toBe(403);
    });

    it('DELETE runners/delete with a JSON body: 200, then 403; 400 without token', async () => {
      const r = await c.registerRunner({ description: 'bye' });
      const res = await c.api.unregister(r.token);
      expect(res.status).toBe(200);
      await expectSchema(res, 'RunnerRecord');
      expect(res.body).toMatchObject({ id: r.id, description: 'bye', is_shared: true });
      expect(res.body.token_digest).toBeUndefined();
      expect(res.body.token).toBeUndefined();
      expect((await c.api.unregister(r.token)).status).toBe(403);
      expect((await c.api.verify(r.token)).status).toBe(403);
    });
  });

  describe('a pipeline end to end', () => {
    let p: Awaited<ReturnType<typeof c.project>>;
    let runner: { id: number; token: string };
    let compile: Json;

    beforeAll(async () => {
      p = await c.project(owner, YML);
      runner = (await c.api.register({ token: p.runnersToken, tag_list: 'ruby,mysql' })).body;
    });

    it('a push creates the pipeline with all its builds (8.17): the first stage pending, the later ones created', async () => {
      const [pl] = await c.pipelines(p.id);
      expect(pl).toMatchObject({ sha: p.sha, ref: 'master', tag: false, status: 'pending', yaml_errors: null });
      expect((await c.builds(p.id)).map((b) => [b.name, b.stage, b.status])).toEqual([
        ['compile', 'build', 'pending'],
        ['rspec', 'test', 'created'],
        ['spinach', 'test', 'created'],
        ['deploy', 'deploy', 'created'],
        ['on-fail', 'deploy', 'created'],
      ]);
    });

    it('builds show up as commit statuses of their sha', async () => {
      const res = await t.http.get(`/api/v3/projects/${p.id}/repository/commits/${p.sha}/statuses`).set('PRIVATE-TOKEN', owner.token).expect(200);
      expect(res.body.map((s: Json) => [s.name, s.status, s.ref, s.sha])).toEqual([
        ['on-fail', 'created', 'master', p.sha],
        ['deploy', 'created', 'master', p.sha],
        ['spinach', 'created', 'master', p.sha],
        ['rspec', 'created', 'master', p.sha],
        ['compile', 'pending', 'master', p.sha],
      ]);
    });

    it('403 for an unknown runner token', async () => {
      const res = await c.api.requestBuild('f'.repeat(30));
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ message: '403 Forbidden' });
    });

    it('201 with the payload of runner-protocol §2.4', async () => {
      const res = await c.api.requestBuild(runner.token);
      expect(res.status).toBe(201);
      await expectSchema(res, 'BuildDetails');
      expect(res.headers['content-type']).toBe('application/json');
      compile = res.body;
      expect(Object.keys(compile)).toEqual([
        'id',
        'ref',
        'tag',
        'sha',
        'status',
        'name',
        'token',
        'stage',
        'project_id',
        'project_name',
        'commands',
        'repo_url',
        'before_sha',
        'allow_git_fetch',
        'options',
        'timeout',
        'variables',
        'depends_on_builds',
      ]);
      expect(compile).toMatchObject({
        ref: 'master',
        tag: false,
        sha: p.sha,
        status: 'running',
        name: 'compile',
        stage: 'build',
        project_id: p.id,
        commands: 'echo before\nmake',
        before_sha: '0000000000000000000000000000000000000000',
        allow_git_fetch: true,
        options: { artifacts: { paths: ['out/'] } },
        timeout: 3600,
        depends_on_builds: [],
      });
      // 8.17's predefined variables first (ci-pipelines checks them all), then the yaml ones
      expect(compile.variables.filter((v: Json) => ['CI_BUILD_NAME', 'CI_BUILD_STAGE', 'DB_NAME'].includes(v.key))).toEqual([
        { key: 'CI_BUILD_NAME', value: 'compile', public: true },
        { key: 'CI_BUILD_STAGE', value: 'build', public: true },
        { key: 'DB_NAME', value: 'postgres', public: true },
      ]);
      expect(compile.sha).toMatch(/^[0-9a-f]{40}$/);
      expect(compile.token).toMatch(/^[A-Za-z0-9]{20}$/);
      expect(compile.repo_url).toBe(`http://gitlab-ci-token:${compile.token}@gitlab.test/${p.path}.git`);
      const [row] = await t.sql<Json>(`SELECT token_digest, runner_id FROM ci_builds WHERE id = $1`, [compile.id]);
      expect(row.runner_id).toBe(runner.id);
      expect(row.token_digest).not.toBe(compile.token);
      const [r] = await t.sql<Json>(`SELECT contacted_at FROM ci_runners WHERE id = $1`, [runner.id]);
      expect(r.contacted_at).not.toBeNull();
    });

    it('404 with {} when there is nothing to run', async () => {
      const res = await c.api.requestBuild(runner.token);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({});
      expect(res.headers['content-type']).toBe('application/json');
    });

    it('the state-only PUT answers 200 and changes nothing', async () => {
      const res = await c.api.update(compile.id, { token: runner.token, state: 'running' });
      expect(res.status).toBe(200);
      expect((await c.builds(p.id))[0].status).toBe('running');
    });

    it('PATCH trace.txt: 202 + Range + Build-Status; 416 + Range when the part does not start at the end', async () => {
      const first = await c.api.patchTrace(compile.id, compile.token, 0, 'BUILD TRACE');
      expect(first.status).toBe(202);
      expect(first.headers['range']).toBe('0-11');
      expect(first.headers['build-status']).toBe('running');
      const next = await c.api.patchTrace(compile.id, compile.token, 11, ' appended');
      expect(next.status).toBe(202);
      expect(next.headers['range']).toBe('0-20');
      for (const start of [15, 8]) {
        const bad = await c.api.patchTrace(compile.id, compile.token, start, 'xxxxx');
        expect(bad.status).toBe(416);
        expect(bad.headers['range']).toBe('0-20');
        expect(bad.body).toEqual({ error: '416 Range Not Satisfiable' });
      }
      const noRange = await t.http
        .patch(`/ci/api/v1/builds/${compile.id}/trace.txt`)
        .set('BUILD-TOKEN', compile.token)
        .set('Content-Type', 'text/plain')
        .send('x');
      expect(noRange.status).toBe(400);
      expect(noRange.body).toEqual({ error: '400 Missing header Content-Range' });
      expect((await c.api.patchTrace(compile.id, 'wrong-token', 20, 'x')).status).toBe(403);
      expect((await c.api.patchTrace(999999, compile.token, 0, 'x')).status).toBe(404);
      // the project's runners token is accepted as BUILD-TOKEN too
      expect((await c.api.patchTrace(compile.id, p.runnersToken, 20, '!')).status).toBe(202);
    });

    it('PUT with another runner token is 403 first, then 404 for a build not its own', async () => {
      const other = await c.registerRunner();
      expect((await c.api.update(compile.id, { token: 'nope', state: 'success' })).status).toBe(403);
      const res = await c.api.update(compile.id, { token: other.token, state: 'success' });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ message: '404 Not found' });
    });

    it('artifacts: chunked multipart upload (201), 403 for a wrong token, download, dependent token', async () => {
      const zip = Buffer.from('PK\u0003\u0004 fake zip ' + 'z'.repeat(5000));
      const res = await t.http
        .post(`/ci/api/v1/builds/${compile.id}/artifacts?`)
        .set('BUILD-TOKEN', compile.token)
        .set('User-Agent', RUNNER_UA)
        .attach('file', zip, { filename: 'artifacts.zip', contentType: 'application/octet-stream' });
      expect(res.status).toBe(201);
      expect(res.body.artifacts_file).toEqual({ filename: 'artifacts.zip', size: zip.length });
      await expectSchema(res, 'BuildDetails');
      expect((await t.http.post(`/ci/api/v1/builds/${compile.id}/artifacts`).set('BUILD-TOKEN', 'bad').attach('file', zip, 'a.zip')).status).toBe(403);
      const missing = await t.http.post(`/ci/api/v1/builds/${compile.id}/artifacts`).set('BUILD-TOKEN', compile.token).field('expire_in', '1 day');
      expect(missing.status).toBe(400);
      expect(missing.body).toEqual({ message: '400 (Bad request) "Missing artifacts file!" not given' });
      const down = await t.http
        .get(`/ci/api/v1/builds/${compile.id}/artifacts`)
        .set('BUILD-TOKEN', compile.token)
        .buffer(true)
        .parse((r, cb) => {
          const chunks: Buffer[] = [];
          r.on('data', (d: Buffer) => chunks.push(d));
          r.on('end', () => cb(null, Buffer.concat(chunks)));
        });
      expect(down.status).toBe(200);
      expect(down.headers['content-type']).toBe('application/octet-stream');
      expect(down.headers['content-disposition']).toBe('attachment; filename=artifacts.zip');
      expect(Buffer.compare(down.body, zip)).toBe(0);
    });

    it('the final PUT (success, full trace) finishes the build and creates the next stage; a retried PUT changes nothing', async () => {
      const res = await c.api.update(compile.id, { token: runner.token, state: 'success', trace: 'full trace with ' + compile.token });
      expect(res.status).toBe(200);
      const again = await c.api.update(compile.id, { token: runner.token, state: 'failed' });
      expect(again.status).toBe(404);
      const builds = await c.builds(p.id);
      expect(builds.map((b) => [b.name, b.status])).toEqual([
        ['compile', 'success'],
        ['rspec', 'pending'],
        ['spinach', 'pending'],
        ['deploy', 'created'],
        ['on-fail', 'created'],
      ]);
      const [pl] = await c.pipelines(p.id);
      expect(pl.status).toBe('running');
    });

    it('tags: a runner without the build tags does not get it; depends_on_builds carries the artifacts', async () => {
      const untaggedOnly = (await c.api.register({ token: p.runnersToken })).body;
      const first = await c.api.requestBuild(untaggedOnly.token);
      expect(first.status).toBe(201);
      expect(first.body.name).toBe('spinach');
      expect(first.body.depends_on_builds).toEqual([
        {
          id: compile.id,
          ref: 'master',
          tag: false,
          sha: p.sha,
          status: 'success',
          name: 'compile',
          token: compile.token,
          stage: 'build',
          project_id: p.id,
          project_name: compile.project_name,
          artifacts_file: { filename: 'artifacts.zip', size: expect.any(Number) },
        },
      ]);
      // the dependent build's token downloads the dependency's artifacts
      expect((await t.http.get(`/ci/api/v1/builds/${compile.id}/artifacts`).set('BUILD-TOKEN', first.body.token)).status).toBe(200);
      expect((await c.api.requestBuild(untaggedOnly.token)).status).toBe(404);
      const tagged = await c.api.requestBuild(runner.token);
      expect(tagged.status).toBe(201);
      expect(tagged.body.name).toBe('rspec');
      await c.api.update(first.body.id, { token: untaggedOnly.token, state: 'success' }).expect(200);
      await c.api.update(tagged.body.id, { token: runner.token, state: 'failed' }).expect(200);
      // the test stage failed: the on_failure job of the deploy stage runs, the on_success one is skipped
      const builds = await c.builds(p.id);
      expect(builds.map((b) => [b.name, b.status])).toEqual([
        ['compile', 'success'],
        ['rspec', 'failed'],
        ['spinach', 'success'],
        ['deploy', 'skipped'],
        ['on-fail', 'pending'],
      ]);
      const [pl] = await c.pipelines(p.id);
      expect(pl.status).toBe('running');
    });

    it('a canceled build answers Build-Status: canceled to PATCH and 404 to PUT', async () => {
      const b = (await c.api.requestBuild(runner.token)).body;
      expect(b.name).toBe('on-fail');
      await t.sql(`UPDATE commit_statuses SET status = 'canceled', finished_at = now() WHERE id = $1`, [b.id]);
      const res = await c.api.patchTrace(b.id, b.token, 0, 'abc');
      expect(res.status).toBe(202);
      expect(res.headers['build-status']).toBe('canceled');
      expect((await c.api.update(b.id, { token: runner.token, state: 'failed' })).status).toBe(404);
    });

    it('artifacts upload needs a running build', async () => {
      const res = await t.http.post(`/ci/api/v1/builds/${compile.id}/artifacts`).set('BUILD-TOKEN', compile.token).attach('file', Buffer.from('x'), 'a.zip');
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ message: '403 Forbidden - Build is not running!' });
    });

    it('DELETE artifacts removes them; then GET is 404', async () => {
      const res = await t.http.delete(`/ci/api/v1/builds/${compile.id}/artifacts`).set('BUILD-TOKEN', compile.token);
      expect(res.status).toBe(200);
      expect(res.body.artifacts_file).toBeUndefined();
      expect((await t.http.get(`/ci/api/v1/builds/${compile.id}/artifacts`).set('BUILD-TOKEN', compile.token)).status).toBe(404);
    });
  });
});
