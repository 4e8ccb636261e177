'use strict';
/**
 * Scale-out benchmark: one app instance against two instances on the same PostgreSQL database and
 * the same DATA_DIR (as behind a load balancer), and the cost of the settings freshness mechanism.
 *
 *   npm run bench:scale          (builds first)
 *
 * What it does: creates a throw-away PostgreSQL database, starts instance A (dist/main.js), then
 * instance B on the same database and DATA_DIR; seeds a project with BENCH_ISSUES issues and a
 * repository of BENCH_FILES files over BENCH_COMMITS commits (pushed over smart HTTP), then measures
 *   1. `GET /projects/:id/issues` with autocannon: all connections to A, then the same number of
 *      connections split over A and B (two autocannon runs at once, figures summed);
 *   2. `git clone` over smart HTTP, BENCH_CLONES clones BENCH_CLONE_CONCURRENCY at a time: all
 *      through A, then alternating A and B;
 *   3. the settings freshness mechanism: settings are cached in memory and a change through any
 *      instance drops every copy over LISTEN/NOTIFY (src/database/notifications.ts), so a request
 *      pays one clock comparison and no I/O. Shown by `GET /user` on A with no settings changes,
 *      then while B changes the settings 10 times a second (every change invalidates A's copy and
 *      costs A one re-read), and by the round trip a per-request version check would add instead
 *      (`SELECT` of the settings row from node, the same pg client library, mean of 500).
 * On 2 cores expect ≈ 1× for two instances: the point is that there is no cross-instance locking
 * penalty, not a speed-up.
 *
 * Env (all optional): BENCH_PG_URL (default postgres://postgres@127.0.0.1:5432), BENCH_DURATION (10 s),
 * BENCH_CONNECTIONS (16), BENCH_ISSUES (200), BENCH_FILES (300), BENCH_COMMITS (30), BENCH_CLONES (20),
 * BENCH_CLONE_CONCURRENCY (4).
 *
 * Prints a markdown table and writes bench/results/scale-latest.json. Exits non-zero on any failed
 * request or clone.
 */
const { execFile } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const autocannon = require('autocannon');
const { Client } = require('pg');
const { createHarness } = require('./harness');

const RESULTS_DIR = path.join(__dirname, 'results');
const DURATION = Number(process.env.BENCH_DURATION || 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS || 16);
const ISSUES = Number(process.env.BENCH_ISSUES || 200);
const FILES = Number(process.env.BENCH_FILES || 300);
const COMMITS = Number(process.env.BENCH_COMMITS || 30);
const CLONES = Number(process.env.BENCH_CLONES || 20);
const CLONE_CONCURRENCY = Number(process.env.BENCH_CLONE_CONCURRENCY || 4);
const ROOT_PASSWORD = 'bench-root-password';
const SECRET_KEY = 'bench-secret-key-0123456789abcdef0123456789abcdef';

const h = createHarness('bench:scale');
const { log, sleep } = h;

function git(args, cwd, env = {}) {
  return new Promise((resolve, reject) => {
    execFile('git', args, { cwd, env: { ...process.env, GIT_TERMINAL_PROMPT: '0', ...env }, maxBuffer: 64 << 20 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`git ${args.join(' ')}: ${stderr || err.message}`));
      else resolve(stdout);
    });
  });
}

function cannon(opts) {
  return new Promise((resolve, reject) => {
    const inst = autocannon(opts, (err, res) => (err ? reject(err) : resolve(res)));
    h.onCleanup(() => inst.stop());
    inst.on('error', reject);
  });
}

/** Runs autocannon against each base at once with `connections` split evenly; sums the figures. */
async function load(bases, p, headers, connections) {
  const per = Math.max(1, Math.floor(connections / bases.length));
  const results = await Promise.all(bases.map((base) => cannon({ url: base + p, headers, connections: per, duration: DURATION })));
  const requests = results.reduce((s, r) => s + r.requests.total, 0);
  const bad = results.reduce((s, r) => s + r.non2xx + r.errors + r.timeouts, 0);
  if (bad) throw new Error(`${bad} failed requests on ${p}`);
  // latency: request-weighted mean of the means; p99 the worst of the runs
  const mean = results.reduce((s, r) => s + r.latency.mean * r.requests.total, 0) / Math.max(1, requests);
  return { rps: requests / DURATION, meanMs: mean, p99Ms: Math.max(...results.map((r) => r.latency.p99)), requests };
}

