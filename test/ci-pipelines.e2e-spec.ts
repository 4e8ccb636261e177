import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SecretsService } from '../src/common/crypto/secrets.service';
import { BUILD_FINISHED_QUEUE, BuildsService } from '../src/ci/builds/builds.service';
import { QueueService } from '../src/queue/queue.service';
import { BuildTimeoutSweeper, SWEEP_QUEUE } from '../src/ci/pipelines/build-timeout.sweeper';
import { ci, Json, waitFor } from './helpers/ci';
import { GitCli } from './helpers/git-cli';
import { startTestApp, TestApp, TestUser } from './helpers/test-app';

const SIMPLE = 'build:\n  stage: build\n  script: make\ntest:\n  script: make test\n';

describe('CI pipelines from pushes', () => {
  let t: TestApp;
  let c: ReturnType<typeof ci>;
  let owner: TestUser;
  let home: string;
  let git: GitCli;

  beforeAll(async () => {
    t = await startTestApp();
    c = ci(t);
    owner = await t.createUser();
    await t.http.put(`/api/v3/users/${owner.id}`).set('PRIVATE-TOKEN', t.root.token).send({ projects_limit: 100 }).expect(200);
    home = mkdtempSync(join(tmpdir(), 'ci-git-'));
    git = await GitCli.listen(t, home);
  });
  afterAll(async () => {
    await t.close();
    rmSync(home, { recursive: true, force: true });
  });

  it("invalid YAML: a failed pipeline with GitLab's error text and no builds", async () => {
    const p = await c.project(owner, 'rspec:\n  script: x\n  when: sometimes\n');
    const [pl] = await c.pipelines(p.id);
    expect(pl).toMatchObject({ status: 'failed', yaml_errors: 'jobs:rspec when should be on_success, on_failure, always or manual' });
    expect(await c.builds(p.id)).toEqual([]);
  });

  it('a billion-laughs file is a yaml error, not an outage', async () => {
    const lol = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
    for (let i = 1; i < 9; i++) {
      const prev = String.fromCharCode(96 + i);
      lol.push(`${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(9).fill(`*${prev}`).join(',')}]`);
    }
    const p = await c.project(owner, lol.join('\n') + '\nrspec:\n  script: [*i]\n');
    const [pl] = await c.pipelines(p.id);
    expect(pl.status).toBe('failed');
    expect(pl.yaml_errors).toMatch(/expands to more than 4 MB once its aliases are resolved \(possible billion laughs attack\)/);
  });

  it('no .gitlab-ci.yml: no pipeline; builds disabled: no pipeline', async () => {
    const p = await c.project(owner, null);
    await new Promise((r) => setTimeout(r, 300));
    expect(await c.pipelines(p.id)).toEqual([]);
    const off = await c.project(owner, null, { builds_enabled: false });
    await t.http
      .post(`/api/v3/projects/${off.id}/repository/files`)
      .set('PRIVATE-TOKEN', owner.token)
      .send({ file_path: '.gitlab-ci.yml', branch_name: 'master', content: SIMPLE, commit_message: 'ci' })
      .expect(201);
    await new Promise((r) => setTimeout(r, 300));
    expect(await c.pipelines(off.id)).toEqual([]);
  });

  it('[ci skip] in the commit message: a skipped pipeline without builds', async () => {
    const p = await c.project(owner, null);
    await t.http
      .post(`/api/v3/projects/${p.id}/repository/files`)
      .set('PRIVATE-TOKEN', owner.token)
      .send({ file_path: '.gitlab-ci.yml', branch_name: 'master', content: SIMPLE, commit_message: 'docs only [ci skip]' })
      .expect(201);
    const [pl] = await waitFor(async () => {
      const list = await c.pipelines(p.id);
      return list.length ? list : undefined;
    });
    expect(pl.status).toBe('skipped');
    expect(await c.builds(p.id)).toEqual([]);
  });

  // GitLab 8.17's skip_ci?: /\[(ci skip|skip ci)\]/i; the pipeline is saved `skipped`, with no builds
  it.each(['docs [CI SKIP]', 'docs [Skip CI]', 'docs [skip ci]'])('%s in the commit message: a skipped pipeline without builds', async (message) => {
    const p = await c.project(owner, null);
    await t.http
      .post(`/api/v3/projects/${p.id}/repository/files`)
      .set('PRIVATE-TOKEN', owner.token)
      .send({ file_path: '.gitlab-ci.yml', branch_name: 'master', content: SIMPLE, commit_message: message })
      .expect(201);
    const [pl] = await waitFor(async () => {
      const list = await c.pipelines(p.id);
      return list.length ? list : undefined;
    });
    expect(pl.status).toBe('skipped');
    expect(await c.builds(p.id)).toEqual([]);
  });

  it('git over HTTP: a push whose head commit says [Skip CI] creates no builds; the next push without it does', async () => {
    const p = await c.project(owner, null);
    const work = join(home, `skip-${p.id}`);
    await git.ok(['clone', '-q', git.url(p.path, owner.username, owner.password), work]);
    await git.commit(work, { '.gitlab-ci.yml': SIMPLE }, 'add ci\n\n[Skip CI]');
    await git.ok(['push', '-q', 'origin', 'master'], work);
    const [skipped] = await waitFor(async () => {
      const list = await c.pipelines(p.id);
      return list.length ? list : undefined;
    }, 'pipeline of the push');
    expect(skipped.status).toBe('skipped');
    expect(await c.builds(p.id)).toEqual([]);
    await git.commit(work, { 'x.txt': 'x' }, 'code');
    await git.ok(['push', '-q', 'origin', 'master'], work);
    const builds = await waitFor(async () => {
      const list = await c.builds(p.id);
      return list.length ? list : undefined;
    }, 'builds of the second push');
    // 8.17: every build exists from the pipeline's creation; the later stage waits as `created`
    expect(builds.map((b: Json) => [b.name, b.status])).toEqual([
      ['build', 'pending'],
      ['test', 'created'],
    ]);
    const pls = await c.pipelines(p.id);
    expect(pls.map((x) => x.status)).toEqual(['skipped', 'pending']);
    // its pending build is not left for the shared runners of the tests that follow
    await t.http.post(`/api/v3/projects/${p.id}/pipelines/${pls[1].id}/cancel`).set('PRIVATE-TOKEN', owner.token).expect(200);
  });

  it('branch and tag creation through the API create pipelines; only/except and CI_BUILD_TAG', async () => {
    const yml = 'rel:\n  script: release\n  only: [tags]\nall:\n  script: x\n  except: ["/^wip-/"]\n';
    const p = await c.project(owner, yml);
    await t.http
      .post(`/api/v3/projects/${p.id}/repository/branches`)
      .set('PRIVATE-TOKEN', owner.token)
      .send({ branch_name: 'feature', ref: 'master' })
      .expect(201);
    await t.http
      .post(`/api/v3/projects/${p.id}/repository/branches`)
      .set('PRIVATE-TOKEN', owner.token)
      .send({ branch_name: 'wip-x', ref: 'master' })
      .expect(201);
    await t.http.post(`/api/v3/projects/${p.id}/repository/tags`).set('PRIVATE-TOKEN', owner.token).send({ tag_name: 'v1.0', ref: 'master' }).expect(201);
    const pls = await waitFor(async () => {
      const list = await c.pipelines(p.id);
      return list.length === 4 ? list : undefined;
    }, 'four pipelines');
    expect(pls.map((x) => [x.ref, x.tag, x.status])).toEqual([
      ['master', false, 'pending'],
      ['feature', false, 'pending'],
      ['wip-x', false, 'skipped'],
      ['v1.0', true, 'pending'],
    ]);
    const builds = await c.builds(p.id);
    expect(builds.map((b) => [b.ref, b.name])).toEqual([
      ['master', 'all'],
      ['feature', 'all'],
      ['v1.0', 'rel'],
      ['v1.0', 'all'],
    ]);
    const runner = (await c.api.register({ token: p.runnersToken })).body;
    const claimed: Json[] = [];
    for (;;) {
      const res = await c.api.requestBuild(runner.token);
      if (res.status !== 201) break;
      claimed.push(res.body);
    }
    const rel = claimed.find((b) => b.name === 'rel')!;
    expect(rel).toMatchObject({ ref: 'v1.0', tag: true, sha: p.sha });
    const ciBuild = rel.variables.filter((v: Json) =>
      ['CI_BUILD_TAG', 'CI_BUILD_NAME', 'CI_BUILD_STAGE', 'CI_BUILD_REF_NAME', 'CI_BUILD_REF_SLUG'].includes(v.key),
    );
    expect(ciBuild).toEqual([
      { key: 'CI_BUILD_REF_NAME', value: 'v1.0', public: true },
      { key: 'CI_BUILD_REF_SLUG', value: 'v1-0', public: true },
      { key: 'CI_BUILD_NAME', value: 'rel', public: true },
      { key: 'CI_BUILD_STAGE', value: 'test', public: true },
      { key: 'CI_BUILD_TAG', value: 'v1.0', public: true },
    ]);
  });

  it("GitLab 8.17's variables in its order: predefined (build, project, pipeline, runner), yaml, user, project secrets (public: false)", async () => {
    const p = await c.project(owner, 'variables:\n  DB_NAME: postgres\nspinach:\n  script: x\n  variables:\n    JOB: one\n');
    const secrets = t.app.app.get(SecretsService);
    await t.sql(`INSERT INTO ci_variables (project_id, key, value_encrypted) VALUES ($1, 'SECRET_KEY', $2)`, [p.id, secrets.encrypt('secret_value')]);
    const runner = (await c.api.register({ token: p.runnersToken, description: 'my runner', tag_list: 'docker, linux' })).body;
    const res = await c.api.requestBuild(runner.token).expect(201);
    const [namespace, name] = p.path.split('/');
    expect(res.body.variables).toEqual([
      { key: 'CI', value: 'true', public: true },
      { key: 'GITLAB_CI', value: 'true', public: true },
      { key: 'CI_BUILD_ID', value: String(res.body.id), public: true },
      { key: 'CI_BUILD_TOKEN', value: res.body.token, public: false },
      { key: 'CI_BUILD_REF', value: p.sha, public: true },
      { key: 'CI_BUILD_BEFORE_SHA', value: expect.stringMatching(/^[0-9a-f]{40}$/), public: true },
      { key: 'CI_BUILD_REF_NAME', value: 'master', public: true },
      { key: 'CI_BUILD_REF_SLUG', value: 'master', public: true },
      { key: 'CI_BUILD_NAME', value: 'spinach', public: true },
      { key: 'CI_BUILD_STAGE', value: 'test', public: true },
      { key: 'CI_SERVER_NAME', value: 'GitLab', public: true },
      { key: 'CI_SERVER_VERSION', value: (await t.http.get('/api/v3/version').set('PRIVATE-TOKEN', owner.token).expect(200)).body.version, public: true },
      { key: 'CI_SERVER_REVISION', value: expect.any(String), public: true },
      { key: 'CI_PROJECT_ID', value: String(p.id), public: true },
      { key: 'CI_PROJECT_NAME', value: name, public: true },
      { key: 'CI_PROJECT_PATH', value: p.path, public: true },
      { key: 'CI_PROJECT_NAMESPACE', value: namespace, public: true },
      { key: 'CI_PROJECT_URL', value: `http://gitlab.test/${p.path}`, public: true },
      { key: 'CI_PIPELINE_ID', value: String(p.pipelineId), public: true },
      { key: 'CI_RUNNER_ID', value: String(runner.id), public: true },
      { key: 'CI_RUNNER_DESCRIPTION', value: 'my runner', public: true },
      { key: 'CI_RUNNER_TAGS', value: 'docker, linux', public: true },
      { key: 'DB_NAME', value: 'postgres', public: true },
      { key: 'JOB', value: 'one', public: true },
      { key: 'GITLAB_USER_ID', value: String(owner.id), public: true },
      { key: 'GITLAB_USER_EMAIL', value: owner.email, public: true },
      { key: 'SECRET_KEY', value: 'secret_value', public: false },
    ]);
  });

  it('who takes what: shared runners only where enabled, specific runners only their projects, inactive runners nothing', async () => {
    const a = await c.project(owner, SIMPLE, { shared_runners_enabled: false });
    const b = await c.project(owner, SIMPLE);
    const shared = await c.registerRunner();
    const specificA = (await c.api.register({ token: a.runnersToken })).body;
    // b's build is older than nothing shared may take from a
    const s1 = await c.api.requestBuild(shared.token);
    expect(s1.status).toBe(201);
    expect(s1.body.project_id).toBe(b.id);
    expect((await c.api.requestBuild(shared.token)).status).toBe(404);
    const inactive = (await c.api.register({ token: a.runnersToken })).body;
    await t.sql(`UPDATE ci_runners SET active = false WHERE id = $1`, [inactive.id]);
    expect((await c.api.requestBuild(inactive.token)).status).toBe(404);
    const s2 = await c.api.requestBuild(specificA.token);
    expect(s2.status).toBe(201);
    expect(s2.body.project_id).toBe(a.id);
  });

  it('git over HTTP: a push creates a pipeline; the build token clones read-only while the pipeline is active', async () => {
    const p = await c.project(owner, null);
    const work = join(home, `w-${p.id}`);
    await git.ok(['clone', '-q', git.url(p.path, owner.username, owner.password), work]);
    await git.commit(work, { '.gitlab-ci.yml': SIMPLE }, 'add ci');
    await git.ok(['push', '-q', 'origin', 'master'], work);
    await waitFor(async () => (await c.pipelines(p.id)).length === 1, 'pipeline of the push');
    const runner = (await c.api.register({ token: p.runnersToken })).body;
    const build = (await c.api.requestBuild(runner.token).expect(201)).body;
    const url = new URL(build.repo_url);
    expect(url.username).toBe('gitlab-ci-token');
    const cloned = join(home, `clone-${p.id}`);
    await git.ok(['clone', '-q', git.url(p.path, 'gitlab-ci-token', build.token), cloned]);
    expect((await git.ok(['rev-parse', 'HEAD'], cloned)).trim()).toBe(build.sha);
    await git.commit(cloned, { 'x.txt': 'x' }, 'not allowed');
    const push = await git.run(['push', '-q', 'origin', 'master'], cloned);
    expect(push.code).not.toBe(0);
    expect((await git.run(['ls-remote', git.url(p.path, 'gitlab-ci-token', 'wrong-token')])).code).not.toBe(0);
    // the pipeline ends: the token no longer clones
    await c.api.update(build.id, { token: runner.token, state: 'failed' }).expect(200);
    await waitFor(async () => (await c.pipelines(p.id))[0].status === 'failed', 'pipeline failed');
    expect((await git.run(['ls-remote', git.url(p.path, 'gitlab-ci-token', build.token)])).code).not.toBe(0);
  });

  it('a running build past its timeout is failed with a trace line; the pipeline moves on', async () => {
    const p = await c.project(owner, SIMPLE + 'after:\n  stage: deploy\n  script: x\n  when: on_failure\n');
    const runner = (await c.api.register({ token: p.runnersToken })).body;
    const build = (await c.api.requestBuild(runner.token).expect(201)).body;
    await c.api.patchTrace(build.id, build.token, 0, 'working...').expect(202);
    const sweeper = t.app.app.get(BuildTimeoutSweeper);
    // the sweep runs as a job on the durable queue, rescheduling itself (no timer in memory)
    const jobs = await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM pgboss.job WHERE name = $1`, [SWEEP_QUEUE]);
    expect(jobs[0].n).toBeGreaterThan(0);
    expect(await sweeper.sweep()).toEqual([]);
    await t.sql(`UPDATE commit_statuses SET started_at = now() - interval '3601 seconds' WHERE id = $1`, [build.id]);
    expect(await sweeper.sweep()).toEqual([build.id]);
    const builds = await c.builds(p.id);
    // 8.17: the on_success stage after the failure is skipped, the on_failure job runs
    expect(builds.map((b) => [b.name, b.status])).toEqual([
      ['build', 'failed'],
      ['test', 'skipped'],
      ['after', 'pending'],
    ]);
    const svc = t.app.app.get(BuildsService);
    const row = (await svc.find(build.id))!;
    const chunks: Buffer[] = [];
    for await (const ch of svc.traceStream(row, p.runnersToken) as AsyncIterable<Buffer>) chunks.push(Buffer.from(ch));
    expect(Buffer.concat(chunks).toString()).toMatch(/^working\.\.\.\nERROR: Build failed: execution took longer than 3600 seconds/);
    // the runner's late PUT changes nothing
    expect((await c.api.update(build.id, { token: runner.token, state: 'success' })).status).toBe(404);
  });

  it('a build\'s end writes a durable "move the pipeline on" job with the transition: taken over in-process, or run by a worker after a crash', async () => {
    const p = await c.project(owner, SIMPLE);
    const runner = (await c.api.register({ token: p.runnersToken })).body;
    // normal path: the job is written with the transition and taken over (cancelled) by the in-process step
    const first = (await c.api.requestBuild(runner.token).expect(201)).body;
    await c.api.update(first.id, { token: runner.token, state: 'success' }).expect(200);
    expect((await c.builds(p.id)).map((b) => [b.name, b.status])).toEqual([
      ['build', 'success'],
      ['test', 'pending'],
    ]);
    const jobs = await t.sql<{ state: string }>(`SELECT state::text AS state FROM pgboss.job WHERE name = $1 AND (data->>'buildId')::int = $2`, [
      BUILD_FINISHED_QUEUE,
      first.id,
    ]);
    expect(jobs).toEqual([{ state: 'cancelled' }]);
    // a crash after the transition committed (with its job) and before the in-process step:
    // the transition and the job are written as the service writes them, the step never runs
    const second = (await c.api.requestBuild(runner.token).expect(201)).body;
    await t.sql(`UPDATE commit_statuses SET status = 'failed', finished_at = now() WHERE id = $1`, [second.id]);
    const queue = t.app.app.get(QueueService);
    await queue.send(BUILD_FINISHED_QUEUE, { pipelineId: (await c.pipelines(p.id))[0].id, buildId: second.id });
    // a worker runs it: the pipeline fails (test failed, no later stage)
    await waitFor(async () => (await c.pipelines(p.id))[0].status === 'failed', 'the worker to move the pipeline on', 20_000);
    // the queue marks the job completed just after its handler's transaction commits
    const jobState = async () =>
      t.sql<{ state: string }>(`SELECT state::text AS state FROM pgboss.job WHERE name = $1 AND (data->>'buildId')::int = $2`, [
        BUILD_FINISHED_QUEUE,
        second.id,
      ]);
    await waitFor(async () => (await jobState())[0]?.state !== 'active', 'the worker to complete its job', 20_000);
    expect(await jobState()).toEqual([{ state: 'completed' }]);
  });

  it('traces are served with the build token and the project runners token masked', async () => {
    const p = await c.project(owner, SIMPLE);
    const runner = (await c.api.register({ token: p.runnersToken })).body;
    const build = (await c.api.requestBuild(runner.token).expect(201)).body;
    await c.api.patchTrace(build.id, build.token, 0, `clone ${build.repo_url} with ${p.runnersToken}\n`).expect(202);
    const svc = t.app.app.get(BuildsService);
    const chunks: Buffer[] = [];
    for await (const ch of svc.traceStream((await svc.find(build.id))!, p.runnersToken) as AsyncIterable<Buffer>) chunks.push(Buffer.from(ch));
    const text = Buffer.concat(chunks).toString();
    expect(text).not.toContain(build.token);
    expect(text).not.toContain(p.runnersToken);
    expect(text).toContain('gitlab-ci-token:xxxxxx@');
  });

  it('an external commit status of the same name as a pending build does not touch the build', async () => {
    const p = await c.project(owner, SIMPLE);
    const res = await t.http
      .post(`/api/v3/projects/${p.id}/statuses/${p.sha}`)
      .set('PRIVATE-TOKEN', owner.token)
      .send({ state: 'success', name: 'build', ref: 'master' })
      .expect(201);
    const [build] = await c.builds(p.id);
    expect(build.status).toBe('pending');
    expect(res.body.id).not.toBe(build.id);
  });

  it('artifacts larger than max_artifacts_size: 413', async () => {
    const p = await c.project(owner, SIMPLE);
    const runner = (await c.api.register({ token: p.runnersToken })).body;
    const build = (await c.api.requestBuild(runner.token).expect(201)).body;
    // as an administrator does it (the settings are cached, and every instance hears of a change made through the API)
    const setMax = (mb: number) => t.http.put('/api/v3/application/settings').set('PRIVATE-TOKEN', t.root.token).send({ max_artifacts_size: mb }).expect(200);
    await setMax(1);
    const big = Buffer.alloc(1024 * 1024 + 10, 7);
    const res = await t.http.post(`/ci/api/v1/builds/${build.id}/artifacts`).set('BUILD-TOKEN', build.token).attach('file', big, 'artifacts.zip');
    expect(res.status).toBe(413);
    expect(res.body).toEqual({ message: '413 Request Entity Too Large' });
    const small = await t.http
      .post(`/ci/api/v1/builds/${build.id}/artifacts`)
      .set('BUILD-TOKEN', build.token)
      .attach('file', Buffer.alloc(1000, 1), 'artifacts.zip');
    expect(small.status).toBe(201);
    await setMax(100);
  });
});
