import { ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BuildsService } from '../src/ci/builds/builds.service';
import { ci, Json, waitFor } from './helpers/ci';
import { startTestApp, TestApp, TestUser } from './helpers/test-app';

/**
 * The real gitlab-ci-multi-runner 1.3.5 (shell executor) against the app on 127.0.0.1: register,
 * verify, run two stages (clone with the build token, incremental trace, artifacts upload, download
 * by the dependent build), unregister. Needs GITLAB_RUNNER_BIN (the built binary), bash and git.
 */
const BIN = process.env.GITLAB_RUNNER_BIN ?? '';
const available = !!BIN && existsSync(BIN);
if (!available) {
  console.warn(`ci-real-runner: skipped — set GITLAB_RUNNER_BIN to a gitlab-ci-multi-runner 1.3.5 binary${BIN ? ` (${BIN} does not exist)` : ''}`);
}

const YML = `
stages: [build, test]
before_script: ["echo before-$CI_BUILD_NAME"]
compile:
  stage: build
  script:
    - mkdir -p out
    - echo "artifact from $CI_BUILD_ID" > out/result.txt
    - echo "compiled $CI_BUILD_REF_NAME"
  artifacts:
    paths: [out/]
check:
  stage: test
  dependencies: [compile]
  script:
    - cat out/result.txt
    - test -f README.md
    - echo "variable $MY_VAR"
    - sleep 7
    - echo "after sleeping"
  variables:
    MY_VAR: hello
`;

/** GitLab 8.17's keywords the runner meets: coverage, dependencies, environment, when: manual; the job prints the predefined variables. */
const YML_817 = `
stages: [build, test, deploy]
compile:
  stage: build
  coverage: /Coverage \\d+\\.\\d+%/
  script:
    - mkdir -p out
    - echo dep-ok > out/dep.txt
    - echo "Coverage 12.50% (partial)"
    - echo "Coverage 91.30% (total)"
  artifacts:
    paths: [out/]
vars:
  stage: test
  dependencies: [compile]
  environment: staging
  script:
    - echo "dependency $(cat out/dep.txt)"
    - echo "slug=$CI_BUILD_REF_SLUG pipeline=$CI_PIPELINE_ID server=$CI_SERVER_NAME project=$CI_PROJECT_PATH name=$CI_PROJECT_NAME ns=$CI_PROJECT_NAMESPACE url=$CI_PROJECT_URL user=$GITLAB_USER_ID runner=$CI_RUNNER_DESCRIPTION"
    - echo "environment=$CI_ENVIRONMENT_NAME/$CI_ENVIRONMENT_SLUG"
deploy:
  stage: deploy
  when: manual
  script:
    - echo "deployed manual=$CI_BUILD_MANUAL by $GITLAB_USER_ID"
`;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

