'use strict';
/**
 * The zero-setup default (embedded PGlite) against PostgreSQL mode (issue "Fast and light at scale",
 * goal 3): the built app (dist/main.js) started as `npm start` starts it.
 *
 *   npm run bench:embedded          (builds first: the build writes the embedded template)
 *
 * Measures, for the embedded default:
 * - first start: spawn → readiness on a new data folder (from the build's template);
 * - idle resident memory (whole process tree) BENCH_IDLE_S seconds after start;
 * - the issues list (`GET /projects/:id/issues`, 20 of BENCH_ISSUES issues with author, assignee,
 *   milestone and labels) with BENCH_CONNECTIONS connections for BENCH_SECONDS: req/s, p99, peak RSS;
 * - restart on the same folder: SIGTERM, then spawn → readiness, and idle RSS after it;
 * and the same list and the idle RSS in PostgreSQL mode (a throw-away database), for the ratio.
 * Aims: first start ≤ 5 s, restart → ready ≤ 2 s, ≤ 250 MB idle, ≤ 350 MB under load, list ≥ 0.6×
 * PostgreSQL mode; PostgreSQL mode ≤ 150 MB idle.
 *
 * Env: BENCH_PG_URL, BENCH_SECONDS (10), BENCH_CONNECTIONS (32), BENCH_ISSUES (200), BENCH_IDLE_S (5).
 * Writes bench/results/embedded-latest.json.
 */
const fs = require('node:fs');
const path = require('node:path');
const { createHarness, treeRssMb: treeRss } = require('./harness');

const h = createHarness('bench:embedded');
const ROOT = path.resolve(__dirname, '..');
const SECONDS = Number(process.env.BENCH_SECONDS || 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS || 32);
const ISSUES = Number(process.env.BENCH_ISSUES || 200);
const IDLE_S = Number(process.env.BENCH_IDLE_S || 5);
const ROOT_PASSWORD = 'bench-root-password';
const SECRET_KEY = 'bench-secret-key-0123456789abcdef0123456789abcdef';
const round = (x, d = 1) => Math.round(x * 10 ** d) / 10 ** d;
const treeRssMb = (pid) => round(treeRss(pid));

