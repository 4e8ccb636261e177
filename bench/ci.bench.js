'use strict';
/**
 * CI runner API benchmark: the built app (dist/main.js) against a bare node:http + pg handler doing
 * the same claim (bench/ci-bare-server.js), on a throw-away PostgreSQL database.
 *
 *   npm run bench:ci          (builds first)
 *
 * 1. 50 runners polling an empty queue (POST builds/register.json → 404): requests/s, p99, server CPU per poll;
 * 2. 50 runners draining 1,000 pending builds: builds/s, and double claims (must be 0);
 * 3. trace PATCH of 4 KB parts, 50 running builds in parallel: parts/s (app only);
 * 4. `GET /api/v3/projects/:id/builds?per_page=100` on a project with 10,000 builds (seeded with SQL),
 *    BENCH_CONNECTIONS connections: req/s, p50, p99 against the bare handler (same SQL, same JSON,
 *    checked equal before measuring);
 * 5. live trace follow: a follower on `GET .../builds/:id/trace` (`Accept: text/event-stream`) while
 *    the runner PATCHes 4 KB parts one after another: time from sending the PATCH to the part's bytes
 *    arriving at the follower, p50/p99 over BENCH_FOLLOW_PARTS parts (app only).
 *
 * 6. paced polling: BENCH_RUNNERS runners each polling an empty queue once a second (as real runners
 *    do) for BENCH_DURATION: the server's CPU as a share of one core (aim < 5 %);
 * 7. a 10 MB trace sent as 100 PATCHes of 100 KB to one build: per-part time of the first and the last
 *    ten (equal when an append costs O(part), not O(trace)), and the stored trace checked whole.
 * 8. a 200-job `.gitlab-ci.yml` of GitLab 8.17's keywords (5 stages, environments, manual actions,
 *    coverage, cache, artifacts, dependencies, only/except): `POST /projects/:id/pipeline` (the file
 *    parsed and validated in a worker, its 200 builds created) BENCH_PIPELINES times, one after
 *    another: p50/p99 of the whole request (aim ≤ 200 ms).
 *
 * Env (all optional): BENCH_PG_URL, BENCH_RUNNERS (50), BENCH_BUILDS (1000), BENCH_DURATION (10 s),
 * BENCH_WARMUP (2 s), DB_POOL_SIZE (10), BENCH_APP_MAIN (default dist/main.js), BENCH_LIST_BUILDS
 * (10000), BENCH_CONNECTIONS (list: 16), BENCH_FOLLOW_PARTS (200), BENCH_CI_PARTS (comma list of
 * poll,drain,trace,list,follow; default all), BENCH_SHORT=1 (a quick check that the script works:
 * 2 s runs, no warm-up, 5 runners, 50 builds to drain, 20 parts to follow).
 * Prints a markdown table and writes bench/results/ci-latest.json; exits non-zero on errors or double claims.
 */
const fs = require('node:fs');
const http = require('node:http');
const path = require('node:path');
const { isDeepStrictEqual } = require('node:util');
const { Client } = require('pg');
const { createHarness } = require('./harness');

const ROOT = path.resolve(__dirname, '..');
const RESULTS_DIR = path.join(__dirname, 'results');
const SHORT = process.env.BENCH_SHORT === '1';
const RUNNERS = Number(process.env.BENCH_RUNNERS || (SHORT ? 5 : 50));
const BUILDS = Number(process.env.BENCH_BUILDS || (SHORT ? 50 : 1000));
const DURATION = Number(process.env.BENCH_DURATION || (SHORT ? 2 : 10));
const WARMUP = Number(process.env.BENCH_WARMUP ?? (SHORT ? 0 : 2));
const LIST_BUILDS = Number(process.env.BENCH_LIST_BUILDS || 10000);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS || 16);
const FOLLOW_PARTS = Number(process.env.BENCH_FOLLOW_PARTS || (SHORT ? 20 : 200));
const PIPELINES = Number(process.env.BENCH_PIPELINES || (SHORT ? 5 : 30));
const PARTS = new Set((process.env.BENCH_CI_PARTS || 'poll,paced,drain,trace,bigtrace,list,follow,yaml200').split(',').map((x) => x.trim()));
const POOL_SIZE = Number(process.env.DB_POOL_SIZE || 10);
const SECRET_KEY = 'bench-secret-key-0123456789abcdef0123456789abcdef';
const ROOT_PASSWORD = 'bench-root-password';
const EXTERNAL_URL = 'http://gitlab.bench.example';
const DB_NAME = `bench_ci_${Date.now()}_${process.pid}`;
const UA = 'gitlab-ci-multi-runner 1.3.5 (v1.3.5; go1.19.8; linux/amd64)';
const INFO = { name: 'gitlab-ci-multi-runner', version: '1.3.5', revision: '3af07be', platform: 'linux', architecture: 'amd64', executor: 'shell' };
const HEADERS = { 'Content-Type': 'application/json', Accept: 'application/json', 'User-Agent': UA };

