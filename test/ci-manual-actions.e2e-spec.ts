import { ci, Json, waitFor } from './helpers/ci';
import { planning, Team } from './helpers/planning';
import { expectSchema } from './helpers/schema';
import { startTestApp, TestApp } from './helpers/test-app';

/** Three stages: a coverage regex, an on_failure job, and a manual deploy (GitLab 8.17's .gitlab-ci.yml). */
const YML = `
stages: [build, test, deploy]
build:
  stage: build
  script: make
  coverage: /Coverage \\d+\\.\\d+%/
test:
  stage: test
  script: make test
cleanup:
  stage: test
  script: cleanup
  when: on_failure
deploy:
  stage: deploy
  script: deploy
  when: manual
  environment: production
`;

describe('pipeline processing (GitLab 8.17), manual actions and play, coverage', () => {
  let t: TestApp;
  let c: ReturnType<typeof ci>;
  let pl: ReturnType<typeof planning>;
  let team: Team;

  beforeAll(async () => {
    t = await startTestApp();
    c = ci(t);
    pl = planning(t);
    team = await pl.team();
  }, 240_000);
  afterAll(() => t.close());

  /** A private project of the team with `yml` pushed through the files API, its pipeline, and a runner of its own. */
  async function ciProject(yml: string) {
    const p = await pl.project(team, 0, { public_builds: false });
    const shown = await pl.get(team.owner, `/projects/${p.id}`).expect(200);
    await pl
      .post(team.owner, `/projects/${p.id}/repository/files`)
      .send({ file_path: '.gitlab-ci.yml', branch_name: 'master', content: yml, commit_message: 'ci' })
      .expect(201);
    const pipelineId = await waitFor(async () => (await c.pipelines(p.id))[0]?.id as number | undefined, 'pipeline');
    const runner = (await c.api.register({ token: shown.body.runners_token })).body as { id: number; token: string };
    return { id: p.id, pipelineId, runner };
  }
  const statuses = async (projectId: number) => (await c.builds(projectId)).map((b: Json) => [b.name, b.status]);
  const pipelineStatus = async (projectId: number) => (await c.pipelines(projectId))[0].status;
  /** The runner takes the next build, writes `trace` and finishes it with `state`. */
  async function run(p: { runner: { token: string } }, name: string, state: 'success' | 'failed', trace = 'ok\n') {
    const b = (await c.api.requestBuild(p.runner.token).expect(201)).body;
    expect(b.name).toBe(name);
    await c.api.patchTrace(b.id, b.token, 0, trace).expect(202);
    await c.api.update(b.id, { token: p.runner.token, state }).expect(200);
    return b;
  }

  it('all builds exist from the start; stages move on; a manual action reached waits as manual and does not hold the pipeline', async () => {
    const p = await ciProject(YML);
    expect(await statuses(p.id)).toEqual([
      ['build', 'pending'],
      ['test', 'created'],
      ['cleanup', 'created'],
      ['deploy', 'created'],
    ]);
    expect(await pipelineStatus(p.id)).toBe('pending');
    const rows = await t.sql<Json>(`SELECT stage_idx, environment, coverage_regex FROM ci_builds WHERE pipeline_id = $1 AND stage_idx <> 1 ORDER BY id`, [
      p.pipelineId,
    ]);
    expect(rows).toEqual([
      { stage_idx: 0, environment: null, coverage_regex: 'Coverage \\d+\\.\\d+%' },
      { stage_idx: 2, environment: 'production', coverage_regex: null },
    ]);

    // the trace prints coverage twice: the last match counts
    const build = await run(p, 'build', 'success', 'Coverage 10.00%\nrunning\nCoverage 87.25%\ndone\n');
    expect(await statuses(p.id)).toEqual([
      ['build', 'success'],
      ['test', 'pending'],
      ['cleanup', 'skipped'],
      ['deploy', 'created'],
    ]);
    expect(await pipelineStatus(p.id)).toBe('running');
    const shown = await pl.get(team.reporter, `/projects/${p.id}/builds/${build.id}`).expect(200);
    await expectSchema(shown, 'Build');
    expect(shown.body).toMatchObject({ coverage: 87.25, pipeline: { id: p.pipelineId, ref: 'master', status: 'running' } });

    await run(p, 'test', 'success');
    expect(await statuses(p.id)).toEqual([
      ['build', 'success'],
      ['test', 'success'],
      ['cleanup', 'skipped'],
      ['deploy', 'manual'],
    ]);
    // the action waits; the pipeline is done (8.17: actions do not block it), its coverage the mean of its builds'
    expect(await pipelineStatus(p.id)).toBe('success');
    const pipeline = await pl.get(team.reporter, `/projects/${p.id}/pipelines/${p.pipelineId}`).expect(200);
    expect(pipeline.body).toMatchObject({ status: 'success', coverage: '87.25' });
    expect((await c.api.requestBuild(p.runner.token)).status).toBe(404); // the runner only claims pending builds
    const manual = await pl.get(team.reporter, `/projects/${p.id}/builds?scope=manual`).expect(200);
    expect(manual.body.map((b: Json) => [b.name, b.status])).toEqual([['deploy', 'manual']]);
  });

  describe('POST /projects/:id/builds/:build_id/play', () => {
    let p: Awaited<ReturnType<typeof ciProject>>;
    let deploy: Json;
    let build: Json;

    beforeAll(async () => {
      p = await ciProject(YML);
      await run(p, 'build', 'success');
      await run(p, 'test', 'success');
      const all = await c.builds(p.id);
      deploy = all.find((b: Json) => b.name === 'deploy')!;
      build = all.find((b: Json) => b.name === 'build')!;
      expect(deploy.status).toBe('manual');
    }, 60_000);

    it('401 without a token, 404 for a stranger of the private project, 404 for an unknown build, 403 for a reporter', async () => {
      await t.http.post(`/api/v3/projects/${p.id}/builds/${deploy.id}/play`).expect(401);
      expect((await pl.post(team.stranger, `/projects/${p.id}/builds/${deploy.id}/play`).expect(404)).body).toEqual({ message: '404 Project Not Found' });
      expect((await pl.post(team.developer, `/projects/${p.id}/builds/999999/play`).expect(404)).body).toEqual({ message: '404 Build Not Found' });
      expect((await pl.post(team.developer, `/projects/${p.id}/builds/nope/play`)).status).toBe(404);
      expect((await pl.post(team.reporter, `/projects/${p.id}/builds/${deploy.id}/play`).expect(403)).body).toEqual({ message: '403 Forbidden' });
      expect((await pl.post(team.guest, `/projects/${p.id}/builds/${deploy.id}/play`)).status).toBe(403);
      expect((await c.builds(p.id)).find((b: Json) => b.id === deploy.id)!.status).toBe('manual');
    });

    it('400 Unplayable Job for a build that is no manual action', async () => {
      expect((await pl.post(team.developer, `/projects/${p.id}/builds/${build.id}/play`).expect(400)).body).toEqual({ message: '400 Unplayable Job' });
    });

    it('200 with the build, enqueued as the player; the runner gets it with CI_BUILD_MANUAL and the player as GITLAB_USER_*; a second play is 400', async () => {
      const res = await pl.post(team.developer, `/projects/${p.id}/builds/${deploy.id}/play`).expect(200);
      await expectSchema(res, 'Build');
      expect(res.body).toMatchObject({ id: deploy.id, name: 'deploy', status: 'pending', user: { id: team.developer.id } });
      expect(await pipelineStatus(p.id)).toBe('running');
      expect((await pl.post(team.developer, `/projects/${p.id}/builds/${deploy.id}/play`).expect(400)).body).toEqual({ message: '400 Unplayable Job' });

      const claimed = (await c.api.requestBuild(p.runner.token).expect(201)).body;
      expect(claimed.id).toBe(deploy.id);
      const vars = Object.fromEntries(claimed.variables.map((v: Json) => [v.key, v.value]));
      expect(vars).toMatchObject({ CI_BUILD_MANUAL: 'true', GITLAB_USER_ID: String(team.developer.id), GITLAB_USER_EMAIL: team.developer.email });
      await c.api.update(claimed.id, { token: p.runner.token, state: 'success' }).expect(200);
      expect(await pipelineStatus(p.id)).toBe('success');
    });
  });

  it('after a failure: the on_failure job runs, the later stage and its manual action are skipped; a skipped action is still playable (8.17)', async () => {
    const p = await ciProject(YML);
    await run(p, 'build', 'failed');
    expect(await statuses(p.id)).toEqual([
      ['build', 'failed'],
      ['test', 'skipped'],
      ['cleanup', 'pending'],
      ['deploy', 'created'], // its stage waits for the on_failure job of the stage before
    ]);
    expect(await pipelineStatus(p.id)).toBe('running');
    await run(p, 'cleanup', 'success');
    expect((await statuses(p.id))[3]).toEqual(['deploy', 'skipped']);
    expect(await pipelineStatus(p.id)).toBe('failed');
    const deploy = (await c.builds(p.id)).find((b: Json) => b.name === 'deploy')!;
    const played = await pl.post(team.master, `/projects/${p.id}/builds/${deploy.id}/play`).expect(200);
    expect(played.body).toMatchObject({ id: deploy.id, status: 'pending' });
  });

  it('a retry puts the skipped builds after its stage back to created; they run when it succeeds (8.17 mark_as_processable_after_stage)', async () => {
    const p = await ciProject(YML);
    const failed = await run(p, 'build', 'failed');
    await run(p, 'cleanup', 'success');
    const retried = await pl.post(team.developer, `/projects/${p.id}/builds/${failed.id}/retry`).expect(201);
    expect(retried.body.status).toBe('pending');
    expect(await statuses(p.id)).toEqual([
      ['build', 'failed'],
      ['test', 'created'],
      ['cleanup', 'success'],
      ['deploy', 'created'],
      ['build', 'pending'],
    ]);
    await run(p, 'build', 'success');
    expect(await statuses(p.id)).toEqual([
      ['build', 'failed'],
      ['test', 'pending'],
      ['cleanup', 'success'],
      ['deploy', 'created'],
      ['build', 'success'],
    ]);
  });

  it('canceling a pipeline cancels its created builds too, before any later stage starts', async () => {
    const p = await ciProject(YML);
    const res = await pl.post(team.developer, `/projects/${p.id}/pipelines/${p.pipelineId}/cancel`).expect(200);
    expect(res.body.status).toBe('canceled');
    expect(await statuses(p.id)).toEqual([
      ['build', 'canceled'],
      ['test', 'canceled'],
      ['cleanup', 'canceled'],
      ['deploy', 'canceled'],
    ]);
    expect((await c.api.requestBuild(p.runner.token)).status).toBe(404);
  });

  it('a pipeline made before 8.17 processing (only its first stage has builds) gets its later stages when a build ends (8.17 ensure_created_builds!)', async () => {
    const p = await ciProject(YML);
    // as the 8.8 processing left it: the later stages not created yet, the pipeline marked by the migration
    await t.sql(`DELETE FROM commit_statuses WHERE pipeline_id = $1 AND name <> 'build'`, [p.pipelineId]);
    await t.sql(`UPDATE ci_pipelines SET legacy_stages = true WHERE id = $1`, [p.pipelineId]);
    await run(p, 'build', 'success');
    expect(await statuses(p.id)).toEqual([
      ['build', 'success'],
      ['test', 'pending'],
      ['cleanup', 'skipped'],
      ['deploy', 'created'],
    ]);
    expect((await c.pipelines(p.id))[0]).toMatchObject({ status: 'running', legacy_stages: false });
  });

  it('the longest coverage regex and environment name the grammar takes are stored whole (text columns)', async () => {
    const regex = 'C'.repeat(250) + '(\\d+)';
    const env = 'review/' + 'e'.repeat(300);
    const p = await ciProject(`build:\n  script: make\n  coverage: /${regex}/\n  environment: ${env}\n`);
    expect((await c.pipelines(p.id))[0]).toMatchObject({ status: 'pending', yaml_errors: null });
    const [row] = await t.sql<Json>(`SELECT environment, coverage_regex FROM ci_builds WHERE pipeline_id = $1`, [p.pipelineId]);
    expect(row).toEqual({ environment: env, coverage_regex: regex });
  });

  it("the project's build_coverage_regex applies when the job has none; a hostile regex gives no coverage and no error", async () => {
    const p = await ciProject('build:\n  script: make\n');
    await t.sql(`UPDATE projects SET build_coverage_regex = $2 WHERE id = $1`, [p.id, '\\(\\d+.\\d+\\%\\) covered']);
    const b = await run(p, 'build', 'success', 'Coverage 1033 / 1051 LOC (98.29%) covered\n');
    expect((await pl.get(team.reporter, `/projects/${p.id}/builds/${b.id}`).expect(200)).body.coverage).toBe(98.29);

    const q = await ciProject('build:\n  script: make\n  coverage: /(a+)+b/\n');
    const started = Date.now();
    const h = await run(q, 'build', 'success', 'a'.repeat(40_000) + '!\n');
    expect(Date.now() - started).toBeLessThan(5000);
    expect((await pl.get(team.reporter, `/projects/${q.id}/builds/${h.id}`).expect(200)).body.coverage).toBeNull();
    expect(await pipelineStatus(q.id)).toBe('success');
  });
});
