import { ci, Json } from './helpers/ci';
import { planning } from './helpers/planning';
import { expectSchema } from './helpers/schema';
import { countQueries, startTestApp, TestApp } from './helpers/test-app';

const YML = `
build:
  stage: build
  script: make
test:
  stage: test
  script: make test
`;

describe('v3 builds API (/projects/:id/builds)', () => {
  let t: TestApp;
  let c: ReturnType<typeof ci>;
  let pl: ReturnType<typeof planning>;
  let team: Awaited<ReturnType<ReturnType<typeof planning>['team']>>;
  let project: { id: number; path: string; runnersToken: string; sha: string };
  let priv: { id: number };
  let runner: { id: number; token: string };
  let build: Json;
  let next: Json;

  beforeAll(async () => {
    t = await startTestApp();
    c = ci(t);
    pl = planning(t);
    team = await pl.team();
    // a private project (builds not public) with the team, and .gitlab-ci.yml pushed through the files API
    const p = await pl.project(team, 0, { public_builds: false });
    priv = p;
    const shown = await pl.get(team.owner, `/projects/${p.id}`).expect(200);
    await pl
      .post(team.owner, `/projects/${p.id}/repository/files`)
      .send({ file_path: '.gitlab-ci.yml', branch_name: 'master', content: YML, commit_message: 'ci' })
      .expect(201);
    const commit = await pl.get(team.owner, `/projects/${p.id}/repository/commits/master`).expect(200);
    project = { id: p.id, path: p.path_with_namespace, runnersToken: shown.body.runners_token, sha: commit.body.id };
    await new Promise((r) => setTimeout(r, 50));
    for (let i = 0; i < 100 && (await c.builds(p.id)).length === 0; i++) await new Promise((r) => setTimeout(r, 50));
    runner = (await c.api.register({ token: project.runnersToken, description: 'r1' })).body;
    build = (await c.api.requestBuild(runner.token).expect(201)).body;
    await c.api.patchTrace(build.id, build.token, 0, `log with ${build.token} and ${project.runnersToken}\n`).expect(202);
  }, 240_000);
  afterAll(() => t.close());

  it('lists the project builds, newest first, with commit, user and runner', async () => {
    const res = await pl.get(team.developer, `/projects/${project.id}/builds`).expect(200);
    await expectSchema(res, 'Build[]');
    // 8.17: the later stage's build exists from the start, `created`
    expect(res.body.map((x: Json) => [x.name, x.status])).toEqual([
      ['test', 'created'],
      ['build', 'running'],
    ]);
    const b = res.body[1];
    expect(b).toMatchObject({
      id: build.id,
      status: 'running',
      stage: 'build',
      name: 'build',
      ref: 'master',
      tag: false,
      coverage: null,
      finished_at: null,
      commit: { id: project.sha, short_id: project.sha.slice(0, 8), title: 'ci', message: 'ci' },
      runner: { id: runner.id, description: 'r1', active: true, is_shared: false, name: 'gitlab-ci-multi-runner' },
      user: { id: team.owner.id, username: team.owner.username },
      artifacts_file: null, // present, null without artifacts (spec: "null or object")
    });
    expect(b.started_at).toMatch(/Z$/);
    expect(res.headers['x-total']).toBe('2');
  });

  it('scope filters; an unknown scope is 400', async () => {
    expect((await pl.get(team.developer, `/projects/${project.id}/builds?scope=pending`).expect(200)).body).toEqual([]);
    // 8.17's statuses are scopes too
    const created = await pl.get(team.developer, `/projects/${project.id}/builds?scope=created`).expect(200);
    expect(created.body.map((x: Json) => x.name)).toEqual(['test']);
    expect((await pl.get(team.developer, `/projects/${project.id}/builds?scope[]=manual&scope[]=skipped`).expect(200)).body).toEqual([]);
    expect((await pl.get(team.developer, `/projects/${project.id}/builds?scope[]=running&scope[]=success`).expect(200)).body).toHaveLength(1);
    const bad = await pl.get(team.developer, `/projects/${project.id}/builds?scope=nope`).expect(400);
    expect(bad.body).toEqual({ message: '400 Scope contains invalid value(s)' });
  });

  it('401 without credentials, 404 for an outsider of a private project, 403 for a guest without read_build', async () => {
    expect((await t.http.get(`/api/v3/projects/${project.id}/builds`)).status).toBe(401);
    expect((await pl.get(team.stranger, `/projects/${project.id}/builds`)).status).toBe(404);
    expect((await pl.get(team.guest, `/projects/${project.id}/builds`)).status).toBe(403);
    expect((await pl.get(team.reporter, `/projects/${project.id}/builds`)).status).toBe(200);
  });

  it("a commit's builds; [] for a commit without pipeline; 404 for a sha the repository does not have (8.17)", async () => {
    const res = await pl.get(team.reporter, `/projects/${project.id}/repository/commits/${project.sha}/builds`).expect(200);
    await expectSchema(res, 'Build[]');
    expect(res.body.map((b: Json) => [b.name, b.status])).toEqual([
      ['test', 'created'],
      ['build', 'running'],
    ]);
    expect(res.body[1].id).toBe(build.id);
    expect(res.headers['x-total']).toBe('2');
    // another project of the team whose commit has no .gitlab-ci.yml, so no pipeline
    const other = await pl.project(team, 0, { public_builds: false });
    await pl
      .post(team.owner, `/projects/${other.id}/repository/files`)
      .send({ file_path: 'README.md', branch_name: 'master', content: 'no CI here', commit_message: 'readme' })
      .expect(201);
    const sha = (await pl.get(team.owner, `/projects/${other.id}/repository/commits/master`).expect(200)).body.id;
    expect(await c.pipelines(other.id)).toEqual([]);
    const none = await pl.get(team.reporter, `/projects/${other.id}/repository/commits/${sha}/builds`).expect(200);
    await expectSchema(none, 'Build[]');
    expect(none.body).toEqual([]);
    expect(none.headers['x-total']).toBe('0');
    expect((await pl.get(team.reporter, `/projects/${other.id}/repository/commits/${sha}/builds?scope=success`).expect(200)).body).toEqual([]);
    // a sha the repository does not have, or no sha at all: 404 (8.17: `return not_found! unless user_project.commit(params[:sha])`)
    const unknown = await pl.get(team.reporter, `/projects/${other.id}/repository/commits/${'1'.repeat(40)}/builds`).expect(404);
    expect(unknown.body).toEqual({ message: '404 Not Found' });
    expect((await pl.get(team.reporter, `/projects/${other.id}/repository/commits/nope/builds`)).status).toBe(404);
    // still 404 for a project that does not exist or that the caller cannot see; 403 below reporter
    expect((await pl.get(team.reporter, `/projects/999999/repository/commits/${sha}/builds`).expect(404)).body).toEqual({ message: '404 Project Not Found' });
    expect((await pl.get(team.stranger, `/projects/${other.id}/repository/commits/${sha}/builds`).expect(404)).body).toEqual({
      message: '404 Project Not Found',
    });
    expect((await pl.get(team.guest, `/projects/${other.id}/repository/commits/${sha}/builds`)).status).toBe(403);
  });

  it('one build; 404 Build Not Found for an unknown id', async () => {
    expect((await pl.get(team.reporter, `/projects/${project.id}/builds/${build.id}`).expect(200)).body.id).toBe(build.id);
    const missing = await pl.get(team.reporter, `/projects/${project.id}/builds/999999`).expect(404);
    expect(missing.body).toEqual({ message: '404 Build Not Found' });
  });

  it('the trace: text/plain, tokens masked', async () => {
    const res = await pl.get(team.reporter, `/projects/${project.id}/builds/${build.id}/trace`).expect(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.headers['content-disposition']).toBe(`infile; filename="${build.id}.log"`);
    expect(res.text).toBe('log with xxxxxx and xxxxxx\n');
  });

  it('cancel: developer+ only (reporter 403); 201 canceled; the runner is told through PATCH', async () => {
    expect((await pl.post(team.reporter, `/projects/${project.id}/builds/${build.id}/cancel`)).status).toBe(403);
    const res = await pl.post(team.developer, `/projects/${project.id}/builds/${build.id}/cancel`).expect(201);
    await expectSchema(res, 'Build');
    expect(res.body.status).toBe('canceled');
    expect(res.body).toHaveProperty('artifacts_file', null);
    const patch = await c.api.patchTrace(build.id, build.token, (await c.builds(project.id))[0].trace_size, 'more');
    expect(patch.headers['build-status']).toBe('canceled');
    // a finished build is returned unchanged
    expect((await pl.post(team.developer, `/projects/${project.id}/builds/${build.id}/cancel`).expect(201)).body.status).toBe('canceled');
    const [pipeline] = await c.pipelines(project.id);
    expect(pipeline.status).toBe('canceled');
  });

  it('retry: a new pending build; the old one keeps its status; not retryable while pending', async () => {
    const res = await pl.post(team.developer, `/projects/${project.id}/builds/${build.id}/retry`).expect(201);
    await expectSchema(res, 'Build');
    expect(res.body).toMatchObject({ name: 'build', stage: 'build', status: 'pending', finished_at: null, runner: null, user: { id: team.developer.id } });
    expect(res.body).toHaveProperty('artifacts_file', null);
    expect((await pl.get(team.developer, `/projects/${project.id}/builds/${build.id}`).expect(200)).body).toHaveProperty('artifacts_file', null);
    expect(res.body.id).not.toBe(build.id);
    expect((await pl.get(team.developer, `/projects/${project.id}/builds/${build.id}`).expect(200)).body.status).toBe('canceled');
    const again = await pl.post(team.developer, `/projects/${project.id}/builds/${res.body.id}/retry`).expect(403);
    expect(again.body).toEqual({ message: '403 Forbidden - Build is not retryable' });
    const [pipeline] = await c.pipelines(project.id);
    expect(pipeline.status).toBe('pending');
  });

  it('erase: finished builds with a trace; status unchanged, download_url null; then not erasable', async () => {
    const res = await pl.post(team.developer, `/projects/${project.id}/builds/${build.id}/erase`).expect(201);
    await expectSchema(res, 'Build');
    expect(res.body).toMatchObject({ id: build.id, status: 'canceled', download_url: null });
    expect(res.body).not.toHaveProperty('artifacts_file'); // download_url in its place (spec)
    expect((await pl.get(team.reporter, `/projects/${project.id}/builds/${build.id}/trace`).expect(200)).text).toBe('');
    const again = await pl.post(team.developer, `/projects/${project.id}/builds/${build.id}/erase`).expect(403);
    expect(again.body).toEqual({ message: '403 Forbidden - Build is not erasable!' });
    const [row] = await t.sql<Json>(`SELECT erased_at, erased_by_id FROM ci_builds WHERE id = $1`, [build.id]);
    expect(row.erased_by_id).toBe(team.developer.id);
  });

  it('artifacts: 404 when there are none, the file otherwise', async () => {
    expect((await pl.get(team.reporter, `/projects/${project.id}/builds/${build.id}/artifacts`)).status).toBe(404);
    next = (await c.api.requestBuild(runner.token).expect(201)).body;
    await t.http.post(`/ci/api/v1/builds/${next.id}/artifacts`).set('BUILD-TOKEN', next.token).attach('file', Buffer.from('zipzip'), 'art.zip').expect(201);
    const res = await pl.get(team.reporter, `/projects/${project.id}/builds/${next.id}/artifacts`).expect(200);
    expect(res.headers['content-disposition']).toBe('attachment; filename=art.zip');
    expect(Buffer.from(res.body).toString()).toBe('zipzip');
  });

  it('artifacts with expire_in are deleted by the expiry job once expired (file and columns); others stay', async () => {
    const { ArtifactsExpiry, ARTIFACTS_EXPIRY_QUEUE } = await import('../src/ci/builds/artifacts-expiry');
    const { BuildsService } = await import('../src/ci/builds/builds.service');
    const { existsSync } = await import('node:fs');
    const expiry = t.app.app.get(ArtifactsExpiry);
    const path = t.app.app.get(BuildsService).files.artifactsPath(next.id);
    // the periodic job is on the durable queue (scheduled at start, one per minute slot)
    const [scheduled] = await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM pgboss.job WHERE name = $1`, [ARTIFACTS_EXPIRY_QUEUE]);
    expect(scheduled.n).toBeGreaterThanOrEqual(1);
    expect(await expiry.expire()).toEqual([]); // no expiry: kept
    await t.http
      .post(`/ci/api/v1/builds/${next.id}/artifacts`)
      .set('BUILD-TOKEN', next.token)
      .field('expire_in', '1 sec')
      .attach('file', Buffer.from('short-lived'), 'art.zip')
      .expect(201);
    expect(await expiry.expire()).toEqual([]); // not expired yet
    expect(existsSync(path)).toBe(true);
    await new Promise((r) => setTimeout(r, 1100));
    expect(await expiry.expire()).toEqual([next.id]);
    expect(existsSync(path)).toBe(false);
    const [row] = await t.sql<Json>(`SELECT artifacts_file, artifacts_size, artifacts_expire_at FROM ci_builds WHERE id = $1`, [next.id]);
    expect(row).toEqual({ artifacts_file: null, artifacts_size: null, artifacts_expire_at: null });
    expect((await pl.get(team.reporter, `/projects/${project.id}/builds/${next.id}/artifacts`)).status).toBe(404);
  });

  it('public builds of a public project are readable by any signed-in user; private ones 404', async () => {
    const other = await pl.project(team, 20);
    expect((await pl.get(team.stranger, `/projects/${other.id}/builds`)).status).toBe(200);
    expect((await pl.get(team.stranger, `/projects/${priv.id}/builds/${build.id}`)).status).toBe(404);
  });

  it('a page of 100 builds costs the same number of queries as a page of 20', async () => {
    const [pipeline] = await c.pipelines(project.id);
    await t.sql(
      `WITH s AS (
         INSERT INTO commit_statuses (project_id, sha, ref, name, stage, status, allow_failure, pipeline_id, author_id)
         SELECT $1, $2, 'master', 'job ' || g, 'test', 'success', false, $3, $4 FROM generate_series(1, 120) g RETURNING id)
       INSERT INTO ci_builds (id, pipeline_id, project_id, stage_idx, commands, runner_id, user_id)
       SELECT id, $3, $1, 1, 'x', $5, $4 FROM s`,
      [project.id, project.sha, pipeline.id, team.master.id, runner.id],
    );
    const q20 = await countQueries(t, () => pl.get(team.developer, `/projects/${project.id}/builds?per_page=20`).expect(200));
    const q100 = await countQueries(t, async () => {
      const res = await pl.get(team.developer, `/projects/${project.id}/builds?per_page=100`).expect(200);
      expect(res.body).toHaveLength(100);
      expect(res.body[50].user.id).toBe(team.master.id);
    });
    expect(q100).toBe(q20);
  });
});