async function api(base, method, p, body, token) {
  const r = await fetch(`${base}${p}`, {
    method,
    headers: { 'Content-Type': 'application/json', ...(token ? { 'PRIVATE-TOKEN': token } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  return { status: r.status, body: text ? JSON.parse(text) : undefined };
}

async function start(name, env) {
  const port = await h.freePort();
  const base = `http://127.0.0.1:${port}`;
  const t0 = Date.now();
  const child = h.startProcess(name, [path.join(ROOT, 'dist/main.js')], {
    PORT: String(port),
    HOST: '127.0.0.1',
    SECRET_KEY,
    ROOT_PASSWORD,
    LOG_LEVEL: 'error',
    NODE_ENV: 'production',
    ...env,
  });
  await h.waitReady(child, base, 120_000);
  return { child, base, readyMs: Date.now() - t0 };
}

async function stop(child) {
  child.stopping = true;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

/** Seeds a project with ISSUES issues (author, assignee, milestone, 2 labels each) through the API. */
async function seed(base) {
  const session = await api(base, 'POST', '/api/v3/session', { login: 'root', password: ROOT_PASSWORD });
  const token = session.body.private_token;
  const p = await api(base, 'POST', '/api/v3/projects', { name: 'embedded-bench' }, token);
  if (p.status !== 201) throw new Error(`project: ${p.status} ${JSON.stringify(p.body)}`);
  const id = p.body.id;
  const ms = await api(base, 'POST', `/api/v3/projects/${id}/milestones`, { title: 'v1' }, token);
  for (const l of ['bug', 'feature']) await api(base, 'POST', `/api/v3/projects/${id}/labels`, { name: l, color: '#ff0000' }, token);
  for (let i = 0; i < ISSUES; i += 8) {
    await Promise.all(
      Array.from({ length: Math.min(8, ISSUES - i) }, (_, k) =>
        api(
          base,
          'POST',
          `/api/v3/projects/${id}/issues`,
          { title: `issue ${i + k}`, description: 'x'.repeat(200), labels: 'bug,feature', milestone_id: ms.body.id, assignee_id: session.body.id },
          token,
        ),
      ),
    );
  }
  return { token, path: `/api/v3/projects/${id}/issues` };
}

/** The list under load: req/s, p99, and the process tree's peak RSS sampled every 200 ms. */
async function load(server, target) {
  let peak = treeRssMb(server.child.pid);
  const timer = setInterval(() => {
    peak = Math.max(peak, treeRssMb(server.child.pid));
  }, 200);
  try {
    await h.cannon({ url: `${server.base}${target.path}`, headers: { 'PRIVATE-TOKEN': target.token }, connections: CONNECTIONS, duration: 2 });
    const r = await h.cannon({ url: `${server.base}${target.path}`, headers: { 'PRIVATE-TOKEN': target.token }, connections: CONNECTIONS, duration: SECONDS });
    const ok = r['2xx'];
    if (r.errors || ok !== r.requests.total) throw new Error(`${server.child.label}: ${r.errors} errors, ${r.requests.total - ok} non-2xx`);
    return { req_per_s: round(r.requests.average), p50_ms: r.latency.p50, p99_ms: r.latency.p99, peak_rss_mb: peak };
  } finally {
    clearInterval(timer);
  }
}

h.run(async () => {
  if (!fs.existsSync(path.join(ROOT, 'dist/main.js'))) throw new Error('dist/main.js not found: run `npm run build` (npm run bench:embedded does)');
  const results = { issues: ISSUES, connections: CONNECTIONS, seconds: SECONDS };

  // ---- embedded: first start on a new data folder, idle, load, restart
  const dataDir = h.tempDir('embedded-bench-');
  const embeddedEnv = { DATA_DIR: dataDir, DATABASE_URL: '' };
  let e = await start('embedded', embeddedEnv);
  results.first_start_ms = e.readyMs;
  await h.sleep(IDLE_S * 1000);
  results.idle_after_first_start_mb = treeRssMb(e.child.pid);
  h.log(`embedded: first start ${e.readyMs} ms, idle ${results.idle_after_first_start_mb} MB`);
  const target = await seed(e.base);
  await stop(e.child);
  e = await start('embedded (restart)', embeddedEnv);
  results.restart_ready_ms = e.readyMs;
  await h.sleep(IDLE_S * 1000);
  results.idle_after_restart_mb = treeRssMb(e.child.pid);
  h.log(`embedded: restart → ready ${e.readyMs} ms, idle ${results.idle_after_restart_mb} MB`);
  results.embedded = await load(e, target);
  h.log(`embedded list: ${JSON.stringify(results.embedded)}`);
  await stop(e.child);

  // ---- PostgreSQL mode: idle, the same list
  const dbUrl = await h.createDatabase(`bench_embedded_pg_${Date.now()}_${process.pid}`);
  const p = await start('postgresql', { DATA_DIR: h.tempDir('embedded-bench-pg-'), DATABASE_URL: dbUrl });
  await h.sleep(IDLE_S * 1000);
  results.pg_idle_mb = treeRssMb(p.child.pid);
  const pgTarget = await seed(p.base);
  results.postgresql = await load(p, pgTarget);
  h.log(`postgresql: idle ${results.pg_idle_mb} MB, list ${JSON.stringify(results.postgresql)}`);
  await stop(p.child);
  results.ratio = round(results.embedded.req_per_s / results.postgresql.req_per_s, 2);

  const rows = [
    ['first start (new data folder) → ready', `${results.first_start_ms} ms`, '≤ 5000 ms'],
    ['restart → ready (existing data folder)', `${results.restart_ready_ms} ms`, '≤ 2000 ms'],
    ['idle RSS after first start', `${results.idle_after_first_start_mb} MB`, '≤ 250 MB'],
    ['idle RSS after restart', `${results.idle_after_restart_mb} MB`, '≤ 250 MB'],
    [`peak RSS under the issues list, ${CONNECTIONS} connections`, `${results.embedded.peak_rss_mb} MB`, '≤ 350 MB'],
    ['issues list req/s: embedded vs PostgreSQL mode', `${results.embedded.req_per_s} vs ${results.postgresql.req_per_s} (${results.ratio}×)`, '≥ 0.6×'],
    ['issues list p99: embedded vs PostgreSQL mode', `${results.embedded.p99_ms} vs ${results.postgresql.p99_ms} ms`, ''],
    ['PostgreSQL mode idle RSS', `${results.pg_idle_mb} MB`, '≤ 150 MB'],
  ];
  const table = ['| measure | value | aim |', '|---|---|---|', ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
  process.stdout.write(`\n${table}\n`);
  fs.mkdirSync(path.join(__dirname, 'results'), { recursive: true });
  fs.writeFileSync(path.join(__dirname, 'results', 'embedded-latest.json'), JSON.stringify(results, null, 2));
});
