'use strict';
/**
 * CI runner API benchmark: the built app (dist/main.js) against a bare node:http + pg handler doing
 * the same claim (bench/ci-bare-server.js), on a throw-away PostgreSQL database.
 *
 *   npm run bench:ci          (builds first)
 *
 * 1. 50 runners polling an empty queue (POST builds/register.json → 404): requests/s, p99, server CPU per poll;
 * 2. 50 runners draining 1,000 pending builds: builds/s, and double claims (must be 0);
 * 3. trace PATCH of 4 KB parts, 50 running builds in parallel: parts/s (app only).
 *
 * Env (all optional): BENCH_PG_URL, BENCH_RUNNERS (50), BENCH_BUILDS (1000), BENCH_DURATION (10 s),
 * BENCH_WARMUP (2 s), DB_POOL_SIZE (10), BENCH_APP_MAIN (default dist/main.js).
 * Prints a markdown table and writes bench/results/ci-latest.json; exits non-zero on errors or double claims.
 */
const fs = require('node:fs');
const path = require('node:path');
const { Client } = require('pg');
const { createHarness } = require('./harness');

const ROOT = path.resolve(__dirname, '..');
const RESULTS_DIR = path.join(__dirname, 'results');
const RUNNERS = Number(process.env.BENCH_RUNNERS || 50);
const BUILDS = Number(process.env.BENCH_BUILDS || 1000);
const DURATION = Number(process.env.BENCH_DURATION || 10);
const WARMUP = Number(process.env.BENCH_WARMUP || 2);
const POOL_SIZE = Number(process.env.DB_POOL_SIZE || 10);
const SECRET_KEY = 'bench-secret-key-0123456789abcdef0123456789abcdef';
const ROOT_PASSWORD = 'bench-root-password';
const EXTERNAL_URL = 'http://gitlab.bench.example';
const DB_NAME = `bench_ci_${Date.now()}_${process.pid}`;
const UA = 'gitlab-ci-multi-runner 1.3.5 (v1.3.5; go1.19.8; linux/amd64)';
const INFO = { name: 'gitlab-ci-multi-runner', version: '1.3.5', revision: '3af07be', platform: 'linux', architecture: 'amd64', executor: 'shell' };
const HEADERS = { 'Content-Type': 'application/json', Accept: 'application/json', 'User-Agent': UA };

const h = createHarness('bench:ci');
const { log, freePort, startProcess, waitReady, cpuMs, cannon } = h;
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

async function drain(server, tokens) {
  const claimed = [];
  const t0 = process.hrtime.bigint();
  await Promise.all(
    tokens.map(async (token) => {
      for (;;) {
        const r = await fetch(`${server.base}/ci/api/v1/builds/register.json`, { method: 'POST', headers: HEADERS, body: JSON.stringify({ info: INFO, token }) });
        const text = await r.text();
        if (r.status === 404) return;
        if (r.status !== 201) throw new Error(`${server.name} claim: ${r.status} ${text.slice(0, 200)}`);
        claimed.push(JSON.parse(text).id);
      }
    }),
  );
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const unique = new Set(claimed).size;
  return { builds: claimed.length, seconds: Math.round(seconds * 100) / 100, builds_per_s: Math.round((claimed.length / seconds) * 10) / 10, double_claims: claimed.length - unique };
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
  return { parts, parts_per_s: Math.round(parts / seconds), mb_per_s: Math.round(((parts * 4096) / seconds / 1048576) * 10) / 10, cpu_ms_per_part: Math.round((cpu / parts) * 1000) / 1000 };
}