(available ? describe : describe.skip)('the real gitlab-ci-multi-runner 1.3.5 (shell executor)', () => {
  let t: TestApp;
  let c: ReturnType<typeof ci>;
  let owner: TestUser;
  let dir: string;
  let url: string;
  let child: ChildProcess | undefined;
  let output = '';
  let patches = 0;

  const env = () => ({
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: dir,
    LC_ALL: 'C',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_TERMINAL_PROMPT: '0',
  });

  function run(args: string[]): Promise<{ code: number | null; out: string }> {
    return new Promise((resolve, reject) => {
      const p = spawn(BIN, args, { cwd: dir, env: env(), stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      p.stdout.on('data', (d: Buffer) => (out += d.toString()));
      p.stderr.on('data', (d: Buffer) => (out += d.toString()));
      const timer = setTimeout(() => p.kill('SIGKILL'), 60_000);
      p.on('error', reject);
      p.on('close', (code) => {
        clearTimeout(timer);
        resolve({ code, out });
      });
    });
  }

  beforeAll(async () => {
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    t = await startTestApp({ EXTERNAL_URL: url, LOG_LEVEL: process.env.CI_TEST_LOG ?? 'silent' });
    await t.app.app.listen(port, '127.0.0.1');
    c = ci(t);
    owner = await t.createUser();
    dir = mkdtempSync(join(tmpdir(), 'real-runner-'));
    mkdirSync(join(dir, 'builds'));
  });

  afterAll(async () => {
    if (child && child.exitCode === null) {
      child.kill('SIGKILL');
      await new Promise((r) => child!.once('close', r));
    }
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('registers, verifies, runs a two-stage pipeline with artifacts and dependencies, and unregisters', async () => {
    const config = join(dir, 'config.toml');
    const reg = await run([
      'register',
      '--non-interactive',
      '--config',
      config,
      '--url',
      `${url}/ci`,
      '--registration-token',
      await c.registrationToken(),
      '--name',
      'real-runner',
      '--executor',
      'shell',
    ]);
    expect(reg.code).toBe(0);
    const token = /token = "([0-9a-f]{30})"/.exec(readFileSync(config, 'utf8'))?.[1];
    expect(token).toBeDefined();
    const [runnerRow] = await t.sql<Json>(`SELECT description, is_shared, version FROM ci_runners`);
    expect(runnerRow).toMatchObject({ description: 'real-runner', is_shared: true });

    const verify = await run(['verify', '--config', config]);
    expect(verify.code).toBe(0);
    expect(verify.out).toMatch(/is alive/);

    const p = await c.project(owner, null);
    await t.http
      .post(`/api/v3/projects/${p.id}/repository/files`)
      .set('PRIVATE-TOKEN', owner.token)
      .send({ file_path: '.gitlab-ci.yml', branch_name: 'master', content: YML, commit_message: 'ci' })
      .expect(201);
    const [pl] = await waitFor(async () => {
      const list = await c.pipelines(p.id);
      return list.length ? list : undefined;
    }, 'pipeline');

    const counter = (req: { method: string; url: string }) => {
      if (req.method === 'PATCH' && /\/trace\.txt$/.test(req.url)) patches++;
    };
    t.app.app.getHttpServer().on('request', counter);
    child = spawn(BIN, ['run-single', '-u', `${url}/ci`, '-t', token!, '--executor', 'shell', '--builds-dir', join(dir, 'builds'), '--name', 'real-runner'], {
      cwd: dir,
      env: env(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (output += d.toString()));

    const finished = await waitFor(
      async () => {
        const [row] = await c.pipelines(p.id);
        return ['success', 'failed', 'canceled'].includes(row.status) ? row : undefined;
      },
      'the pipeline to finish',
      150_000,
    ).catch((e) => {
      throw new Error(`${e.message}\nrunner output:\n${output}`);
    });
    const builds = await c.builds(p.id);
    const svc = t.app.app.get(BuildsService);
    const traces: Record<string, string> = {};
    for (const b of builds) {
      const chunks: Buffer[] = [];
      for await (const ch of svc.traceStream((await svc.find(b.id))!, p.runnersToken) as AsyncIterable<Buffer>) chunks.push(Buffer.from(ch));
      traces[b.name] = Buffer.concat(chunks).toString();
    }
    expect({ status: finished.status, builds: builds.map((b) => [b.name, b.status]) }).toEqual({
      status: 'success',
      builds: [
        ['compile', 'success'],
        ['check', 'success'],
      ],
    });
    expect(pl.id).toBe(finished.id);
    expect(traces.compile).toContain('before-compile');
    expect(traces.compile).toContain('compiled master');
    expect(traces.compile).toMatch(/Uploading artifacts/);
    expect(traces.check).toMatch(/Downloading artifacts/);
    expect(traces.check).toContain(`artifact from ${builds[0].id}`);
    expect(traces.check).toContain('variable hello');
    expect(traces.check).toContain('after sleeping');
    // the long job streamed its trace incrementally (PATCH trace.txt) before the final PUT
    expect(patches).toBeGreaterThan(0);
    const [compileRow] = await t.sql<Json>(`SELECT artifacts_file, artifacts_size FROM ci_builds WHERE id = $1`, [builds[0].id]);
    expect(compileRow.artifacts_file).toBe('artifacts.zip');
    const [runner] = await t.sql<Json>(`SELECT contacted_at, version FROM ci_runners`);
    expect(runner.contacted_at).not.toBeNull();

    child.kill('SIGQUIT');
    await new Promise((r) => (child!.exitCode !== null ? r(undefined) : child!.once('close', r)));

    const unreg = await run(['unregister', '--config', config, '--name', 'real-runner']);
    expect(unreg.code).toBe(0);
    expect(await t.sql(`SELECT id FROM ci_runners`)).toEqual([]);
  }, 240_000);

  it('runs 8.17 jobs: coverage from the trace, dependencies, a job with an environment, the predefined variables, and a manual action once played', async () => {
    const config = join(dir, 'config-817.toml');
    const reg = await run([
      'register',
      '--non-interactive',
      '--config',
      config,
      '--url',
      `${url}/ci`,
      '--registration-token',
      await c.registrationToken(),
      '--name',
      'runner-817',
      '--executor',
      'shell',
    ]);
    expect(reg.code).toBe(0);
    const token = /token = "([0-9a-f]{30})"/.exec(readFileSync(config, 'utf8'))?.[1];
    const p = await c.project(owner, null);
    await t.http
      .post(`/api/v3/projects/${p.id}/repository/files`)
      .set('PRIVATE-TOKEN', owner.token)
      .send({ file_path: '.gitlab-ci.yml', branch_name: 'master', content: YML_817, commit_message: 'ci 8.17' })
      .expect(201);
    const [pl] = await waitFor(async () => {
      const list = await c.pipelines(p.id);
      return list.length ? list : undefined;
    }, 'pipeline');
    let out = '';
    const runner817 = spawn(
      BIN,
      ['run-single', '-u', `${url}/ci`, '-t', token!, '--executor', 'shell', '--builds-dir', join(dir, 'builds-817'), '--name', 'runner-817'],
      {
        cwd: dir,
        env: env(),
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    runner817.stdout.on('data', (d: Buffer) => (out += d.toString()));
    runner817.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const stop = async () => {
      if (runner817.exitCode !== null) return;
      runner817.kill('SIGKILL');
      await new Promise((r) => runner817.once('close', r));
    };
    try {
      const statuses = async () => (await c.builds(p.id)).map((b) => [b.name, b.status]);
      // the manual action waits; the pipeline is done without it (8.17)
      await waitFor(async () => ['success', 'failed', 'canceled'].includes((await c.pipelines(p.id))[0].status), 'the pipeline to finish', 150_000).catch(
        (e) => {
          throw new Error(`${e.message}\nrunner output:\n${out}`);
        },
      );
      expect({ status: (await c.pipelines(p.id))[0].status, builds: await statuses() }).toEqual({
        status: 'success',
        builds: [
          ['compile', 'success'],
          ['vars', 'success'],
          ['deploy', 'manual'],
        ],
      });
      const deploy = (await c.builds(p.id)).find((b) => b.name === 'deploy')!;
      const played = await t.http.post(`/api/v3/projects/${p.id}/builds/${deploy.id}/play`).set('PRIVATE-TOKEN', owner.token).expect(200);
      expect(played.body.status).toBe('pending');
      await waitFor(async () => (await c.builds(p.id)).find((b) => b.name === 'deploy')!.status === 'success', 'the played action', 90_000).catch((e) => {
        throw new Error(`${e.message}\nrunner output:\n${out}`);
      });
      // the pipeline follows the build once its step ran
      await waitFor(async () => (await c.pipelines(p.id))[0].status === 'success', 'the pipeline after the action');

      const svc = t.app.app.get(BuildsService);
      const traces: Record<string, string> = {};
      for (const b of await c.builds(p.id)) {
        const chunks: Buffer[] = [];
        for await (const ch of svc.traceStream((await svc.find(b.id))!, p.runnersToken) as AsyncIterable<Buffer>) chunks.push(Buffer.from(ch));
        traces[b.name] = Buffer.concat(chunks).toString();
      }
      const [namespace, name] = p.path.split('/');
      expect(traces.vars).toContain('dependency dep-ok');
      expect(traces.vars).toContain(
        `slug=master pipeline=${pl.id} server=GitLab project=${p.path} name=${name} ns=${namespace} url=${url}/${p.path} user=${owner.id} runner=runner-817`,
      );
      expect(traces.deploy).toContain(`deployed manual=true by ${owner.id}`);
      // the coverage line's last match, and the pipeline's mean
      const compile = (await c.builds(p.id)).find((b) => b.name === 'compile')!;
      const shown = await t.http.get(`/api/v3/projects/${p.id}/builds/${compile.id}`).set('PRIVATE-TOKEN', owner.token).expect(200);
      expect(shown.body.coverage).toBe(91.3);
      const pipeline = await t.http.get(`/api/v3/projects/${p.id}/pipelines/${pl.id}`).set('PRIVATE-TOKEN', owner.token).expect(200);
      expect(pipeline.body.coverage).toBe('91.30');
      const [vars] = await t.sql<Json>(`SELECT environment FROM ci_builds WHERE id = $1`, [(await c.builds(p.id)).find((b) => b.name === 'vars')!.id]);
      expect(vars.environment).toBe('staging');
      // the environment's variables reached the job, and its success recorded a deployment (C's environments)
      expect(traces.vars).toContain('environment=staging/staging');
      const deployments = await waitFor(async () => {
        const res = await t.http.get(`/api/v3/projects/${p.id}/deployments`).set('PRIVATE-TOKEN', owner.token).expect(200);
        return res.body.length ? (res.body as Json[]) : undefined;
      }, 'the deployment');
      expect(deployments.map((d) => [d.iid, d.ref, d.environment.name, d.deployable.name, d.user.id])).toEqual([[1, 'master', 'staging', 'vars', owner.id]]);
    } finally {
      await stop();
    }
    expect((await run(['unregister', '--config', config, '--name', 'runner-817'])).code).toBe(0);
  }, 300_000);
});