const h = createHarness('bench:ci');
const { log, freePort, startProcess, waitReady, cpuMs, cannon, sleep } = h;
async function api(base, method, p, body, token) {
  const r = await fetch(base + p, {
    method,
    headers: { 'Content-Type': 'application/json', ...(token ? { 'PRIVATE-TOKEN': token } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await r.text();
  return { status: r.status, body: text ? JSON.parse(text) : undefined };
}

/** `n` pending builds in one pipeline of the project (in a few statements). */
async function seedBuilds(db, projectId, n) {
  const { rows } = await db.query(
    `INSERT INTO ci_pipelines (project_id, ref, sha, before_sha, tag, status) VALUES ($1, 'master', $2, $3, false, 'pending') RETURNING id`,
    [projectId, 'a'.repeat(40), '0'.repeat(40)],
  );
  await db.query(
    `WITH s AS (
       INSERT INTO commit_statuses (project_id, sha, ref, name, stage, status, allow_failure, pipeline_id)
       SELECT $1, $2, 'master', 'job ' || g, 'test', 'pending', false, $3 FROM generate_series(1, $4) g RETURNING id)
     INSERT INTO ci_builds (id, pipeline_id, project_id, stage_idx, commands, yaml_variables)
     SELECT id, $3, $1, 1, 'echo hello', '[{"key":"A","value":"b","public":true}]' FROM s`,
    [projectId, 'a'.repeat(40), rows[0].id, n],
  );
  await db.query('ANALYZE');
  return rows[0].id;
}

async function poll(server, tokens) {
  let i = 0;
  const opts = {
    url: `${server.base}/ci/api/v1/builds/register.json`,
    method: 'POST',
    headers: HEADERS,
    connections: RUNNERS,
    requests: [{ setupRequest: (req) => ({ ...req, body: JSON.stringify({ info: INFO, token: tokens[i++ % tokens.length] }) }) }],
  };
  if (WARMUP > 0) await cannon({ ...opts, duration: WARMUP });
  const cpu0 = cpuMs(server.child.pid);
  const r = await cannon({ ...opts, duration: DURATION });
  const cpu = cpuMs(server.child.pid) - cpu0;
  const total = r.requests.total || 1;
  const wrong = total - (r.statusCodeStats['404'] ? r.statusCodeStats['404'].count : 0);
  if (r.errors || wrong) throw new Error(`${server.name} poll: ${r.errors} errors, ${wrong} answers other than 404`);
  return { req_per_s: r.requests.average, p50_ms: r.latency.p50, p99_ms: r.latency.p99, cpu_ms_per_poll: Math.round((cpu / total) * 1000) / 1000, total };
}

/** BENCH_RUNNERS runners each polling an empty queue once a second for DURATION: the server's CPU as a share of one core. */
async function paced(server, tokens) {
  const cpu0 = cpuMs(server.child.pid);
  const t0 = Date.now();
  let polls = 0;
  let wrong = 0;
  await Promise.all(
    tokens.map(async (token, i) => {
      await sleep((i * 1000) / tokens.length); // spread over the second, as independent runners are
      while (Date.now() - t0 < DURATION * 1000) {
        const next = Date.now() + 1000;
        const r = await fetch(`${server.base}/ci/api/v1/builds/register.json`, {
          method: 'POST',
          headers: HEADERS,
          body: JSON.stringify({ info: INFO, token }),
        });
        await r.arrayBuffer();
        if (r.status !== 404) wrong++;
        polls++;
        await sleep(Math.max(0, next - Date.now()));
      }
    }),
  );
  const wall = Date.now() - t0;
  const cpu = cpuMs(server.child.pid) - cpu0;
  if (wrong) throw new Error(`${server.name} paced poll: ${wrong} answers other than 404`);
  return { runners: tokens.length, polls, polls_per_s: Math.round((polls / wall) * 10000) / 10, cpu_percent_of_one_core: Math.round((cpu / wall) * 1000) / 10 };
}

async function drain(server, tokens) {
  const claimed = [];
  const t0 = process.hrtime.bigint();
  await Promise.all(
    tokens.map(async (token) => {
      for (;;) {
        const r = await fetch(`${server.base}/ci/api/v1/builds/register.json`, {
          method: 'POST',
          headers: HEADERS,
          body: JSON.stringify({ info: INFO, token }),
        });
        const text = await r.text();
        if (r.status === 404) return;
        if (r.status !== 201) throw new Error(`${server.name} claim: ${r.status} ${text.slice(0, 200)}`);
        claimed.push(JSON.parse(text).id);
      }
    }),
  );
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const unique = new Set(claimed).size;
  return {
    builds: claimed.length,
    seconds: Math.round(seconds * 100) / 100,
    builds_per_s: Math.round((claimed.length / seconds) * 10) / 10,
    double_claims: claimed.length - unique,
  };
}

async function traceParts(server, claims) {
  const part = Buffer.alloc(4096, 'x');
  let parts = 0;
  let failures = 0;
  const until = Date.now() + DURATION * 1000;
  const cpu0 = cpuMs(server.child.pid);
  const t0 = process.hrtime.bigint();
  await Promise.all(
    claims.map(async (b) => {
      let offset = 0;
      while (Date.now() < until) {
        const r = await fetch(`${server.base}/ci/api/v1/builds/${b.id}/trace.txt`, {
          method: 'PATCH',
          headers: { 'Content-Type': 'text/plain', 'BUILD-TOKEN': b.token, 'Content-Range': `${offset}-${offset + part.length}`, 'User-Agent': UA },
          body: part,
        });
        await r.arrayBuffer();
        if (r.status !== 202) {
          failures++;
          continue;
        }
        offset += part.length;
        parts++;
      }
    }),
  );
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const cpu = cpuMs(server.child.pid) - cpu0;
  if (failures) throw new Error(`trace: ${failures} parts not accepted`);
  return {
    parts,
    parts_per_s: Math.round(parts / seconds),
    mb_per_s: Math.round(((parts * 4096) / seconds / 1048576) * 10) / 10,
    cpu_ms_per_part: Math.round((cpu / parts) * 1000) / 1000,
  };
}

const pct = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
const round2 = (x) => Math.round(x * 100) / 100;

/**
 * A project with one real commit (through the files API) and `n` finished builds of that commit
 * seeded with SQL: success and failed, spread over the runners, by the root user.
 */
async function seedListProject(app, db, root, rootId, runnerIds, n) {
  const project = await api(app.base, 'POST', '/api/v3/projects', { name: 'ci-bench-list' }, root);
  if (project.status !== 201) throw new Error(`list project: ${project.status} ${JSON.stringify(project.body)}`);
  const id = project.body.id;
  const file = await api(
    app.base,
    'POST',
    `/api/v3/projects/${id}/repository/files`,
    {
      file_path: 'README.md',
      branch_name: 'master',
      content: 'bench\n',
      commit_message: 'Bench commit\n\nwith a body',
    },
    root,
  );
  if (file.status !== 201) throw new Error(`file: ${file.status} ${JSON.stringify(file.body)}`);
  const sha = (await api(app.base, 'GET', `/api/v3/projects/${id}/repository/commits/master`, undefined, root)).body.id;
  const { rows } = await db.query(
    `INSERT INTO ci_pipelines (project_id, ref, sha, before_sha, tag, status) VALUES ($1, 'master', $2, $3, false, 'failed') RETURNING id`,
    [id, sha, '0'.repeat(40)],
  );
  await db.query(
    `WITH s AS (
       INSERT INTO commit_statuses (project_id, sha, ref, name, stage, status, allow_failure, pipeline_id, author_id, started_at, finished_at)
       SELECT $1, $2, 'master', 'job ' || g, 'test', CASE WHEN g % 7 = 0 THEN 'failed' ELSE 'success' END, false, $3, $4,
              now() - interval '1 hour', now() - interval '50 minutes'
       FROM generate_series(1, $5) g RETURNING id)
     INSERT INTO ci_builds (id, pipeline_id, project_id, stage_idx, commands, runner_id, user_id)
     SELECT id, $3, $1, 1, 'echo hello', ($6::int[])[1 + id % cardinality($6::int[])], $4 FROM s`,
    [id, sha, rows[0].id, rootId, n, runnerIds],
  );
  await db.query('ANALYZE');
  return id;
}

/** A `.gitlab-ci.yml` of `n` jobs over five stages, using the keywords teams on GitLab 8.17 have. */
function ciYaml(n) {
  const stages = ['build', 'test', 'review', 'deploy', 'cleanup'];
  const out = [
    `stages: [${stages.join(', ')}]`,
    'image: ruby:2.3',
    'variables:',
    '  RAILS_ENV: test',
    'before_script:',
    '  - bundle install --path vendor',
    'cache:',
    '  key: "$CI_BUILD_REF_NAME"',
    '  paths: [vendor/]',
    '.job_template: &job',
    '  tags: [docker]',
    '  except: [/^wip-/]',
  ];
  for (let i = 0; i < n; i++) {
    const stage = stages[i % stages.length];
    out.push(`job-${i}:`, '  <<: *job', `  stage: ${stage}`, '  script:', `    - ./run ${i}`);
    if (stage === 'build') out.push('  artifacts:', `    name: "build-${i}"`, '    paths: [out/]', '    expire_in: 1 week');
    if (stage === 'test') out.push("  coverage: '/Coverage: \\d+\\.\\d+%/'", `  dependencies: [job-${i - 1}]`);
    if (stage === 'review')
      out.push(
        '  environment:',
        `    name: review/$CI_BUILD_REF_NAME-${i}`,
        `    url: https://$CI_BUILD_REF_SLUG-${i}.review.example`,
        `    on_stop: job-${i + 2}`,
      );
    if (stage === 'deploy') out.push('  environment: production', '  when: manual', '  only: [master, tags]');
    if (stage === 'cleanup') out.push('  environment:', `    name: review/$CI_BUILD_REF_NAME-${i - 2}`, '    action: stop', '  when: manual');
  }
  return out.join('\n') + '\n';
}

/** `POST /projects/:id/pipeline` of a 200-job file, PIPELINES times one after another. */
async function yamlPipelines(app, projectId, root) {
  const file = await api(
    app.base,
    'POST',
    `/api/v3/projects/${projectId}/repository/files`,
    { file_path: '.gitlab-ci.yml', branch_name: 'master', content: ciYaml(200), commit_message: 'CI config [ci skip]' },
    root,
  );
  if (file.status !== 201) throw new Error(`.gitlab-ci.yml: ${file.status} ${JSON.stringify(file.body)}`);
  const times = [];
  for (let i = 0; i < PIPELINES; i++) {
    const t0 = process.hrtime.bigint();
    const r = await api(app.base, 'POST', `/api/v3/projects/${projectId}/pipeline`, { ref: 'master' }, root);
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
    if (r.status !== 201) throw new Error(`pipeline: ${r.status} ${JSON.stringify(r.body)}`);
    if (i === 0) {
      const builds = await api(app.base, 'GET', `/api/v3/projects/${projectId}/pipelines/${r.body.id}`, undefined, root);
      if (builds.status !== 200 || builds.body.status === 'failed') throw new Error(`pipeline ${r.body.id}: ${JSON.stringify(builds.body)}`);
    }
  }
  const sorted = [...times].sort((a, b) => a - b);
  return { jobs: 200, pipelines: PIPELINES, p50_ms: round2(pct(sorted, 0.5)), p99_ms: round2(pct(sorted, 0.99)), max_ms: round2(sorted[sorted.length - 1]) };
}

/** `GET /projects/:id/builds?per_page=100` on both servers: equal answers first, then autocannon. */
async function listBuilds(servers, projectId, root) {
  const p = `/api/v3/projects/${projectId}/builds?per_page=100`;
  const answers = [];
  for (const server of servers) {
    const r = await fetch(server.base + p, { headers: { 'PRIVATE-TOKEN': root } });
    const headers = Object.fromEntries(
      ['link', 'x-total', 'x-total-pages', 'x-per-page', 'x-page', 'x-next-page', 'x-prev-page'].map((k) => [k, r.headers.get(k)]),
    );
    answers.push({ status: r.status, headers, body: await r.json() });
  }
  const [a, b] = answers;
  if (a.status !== 200 || a.body.length !== 100) throw new Error(`app list: ${a.status} ${JSON.stringify(a.body).slice(0, 300)}`);
  if (!isDeepStrictEqual(a, b)) {
    const i = a.body.findIndex((x, k) => !isDeepStrictEqual(x, b.body[k]));
    throw new Error(
      `the bare handler answers differently: ${JSON.stringify(a.headers)} vs ${JSON.stringify(b.headers)}; ` +
        `first differing build: ${JSON.stringify(a.body[i])} vs ${JSON.stringify(b.body && b.body[i])}`,
    );
  }
  const out = {};
  for (const server of servers) {
    const opts = { url: server.base + p, headers: { 'PRIVATE-TOKEN': root }, connections: CONNECTIONS };
    if (WARMUP > 0) await cannon({ ...opts, duration: WARMUP });
    const cpu0 = cpuMs(server.child.pid);
    const r = await cannon({ ...opts, duration: DURATION });
    const cpu = cpuMs(server.child.pid) - cpu0;
    const ok = r['2xx'];
    if (r.errors || r.non2xx) throw new Error(`${server.name} list: ${r.errors} errors, ${r.non2xx} non-2xx`);
    out[server.name] = { req_per_s: r.requests.average, p50_ms: r.latency.p50, p99_ms: r.latency.p99, cpu_ms_per_req: round2(cpu / (ok || 1)), total: ok };
  }
  return out;
}

/**
 * Follows a running build's trace as server-sent events while the runner PATCHes 4 KB parts, one
 * after the other; each part starts with a marker, and its latency is the time from sending the
 * PATCH to the marker arriving at the follower.
 */
async function followTrace(app, projectId, build, root) {
  let received = '';
  let waiter;
  const events = { trace: 0 };
  const req = http.get(`${app.base}/api/v3/projects/${projectId}/builds/${build.id}/trace`, {
    headers: { 'PRIVATE-TOKEN': root, Accept: 'text/event-stream' },
  });
  const opened = new Promise((resolve, reject) => {
    req.on('error', reject);
    req.on('response', (res) => {
      if (res.statusCode !== 200) reject(new Error(`follow: ${res.statusCode}`));
      res.setEncoding('utf8');
      let buf = '';
      res.on('data', (chunk) => {
        buf += chunk;
        let i;
        while ((i = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          if (!/^event: trace$/m.test(block)) continue;
          events.trace++;
          received += JSON.parse(/^data: (.*)$/m.exec(block)[1]).text;
          if (waiter && received.includes(waiter.marker)) waiter.resolve(process.hrtime.bigint());
        }
      });
      resolve(res);
    });
  });
  const res = await opened;
  h.onCleanup(() => req.destroy());
  const latencies = [];
  let offset = 0;
  for (let n = 0; n < FOLLOW_PARTS; n++) {
    const marker = `@@part-${n}@@`;
    const part = Buffer.alloc(4096, 'x');
    part.write(marker, 0);
    part[4095] = 10;
    const arrived = new Promise((resolve, reject) => {
      waiter = { marker, resolve };
      setTimeout(() => reject(new Error(`part ${n} did not reach the follower in 10 s`)), 10_000).unref();
    });
    const t0 = process.hrtime.bigint();
    const r = await fetch(`${app.base}/ci/api/v1/builds/${build.id}/trace.txt`, {
      method: 'PATCH',
      headers: { 'Content-Type': 'text/plain', 'BUILD-TOKEN': build.token, 'Content-Range': `${offset}-${offset + part.length}`, 'User-Agent': UA },
      body: part,
    });
    await r.arrayBuffer();
    if (r.status !== 202) throw new Error(`follow PATCH: ${r.status}`);
    offset += part.length;
    latencies.push(Number((await arrived) - t0) / 1e6);
    waiter = undefined;
  }
  req.destroy();
  res.destroy();
  latencies.sort((x, y) => x - y);
  return {
    parts: latencies.length,
    p50_ms: round2(pct(latencies, 0.5)),
    p99_ms: round2(pct(latencies, 0.99)),
    max_ms: round2(latencies[latencies.length - 1]),
    mean_ms: round2(latencies.reduce((x, y) => x + y, 0) / latencies.length),
    trace_events: events.trace,
  };
}

h.run(async () => {
  const mainJs = path.resolve(ROOT, process.env.BENCH_APP_MAIN || 'dist/main.js');
  if (!fs.existsSync(mainJs)) throw new Error(`${mainJs} not found: run \`npm run build\` (npm run bench:ci does)`);
  fs.mkdirSync(RESULTS_DIR, { recursive: true });
  const dbUrl = await h.createDatabase(DB_NAME);
  const [appPort, barePort] = [await freePort(), await freePort()];
  const dataDir = h.tempDir('ci-bench-');
  const common = { DATABASE_URL: dbUrl, HOST: '127.0.0.1', SECRET_KEY, EXTERNAL_URL, DB_POOL_SIZE: String(POOL_SIZE), NODE_ENV: 'production' };
  const app = {
    name: 'app',
    base: `http://127.0.0.1:${appPort}`,
    child: startProcess('app', [mainJs], { ...common, PORT: String(appPort), DATA_DIR: dataDir, ROOT_PASSWORD, LOG_LEVEL: 'error' }),
  };
  await waitReady(app.child, app.base);
  const bare = {
    name: 'bare',
    base: `http://127.0.0.1:${barePort}`,
    child: startProcess('bare', [path.join(__dirname, 'ci-bare-server.js')], { ...common, PORT: String(barePort), DATA_DIR: dataDir }),
  };
  await waitReady(bare.child, bare.base);

  const session = await api(app.base, 'POST', '/api/v3/session', { login: 'root', password: ROOT_PASSWORD });
  const root = session.body.private_token;
  const rootId = session.body.id;
  const project = await api(app.base, 'POST', '/api/v3/projects', { name: 'ci-bench' }, root);
  if (project.status !== 201) throw new Error(`project: ${project.status} ${JSON.stringify(project.body)}`);
  const shown = await api(app.base, 'GET', `/api/v3/projects/${project.body.id}`, undefined, root);
  const tokens = [];
  const runnerIds = [];
  for (let i = 0; i < RUNNERS; i++) {
    const r = await api(app.base, 'POST', '/ci/api/v1/runners/register.json', { token: shown.body.runners_token, description: `bench ${i}`, info: INFO });
    if (r.status !== 201) throw new Error(`register: ${r.status} ${JSON.stringify(r.body)}`);
    tokens.push(r.body.token);
    runnerIds.push(r.body.id);
  }
  log(`${RUNNERS} runners registered`);
  const db = new Client({ connectionString: dbUrl });
  await db.connect();
  h.onCleanup(() => db.end().catch(() => undefined));

  const results = { runners: RUNNERS, builds: BUILDS, duration_s: DURATION, short: SHORT };
  const claimOne = async (token) => {
    const r = await fetch(`${app.base}/ci/api/v1/builds/register.json`, { method: 'POST', headers: HEADERS, body: JSON.stringify({ info: INFO, token }) });
    if (r.status !== 201) throw new Error(`claim: ${r.status}`);
    const b = await r.json();
    return { id: b.id, token: b.token };
  };

  if (PARTS.has('poll')) {
    results.poll = { app: await poll(app, tokens), bare: await poll(bare, tokens) };
    log(`poll: app ${results.poll.app.req_per_s} req/s, bare ${results.poll.bare.req_per_s} req/s`);
  }

  if (PARTS.has('paced')) {
    // the bare handler too: what the floor itself costs at this rate (idle timers included)
    results.paced = await paced(app, tokens);
    results.paced.bare_cpu_percent_of_one_core = (await paced(bare, tokens)).cpu_percent_of_one_core;
    log(`paced: ${JSON.stringify(results.paced)}`);
  }

  if (PARTS.has('drain')) {
    results.drain = {};
    for (const server of [app, bare]) {
      const pipelineId = await seedBuilds(db, project.body.id, BUILDS);
      results.drain[server.name] = await drain(server, tokens);
      await db.query('DELETE FROM ci_pipelines WHERE id = $1', [pipelineId]);
      await db.query("DELETE FROM commit_statuses WHERE pipeline_id IS NULL AND stage <> 'external'");
      log(`drain ${server.name}: ${JSON.stringify(results.drain[server.name])}`);
    }
  }

  if (PARTS.has('trace')) {
    await seedBuilds(db, project.body.id, RUNNERS);
    const claims = [];
    for (const token of tokens) claims.push(await claimOne(token));
    results.trace = { app: await traceParts(app, claims) };
    log(`trace: ${JSON.stringify(results.trace.app)}`);
  }

  if (PARTS.has('bigtrace')) {
    await seedBuilds(db, project.body.id, 1);
    const b = await claimOne(tokens[0]);
    const part = Buffer.alloc(100 * 1024, 'y');
    const times = [];
    let offset = 0;
    for (let i = 0; i < 100; i++) {
      const t = process.hrtime.bigint();
      const r = await fetch(`${app.base}/ci/api/v1/builds/${b.id}/trace.txt`, {
        method: 'PATCH',
        headers: { 'Content-Type': 'text/plain', 'BUILD-TOKEN': b.token, 'Content-Range': `${offset}-${offset + part.length}`, 'User-Agent': UA },
        body: part,
      });
      await r.arrayBuffer();
      if (r.status !== 202) throw new Error(`big trace part ${i}: ${r.status}`);
      times.push(Number(process.hrtime.bigint() - t) / 1e6);
      offset += part.length;
    }
    const trace = await fetch(`${app.base}/api/v3/projects/${project.body.id}/builds/${b.id}/trace`, { headers: { 'PRIVATE-TOKEN': root } });
    const body = Buffer.from(await trace.arrayBuffer());
    if (body.length !== offset) throw new Error(`big trace: stored ${body.length} bytes, sent ${offset}`);
    const avg = (xs) => Math.round((xs.reduce((x, y) => x + y, 0) / xs.length) * 100) / 100;
    results.bigtrace = {
      parts: 100,
      part_kb: 100,
      total_mb: offset / 1048576,
      first10_ms: avg(times.slice(0, 10)),
      last10_ms: avg(times.slice(-10)),
      total_ms: Math.round(times.reduce((x, y) => x + y, 0)),
    };
    log(`big trace: ${JSON.stringify(results.bigtrace)}`);
  }

  if (PARTS.has('list')) {
    const t0 = Date.now();
    const listProject = await seedListProject(app, db, root, rootId, runnerIds, LIST_BUILDS);
    log(`${LIST_BUILDS} builds seeded in ${Date.now() - t0} ms`);
    results.list = { builds: LIST_BUILDS, connections: CONNECTIONS, ...(await listBuilds([app, bare], listProject, root)) };
    log(`list: ${JSON.stringify(results.list)}`);
  }

  if (PARTS.has('follow')) {
    await seedBuilds(db, project.body.id, 1);
    const build = await claimOne(tokens[0]);
    results.follow = { app: await followTrace(app, project.body.id, build, root) };
    log(`follow: ${JSON.stringify(results.follow.app)}`);
  }

  if (PARTS.has('yaml200')) {
    const p = await api(app.base, 'POST', '/api/v3/projects', { name: 'ci-bench-yaml' }, root);
    if (p.status !== 201) throw new Error(`yaml project: ${p.status} ${JSON.stringify(p.body)}`);
    results.yaml200 = await yamlPipelines(app, p.body.id, root);
    log(`yaml200: ${JSON.stringify(results.yaml200)}`);
  }

  const ratio = (a, b) => (a && b ? Math.round((a / b) * 100) / 100 : null);
  results.ratios = {
    poll_req_per_s: results.poll ? ratio(results.poll.app.req_per_s, results.poll.bare.req_per_s) : null,
    claim_builds_per_s: results.drain ? ratio(results.drain.app.builds_per_s, results.drain.bare.builds_per_s) : null,
    list_req_per_s: results.list ? ratio(results.list.app.req_per_s, results.list.bare.req_per_s) : null,
  };
  fs.writeFileSync(path.join(RESULTS_DIR, SHORT ? 'ci-short.json' : 'ci-latest.json'), JSON.stringify(results, null, 2));
  const row = (name, a, b, unit) => `| ${name} | ${a} | ${b} | ${unit} |`;
  const lines = ['', `| measure (${RUNNERS} runners${SHORT ? ', SHORT run' : ''}) | app | bare node:http + pg | |`, '|---|---|---|---|'];
  if (results.poll) {
    lines.push(row('poll empty queue', results.poll.app.req_per_s, results.poll.bare.req_per_s, 'req/s'));
    lines.push(row('poll p99', results.poll.app.p99_ms, results.poll.bare.p99_ms, 'ms'));
    lines.push(row('server CPU per poll', results.poll.app.cpu_ms_per_poll, results.poll.bare.cpu_ms_per_poll, 'ms'));
  }
  if (results.drain) {
    lines.push(row(`drain ${BUILDS} builds`, results.drain.app.builds_per_s, results.drain.bare.builds_per_s, 'builds/s'));
    lines.push(row('double claims', results.drain.app.double_claims, results.drain.bare.double_claims, ''));
  }
  if (results.paced)
    lines.push(
      row(
        `${results.paced.runners} runners polling at 1/s: server CPU`,
        `${results.paced.cpu_percent_of_one_core} % of a core`,
        `${results.paced.bare_cpu_percent_of_one_core} % of a core`,
        '(aim < 5 %)',
      ),
    );
  if (results.trace) lines.push(row('trace PATCH 4 KB parts', results.trace.app.parts_per_s, '—', 'parts/s'));
  if (results.bigtrace)
    lines.push(row('10 MB trace in 100 PATCHes: first 10 / last 10 per part', `${results.bigtrace.first10_ms} / ${results.bigtrace.last10_ms}`, '—', 'ms'));
  if (results.list) {
    const l = results.list;
    lines.push(row(`GET builds?per_page=100 (${LIST_BUILDS} builds, ${CONNECTIONS} conns)`, l.app.req_per_s, l.bare.req_per_s, 'req/s'));
    lines.push(row('builds list p50', l.app.p50_ms, l.bare.p50_ms, 'ms'));
    lines.push(row('builds list p99', l.app.p99_ms, l.bare.p99_ms, 'ms'));
    lines.push(row('server CPU per builds list', l.app.cpu_ms_per_req, l.bare.cpu_ms_per_req, 'ms'));
  }
  if (results.follow) {
    const f = results.follow.app;
    lines.push(row(`live trace: PATCH → follower (${f.parts} × 4 KB) p50`, f.p50_ms, '—', 'ms'));
    lines.push(row('live trace p99', f.p99_ms, '—', 'ms'));
  }
  if (results.yaml200) {
    const y = results.yaml200;
    lines.push(row(`POST pipeline, ${y.jobs}-job .gitlab-ci.yml (${y.pipelines} runs) p50 / p99`, `${y.p50_ms} / ${y.p99_ms}`, '—', 'ms (aim ≤ 200)'));
  }
  lines.push('');
  const r = results.ratios;
  lines.push(
    `app/bare: polling ${r.poll_req_per_s ?? '—'}×, claiming ${r.claim_builds_per_s ?? '—'}×, builds list ${r.list_req_per_s ?? '—'}× (aim ≥ 0.5×)`,
    '',
  );
  process.stdout.write(lines.join('\n'));
  if (results.drain) {
    if (results.drain.app.double_claims || results.drain.bare.double_claims) throw new Error('double claims');
    if (results.drain.app.builds !== BUILDS || results.drain.bare.builds !== BUILDS) throw new Error('not every build was claimed');
  }
});
