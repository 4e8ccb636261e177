import type { AddressInfo } from 'node:net';
import { CiConfigWorkers, TIME_BUDGET_ERROR, timeBudgetError } from '../../src/ci/pipelines/ci-config-workers';
import { MAX_STAGES } from '../../src/ci/pipelines/ci-config';
import { BUILD_FINISHED_QUEUE } from '../../src/ci/builds/builds.service';
import { QueueService } from '../../src/queue/queue.service';
import { ci, Json, waitFor } from '../helpers/ci';
import { startTestApp, TestApp, TestUser } from '../helpers/test-app';

/**
 * One `.gitlab-ci.yml` must never stall the server (issue 36, item 2). A pipeline of 1,400 stages x
 * 1,400 jobs (a 52 kB file) kept the event loop busy for 5–6 s and an 837 kB document sent to
 * `POST /ci/lint` for 4–5 s: every request waited, `/-/health` included. Files are now processed in
 * worker threads with a time budget, linearly, within limits (stages, jobs, nesting, what aliases
 * expand to, names). Each test sends a hostile or heavy file while another client asks `/-/health`
 * over and over: every answer must come within HEALTH_MS, and the file gets a clear error (never a 500).
 */
const HEALTH_MS = 500;

describe('security: a .gitlab-ci.yml cannot stall the server', () => {
  let t: TestApp;
  let c: ReturnType<typeof ci>;
  let owner: TestUser;
  let base: string;

  beforeAll(async () => {
    t = await startTestApp();
    c = ci(t);
    owner = await t.createUser();
    await t.http.put(`/api/v3/users/${owner.id}`).set('PRIVATE-TOKEN', t.root.token).send({ projects_limit: 100 }).expect(200);
    await t.app.app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(t.app.app.getHttpServer().address() as AddressInfo).port}`;
  });
  afterAll(() => t.close());

  /**
   * Runs `work` while asking /-/health one request after another (10 ms apart); returns its result and
   * the longest wait for an answer, counted from when the request was due (a stall that falls
   * between two requests delays the next one's start, and counts).
   */
  async function whileProbingHealth<T>(work: () => Promise<T>): Promise<{ result: T; slowest: number; probes: number }> {
    let done = false;
    let slowest = 0;
    let probes = 0;
    const probe = (async () => {
      let due = performance.now();
      while (!done) {
        const res = await fetch(`${base}/-/health`);
        await res.arrayBuffer();
        expect(res.status).toBe(200);
        slowest = Math.max(slowest, performance.now() - due);
        probes++;
        const asleep = performance.now();
        await new Promise((r) => setTimeout(r, 10));
        due = asleep + 10;
      }
    })();
    try {
      const result = await work();
      return { result, slowest, probes };
    } finally {
      done = true;
      await probe;
    }
  }

  const post = (path: string, body: Json) =>
    fetch(`${base}/api/v3${path}`, {
      method: 'POST',
      headers: { 'PRIVATE-TOKEN': owner.token, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    }).then(async (res) => ({ status: res.status, body: (await res.json()) as Json }));

  const stagesList = (n: number) => `stages: [${Array.from({ length: n }, (_, i) => `s${i}`).join(', ')}]\n`;
  /** 1,400 stages and 1,400 jobs, all in the last stage: the file that stalled the server (52 kB). */
  const wide = (n = 1400) => stagesList(n) + Array.from({ length: n }, (_, i) => `j${i}:\n  stage: s${n - 1}\n  script: x\n`).join('');
  const billionLaughs = () => {
    const lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
    for (let i = 1; i < 10; i++) {
      const name = String.fromCharCode(97 + i);
      lines.push(
        `${name}: &${name} [${Array(9)
          .fill(`*${String.fromCharCode(96 + i)}`)
          .join(',')}]`,
      );
    }
    return lines.join('\n') + '\nrspec:\n  script: [*j]\n';
  };
  const BILLION_LAUGHS_ERROR = '(<unknown>): the document expands to more than 4 MB once its aliases are resolved (possible billion laughs attack)';

  /** Pushes `.gitlab-ci.yml` (a commit through the files API, as any push) and waits for its pipeline. */
  async function pushed(content: string): Promise<{ projectId: number; pipeline: Json }> {
    const p = await c.project(owner, null);
    const f = await post(`/projects/${p.id}/repository/files`, { file_path: '.gitlab-ci.yml', branch_name: 'master', content, commit_message: 'ci' });
    expect(f.status).toBe(201);
    const pipeline = await waitFor(async () => (await c.pipelines(p.id))[0], 'pipeline', 30000);
    return { projectId: p.id, pipeline };
  }

  it('1,400 stages x 1,400 jobs pushed: refused at once with the reason, the failed status says it, health answers throughout', async () => {
    const { result, slowest, probes } = await whileProbingHealth(() => pushed(wide()));
    // (GitLab 8.17's order: the global entries, stages among them, before the jobs)
    expect(result.pipeline).toMatchObject({ status: 'failed', yaml_errors: `The .gitlab-ci.yml defines more than ${MAX_STAGES} stages` });
    const statuses = await t.sql<Json>(`SELECT name, status, description FROM commit_statuses WHERE project_id = $1`, [result.projectId]);
    expect(statuses).toEqual([{ name: 'gitlab-ci.yml', status: 'failed', description: `The .gitlab-ci.yml defines more than ${MAX_STAGES} stages` }]);
    expect(probes).toBeGreaterThan(0);
    expect(slowest).toBeLessThan(HEALTH_MS);
  });

  it('the same file and a billion laughs to POST /ci/lint: GitLab-style invalid answers, health answers throughout', async () => {
    const { result, slowest } = await whileProbingHealth(() =>
      Promise.all([post('/ci/lint', { content: wide() }), post('/ci/lint', { content: billionLaughs() })]),
    );
    expect(result).toEqual([
      { status: 200, body: { status: 'invalid', errors: [`The .gitlab-ci.yml defines more than ${MAX_STAGES} stages`] } },
      { status: 200, body: { status: 'invalid', errors: [BILLION_LAUGHS_ERROR] } },
    ]);
    expect(slowest).toBeLessThan(HEALTH_MS);
  });

  it('a billion laughs pushed: a failed pipeline with the reason', async () => {
    const { result, slowest } = await whileProbingHealth(() => pushed(billionLaughs()));
    expect(result.pipeline).toMatchObject({ status: 'failed', yaml_errors: BILLION_LAUGHS_ERROR });
    expect(slowest).toBeLessThan(HEALTH_MS);
  });

  it('a file at the limits (100 stages, 1,000 jobs, all in the last stage) makes its pipeline, health answers throughout', async () => {
    const content = stagesList(100) + Array.from({ length: 1000 }, (_, i) => `j${i}:\n  stage: s99\n  script: echo ${i}\n`).join('');
    const p = await c.project(owner, null);
    // the file committed with [ci skip] (no pipeline of its own), then POST /projects/:id/pipeline (an API request) for it
    const b = await post(`/projects/${p.id}/repository/files`, { file_path: '.gitlab-ci.yml', branch_name: 'master', content, commit_message: 'ci [ci skip]' });
    expect(b.status).toBe(201);
    const { result, slowest } = await whileProbingHealth(() => post(`/projects/${p.id}/pipeline`, { ref: 'master' }));
    expect(result.status).toBe(201);
    expect(result.body).toMatchObject({ status: 'pending', ref: 'master' });
    const builds = await c.builds(p.id);
    expect(builds.length).toBe(1000);
    expect(new Set(builds.map((x) => `${x.stage}/${x.stage_idx}`))).toEqual(new Set(['s99/99']));
    expect(slowest).toBeLessThan(HEALTH_MS);
  });

  it('an 837 kB document to POST /ci/lint: answered (its error, or the time budget), health answers throughout', async () => {
    const jobs = Array.from(
      { length: 1000 },
      (_, i) => `j${i}:\n  script:\n${Array.from({ length: 20 }, (_, k) => `    - echo ${'x'.repeat(30)} ${k}\n`).join('')}`,
    );
    const content = jobs.join('').slice(0, 837 * 1024 - 40) + '\nlast:\n  script: x\n  foo: 1\n';
    const { result, slowest } = await whileProbingHealth(() => post('/ci/lint', { content }));
    expect(result.status).toBe(200);
    expect(result.body.status).toBe('invalid');
    // on a machine this slow that the parse alone passes the budget, the answer says so
    expect(['jobs:last config contains unknown keys: foo', TIME_BUDGET_ERROR]).toContain(result.body.errors[0]);
    expect(slowest).toBeLessThan(HEALTH_MS);
  });

  it('past its time budget a file is refused with a clear error, its worker replaced; the next file is processed', async () => {
    const workers = t.app.app.get(CiConfigWorkers);
    const content = stagesList(10) + Array.from({ length: 1000 }, (_, i) => `j${i}:\n  stage: s${i % 10}\n  script: x\n`).join('');
    workers.timeBudgetMs = 5; // no real file is processed in 5 ms
    try {
      const { result, slowest } = await whileProbingHealth(() => post('/ci/lint', { content }));
      expect(result).toEqual({ status: 200, body: { status: 'invalid', errors: [timeBudgetError(5)] } });
      expect(slowest).toBeLessThan(HEALTH_MS);
      const { pipeline } = await pushed(content);
      expect(pipeline).toMatchObject({ status: 'failed', yaml_errors: timeBudgetError(5) });
    } finally {
      workers.timeBudgetMs = 2000;
    }
    expect(await post('/ci/lint', { content })).toEqual({ status: 200, body: { status: 'valid', errors: [] } });
  });

  it('a later stage needs no second parse (8.17: every build exists from the start): with a budget the file would now exceed, the runner gets 200 and the stage moves on at once', async () => {
    const workers = t.app.app.get(CiConfigWorkers);
    // two stages, and 900 hidden jobs that only make the file slow to parse
    const hidden = Array.from({ length: 900 }, (_, i) => `.h${i}:\n  script: [a, b, c]\n`).join('');
    const p = await c.project(owner, `build:\n  stage: build\n  script: make\ntest:\n  script: make test\n${hidden}`);
    const runner = (await c.api.register({ token: p.runnersToken })).body;
    const build = (await c.api.requestBuild(runner.token).expect(201)).body;
    workers.timeBudgetMs = 5;
    try {
      await c.api.update(build.id, { token: runner.token, state: 'success' }).expect(200);
    } finally {
      workers.timeBudgetMs = 2000;
    }
    expect((await c.builds(p.id)).map((b) => [b.name, b.status])).toEqual([
      ['build', 'success'],
      ['test', 'pending'],
    ]);
    // the transition's durable job, run as the queue's worker runs it, finds the step done: nothing more
    await t.app.app.get(QueueService).send(BUILD_FINISHED_QUEUE, { pipelineId: p.pipelineId, buildId: build.id });
    await new Promise((r) => setTimeout(r, 500));
    expect((await c.builds(p.id)).map((b) => [b.name, b.status])).toEqual([
      ['build', 'success'],
      ['test', 'pending'],
    ]);
  });

  it('names longer than their columns and characters a build cannot hold: a failed pipeline with the reason, never a 500', async () => {
    const long = 'n'.repeat(256);
    for (const [content, error] of [
      [`${long}:\n  script: x\n`, `jobs:${'n'.repeat(60)}… name is too long (maximum is 255 characters)`],
      [`stages: [${long}]\nx:\n  stage: ${long}\n  script: x\n`, `stages: ${'n'.repeat(60)}… is too long (maximum is 255 characters)`],
      ['x:\n  script: "a\\0b"\n', '(<unknown>): the document contains a NUL character or an unpaired surrogate (\\u0000, \\ud800…), which a build cannot hold'],
      [
        'x:\n  script: x\n  variables:\n    A: "\\ud800"\n',
        '(<unknown>): the document contains a NUL character or an unpaired surrogate (\\u0000, \\ud800…), which a build cannot hold',
      ],
    ]) {
      const p = await c.project(owner, null);
      const f = await post(`/projects/${p.id}/repository/files`, {
        file_path: '.gitlab-ci.yml',
        branch_name: 'master',
        content,
        commit_message: 'ci [ci skip]',
      });
      expect(f.status).toBe(201);
      const res = await post(`/projects/${p.id}/pipeline`, { ref: 'master' });
      expect([res.status, res.body.status, res.body.yaml_errors ?? null]).toEqual([201, 'failed', error]);
      expect(await post('/ci/lint', { content })).toEqual({ status: 200, body: { status: 'invalid', errors: [error] } });
    }
  });
});