async function clones(urls, dir) {
  const started = Date.now();
  let next = 0;
  const times = [];
  await Promise.all(
    Array.from({ length: CLONE_CONCURRENCY }, async () => {
      for (;;) {
        const i = next++;
        if (i >= CLONES) return;
        const t0 = Date.now();
        const target = path.join(dir, `c${i}`);
        await git(['clone', '-q', '--bare', urls[i % urls.length], target], dir);
        times.push(Date.now() - t0);
        fs.rmSync(target, { recursive: true, force: true });
      }
    }),
  );
  const total = (Date.now() - started) / 1000;
  times.sort((a, b) => a - b);
  return { perSecond: CLONES / total, meanMs: times.reduce((s, t) => s + t, 0) / times.length, p99Ms: times[Math.floor(times.length * 0.99)] ?? times.at(-1) };
}

async function main() {
  const dbUrl = await h.createDatabase(`bench_scale_${Date.now()}_${process.pid}`);
  const data = h.tempDir('bench-scale-');
  const env = { DATABASE_URL: dbUrl, DATA_DIR: data, HOST: '127.0.0.1', LOG_LEVEL: 'error', ROOT_PASSWORD, SECRET_KEY, EXTERNAL_URL: 'http://127.0.0.1' };
  const bases = [];
  for (const name of ['A', 'B']) {
    const port = await h.freePort();
    const base = `http://127.0.0.1:${port}`;
    // B starts after A is ready: A applied the migrations
    const child = h.startProcess(`instance ${name}`, ['dist/main.js'], { ...env, PORT: String(port) });
    await h.waitReady(child, base, 180_000);
    bases.push(base);
    log(`instance ${name} on ${base}`);
  }
  const [A, B] = bases;
  const session = await fetch(`${A}/api/v3/session`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ login: 'root', password: ROOT_PASSWORD }),
  });
  const token = (await session.json()).private_token;
  const headers = { 'PRIVATE-TOKEN': token };
  const call = async (base, method, p, body) => {
    const r = await fetch(`${base}/api/v3${p}`, { method, headers: { ...headers, 'Content-Type': 'application/json' }, body: body && JSON.stringify(body) });
    if (r.status >= 300) throw new Error(`${method} ${p}: ${r.status} ${await r.text()}`);
    return r.json();
  };

  // seed: a project with issues (created through both instances) and a repository pushed over HTTP
  const project = await call(A, 'POST', '/projects', { name: 'scale' });
  for (let i = 0; i < ISSUES; i += 10) {
    await Promise.all(
      Array.from({ length: Math.min(10, ISSUES - i) }, (_, k) =>
        call(bases[(i + k) % 2], 'POST', `/projects/${project.id}/issues`, { title: `issue ${i + k}`, description: 'x'.repeat(200) }),
      ),
    );
  }
  const work = h.tempDir('bench-scale-work-');
  await git(['init', '-q', '-b', 'master', '.'], work);
  for (let c = 0; c < COMMITS; c++) {
    for (let f = c; f < FILES; f += COMMITS) {
      fs.mkdirSync(path.join(work, `d${f % 20}`), { recursive: true });
      fs.writeFileSync(path.join(work, `d${f % 20}`, `f${f}.txt`), `file ${f} commit ${c}\n`.repeat(50));
    }
    await git(['add', '-A'], work);
    await git(['-c', 'user.name=B', '-c', 'user.email=b@example.com', 'commit', '-q', '-m', `commit ${c}`], work);
  }
  const remote = (base) => `${base.replace('http://', `http://root:${token}@`)}/${project.path_with_namespace}.git`;
  await git(['push', '-q', remote(A), 'master'], work);
  log(`seeded ${ISSUES} issues, ${FILES} files over ${COMMITS} commits`);
  await sleep(2000); // post-push jobs (housekeeping) settle

  const rows = [];
  const results = { duration: DURATION, connections: CONNECTIONS, issues: ISSUES, files: FILES, commits: COMMITS, clones: CLONES };

  // 1. issues list
  const issuesPath = `/api/v3/projects/${project.id}/issues?per_page=20`;
  await load([A], issuesPath, headers, 4); // warm-up
  const issuesOne = await load([A], issuesPath, headers, CONNECTIONS);
  const issuesTwo = await load([A, B], issuesPath, headers, CONNECTIONS);
  results.issues_one = issuesOne;
  results.issues_two = issuesTwo;
  rows.push(['issues list, one instance', issuesOne.rps.toFixed(0) + ' req/s', issuesOne.meanMs.toFixed(1), issuesOne.p99Ms.toFixed(0)]);
  rows.push(['issues list, two instances', issuesTwo.rps.toFixed(0) + ' req/s', issuesTwo.meanMs.toFixed(1), issuesTwo.p99Ms.toFixed(0)]);

  // 2. clones
  const cloneDir = h.tempDir('bench-scale-clones-');
  await git(['clone', '-q', '--bare', remote(A), path.join(cloneDir, 'warm')], cloneDir);
  fs.rmSync(path.join(cloneDir, 'warm'), { recursive: true, force: true });
  const cloneOne = await clones([remote(A)], cloneDir);
  const cloneTwo = await clones([remote(A), remote(B)], cloneDir);
  results.clone_one = cloneOne;
  results.clone_two = cloneTwo;
  rows.push(['git clone, one instance', cloneOne.perSecond.toFixed(2) + ' clones/s', cloneOne.meanMs.toFixed(0), String(cloneOne.p99Ms)]);
  rows.push(['git clone, two instances', cloneTwo.perSecond.toFixed(2) + ' clones/s', cloneTwo.meanMs.toFixed(0), String(cloneTwo.p99Ms)]);

  // 3. settings freshness
  const userQuiet = await load([A], '/api/v3/user', headers, CONNECTIONS);
  let changing = true;
  let changes = 0;
  const changer = (async () => {
    let limit = 100;
    while (changing) {
      await call(B, 'PUT', '/application/settings', { default_projects_limit: ++limit });
      changes++;
      await sleep(100);
    }
  })();
  const userChanging = await load([A], '/api/v3/user', headers, CONNECTIONS);
  changing = false;
  await changer;
  const pg = new Client({ connectionString: dbUrl });
  await pg.connect();
  for (let i = 0; i < 50; i++) await pg.query('SELECT * FROM application_settings ORDER BY id LIMIT 1');
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < 500; i++) await pg.query('SELECT * FROM application_settings ORDER BY id LIMIT 1');
  const checkMs = Number(process.hrtime.bigint() - t0) / 1e6 / 500;
  await pg.end();
  results.user_quiet = userQuiet;
  results.user_settings_changing = { ...userChanging, changes_per_second: changes / DURATION };
  results.per_request_settings_read_ms = checkMs;
  rows.push(['GET /user, settings unchanged', userQuiet.rps.toFixed(0) + ' req/s', userQuiet.meanMs.toFixed(2), userQuiet.p99Ms.toFixed(0)]);
  rows.push([
    `GET /user, settings changed via B ${(changes / DURATION).toFixed(0)}×/s`,
    userChanging.rps.toFixed(0) + ' req/s',
    userChanging.meanMs.toFixed(2),
    userChanging.p99Ms.toFixed(0),
  ]);
  rows.push(['a per-request settings read instead (one round trip)', '—', checkMs.toFixed(3), '—']);

  const table = [
    `| measurement (${DURATION} s, ${CONNECTIONS} connections; ${CLONES} clones ${CLONE_CONCURRENCY} at a time) | throughput | mean ms | p99 ms |`,
    '|---|---|---|---|',
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ].join('\n');
  process.stdout.write(`\n${table}\n\n`);
  process.stdout.write(
    `two instances / one: issues ${(issuesTwo.rps / issuesOne.rps).toFixed(2)}×, clones ${(cloneTwo.perSecond / cloneOne.perSecond).toFixed(2)}×\n` +
      `settings freshness per request: no I/O (in-memory copy, dropped by NOTIFY); a read per request would add ≈ ${checkMs.toFixed(3)} ms and one query\n`,
  );
  fs.mkdirSync(RESULTS_DIR, { recursive: true });
  fs.writeFileSync(
    path.join(RESULTS_DIR, 'scale-latest.json'),
    JSON.stringify(
      {
        at: new Date().toISOString(),
        ...results,
        rows: [
          {
            name: 'issues list, two instances (one as the floor)',
            value: rows[1][1],
            floor: rows[0][1],
            ratio: issuesTwo.rps / issuesOne.rps,
            p99: `${rows[1][3]} ms`,
          },
          {
            name: 'git clone, two instances (one as the floor)',
            value: rows[3][1],
            floor: rows[2][1],
            ratio: cloneTwo.perSecond / cloneOne.perSecond,
            p99: `${rows[3][3]} ms`,
          },
          {
            name: 'GET /user while settings change on the other instance',
            value: rows[5][1],
            floor: rows[4][1],
            ratio: userChanging.rps / userQuiet.rps,
            p99: `${rows[5][3]} ms`,
          },
        ],
      },
      null,
      2,
    ),
  );
}

h.run(main);