h.run(async () => {
  const mainJs = path.resolve(ROOT, process.env.BENCH_APP_MAIN || 'dist/main.js');
  if (!fs.existsSync(mainJs)) throw new Error(`${mainJs} not found: run \`npm run build\` (npm run bench:ci does)`);
  fs.mkdirSync(RESULTS_DIR, { recursive: true });
  const dbUrl = await h.createDatabase(DB_NAME);
  const [appPort, barePort] = [await freePort(), await freePort()];
  const common = { DATABASE_URL: dbUrl, HOST: '127.0.0.1', SECRET_KEY, EXTERNAL_URL, DB_POOL_SIZE: String(POOL_SIZE), NODE_ENV: 'production' };
  const app = {
    name: 'app',
    base: `http://127.0.0.1:${appPort}`,
    child: startProcess('app', [mainJs], { ...common, PORT: String(appPort), DATA_DIR: h.tempDir('ci-bench-'), ROOT_PASSWORD, LOG_LEVEL: 'error' }),
  };
  await waitReady(app.child, app.base);
  const bare = { name: 'bare', base: `http://127.0.0.1:${barePort}`, child: startProcess('bare', [path.join(__dirname, 'ci-bare-server.js')], { ...common, PORT: String(barePort) }) };
  await waitReady(bare.child, bare.base);

  const session = await api(app.base, 'POST', '/api/v3/session', { login: 'root', password: ROOT_PASSWORD });
  const root = session.body.private_token;
  const project = await api(app.base, 'POST', '/api/v3/projects', { name: 'ci-bench' }, root);
  if (project.status !== 201) throw new Error(`project: ${project.status} ${JSON.stringify(project.body)}`);
  const shown = await api(app.base, 'GET', `/api/v3/projects/${project.body.id}`, undefined, root);
  const tokens = [];
  for (let i = 0; i < RUNNERS; i++) {
    const r = await api(app.base, 'POST', '/ci/api/v1/runners/register.json', { token: shown.body.runners_token, description: `bench ${i}`, info: INFO });
    if (r.status !== 201) throw new Error(`register: ${r.status} ${JSON.stringify(r.body)}`);
    tokens.push(r.body.token);
  }
  log(`${RUNNERS} runners registered`);
  const db = new Client({ connectionString: dbUrl });
  await db.connect();
  h.onCleanup(() => db.end().catch(() => undefined));

  const results = { runners: RUNNERS, builds: BUILDS, duration_s: DURATION };
  results.poll = { app: await poll(app, tokens), bare: await poll(bare, tokens) };
  log(`poll: app ${results.poll.app.req_per_s} req/s, bare ${results.poll.bare.req_per_s} req/s`);

  results.drain = {};
  for (const server of [app, bare]) {
    const pipelineId = await seedBuilds(db, project.body.id, BUILDS);
    results.drain[server.name] = await drain(server, tokens);
    await db.query('DELETE FROM ci_pipelines WHERE id = $1', [pipelineId]);
    await db.query("DELETE FROM commit_statuses WHERE pipeline_id IS NULL AND stage <> 'external'");
    log(`drain ${server.name}: ${JSON.stringify(results.drain[server.name])}`);
  }

  await seedBuilds(db, project.body.id, RUNNERS);
  const claims = [];
  for (const token of tokens) {
    const r = await fetch(`${app.base}/ci/api/v1/builds/register.json`, { method: 'POST', headers: HEADERS, body: JSON.stringify({ info: INFO, token }) });
    const b = await r.json();
    claims.push({ id: b.id, token: b.token });
  }
  results.trace = { app: await traceParts(app, claims) };
  log(`trace: ${JSON.stringify(results.trace.app)}`);

  results.ratios = {
    poll_req_per_s: Math.round((results.poll.app.req_per_s / results.poll.bare.req_per_s) * 100) / 100,
    claim_builds_per_s: Math.round((results.drain.app.builds_per_s / results.drain.bare.builds_per_s) * 100) / 100,
  };
  fs.writeFileSync(path.join(RESULTS_DIR, 'ci-latest.json'), JSON.stringify(results, null, 2));
  const row = (name, a, b, unit) => `| ${name} | ${a} | ${b} | ${unit} |`;
  process.stdout.write(
    [
      '',
      `| measure (${RUNNERS} runners) | app | bare node:http + pg | |`,
      '|---|---|---|---|',
      row('poll empty queue', results.poll.app.req_per_s, results.poll.bare.req_per_s, 'req/s'),
      row('poll p99', results.poll.app.p99_ms, results.poll.bare.p99_ms, 'ms'),
      row('server CPU per poll', results.poll.app.cpu_ms_per_poll, results.poll.bare.cpu_ms_per_poll, 'ms'),
      row(`drain ${BUILDS} builds`, results.drain.app.builds_per_s, results.drain.bare.builds_per_s, 'builds/s'),
      row('double claims', results.drain.app.double_claims, results.drain.bare.double_claims, ''),
      row('trace PATCH 4 KB parts', results.trace.app.parts_per_s, '—', 'parts/s'),
      '',
      `app/bare: polling ${results.ratios.poll_req_per_s}×, claiming ${results.ratios.claim_builds_per_s}× (aim ≥ 0.5×)`,
      '',
    ].join('\n'),
  );
  if (results.drain.app.double_claims || results.drain.bare.double_claims) throw new Error('double claims');
  if (results.drain.app.builds !== BUILDS || results.drain.bare.builds !== BUILDS) throw new Error('not every build was claimed');
});
