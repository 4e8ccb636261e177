'use strict';
/**
 * Big data benchmark (issue "Fast and light at scale", goals 4 and 5): the same routes on a small and
 * on a large seeded data set (bench/seed-large.js), the ratio of their latencies, deep pages against
 * page 1, and git reads of the 100,000-commit repository against the bare `git` command. It also
 * records the SQL each list sends (with its parameters) and writes the EXPLAIN (ANALYZE) plan of
 * every statement on the large set to docs/performance-plans.md.
 *
 *   npm run bench:data          (builds first)
 *
 * Env: BENCH_PG_URL (postgres://postgres@127.0.0.1:5432), BENCH_SCALE (1: the full large set),
 * BENCH_SMALL_SCALE (0.01), BENCH_REQUESTS (200 timed requests per route, after 20 warm-up ones),
 * BENCH_KEEP=1 keeps the databases (names printed).
 *
 * The app runs in this process (dist/), so that the statements of each request can be recorded; the
 * requests are sequential (latency, not throughput: bench:hot measures throughput), so client and
 * server never compete within one request.
 */
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const http = require('node:http');
const { Client } = require('pg');
const { seedLarge } = require('./seed-large');

const ROOT = path.resolve(__dirname, '..');
const PG_URL = (process.env.BENCH_PG_URL || 'postgres://postgres@127.0.0.1:5432').replace(/\/+$/, '');
const SCALE = Number(process.env.BENCH_SCALE || 1);
const SMALL_SCALE = Number(process.env.BENCH_SMALL_SCALE || 0.01);
const REQUESTS = Number(process.env.BENCH_REQUESTS || 200);
const SECRET_KEY = 'bench-secret-key-0123456789abcdef0123456789abcdef';
const log = (m) => process.stderr.write(`[data] ${m}\n`);

require('reflect-metadata');
const { createApp } = require(path.join(ROOT, 'dist/app.factory'));
const { loadConfig } = require(path.join(ROOT, 'dist/config/config'));

async function admin(sql) {
  const c = new Client({ connectionString: `${PG_URL}/postgres` });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
function get(port, p, token) {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path: p, agent, headers: { 'PRIVATE-TOKEN': token } }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
  });
}

function pct(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function time(fn, n) {
  for (let i = 0; i < Math.min(20, n); i++) await fn();
  const ms = [];
  for (let i = 0; i < n; i++) {
    const t = process.hrtime.bigint();
    await fn();
    ms.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  ms.sort((a, b) => a - b);
  return { p50: pct(ms, 50), p99: pct(ms, 99) };
}

function routes(seed) {
  const p = seed.bigProjectId;
  return [
    { name: 'GET /projects (viewer: 1,000 of 10,000)', path: '/api/v3/projects', token: 'viewer' },
    { name: 'GET /projects?search=', path: '/api/v3/projects?search=proj-4321', token: 'owner' },
    { name: 'GET /users', path: '/api/v3/users', token: 'viewer' },
    { name: 'GET /users?search=', path: '/api/v3/users?search=seed_user_4321', token: 'viewer' },
    { name: 'GET /projects/:id/issues', path: `/api/v3/projects/${p}/issues`, token: 'viewer' },
    { name: 'GET /projects/:id/issues?labels=&state=', path: `/api/v3/projects/${p}/issues?labels=label-2&state=opened`, token: 'viewer' },
    {
      name: 'GET /projects/:id/issues page 400',
      path: `/api/v3/projects/${p}/issues?page=400`,
      token: 'viewer',
      deepOf: 'GET /projects/:id/issues',
      scaleOnly: true,
    },
    { name: 'GET /issues (all projects)', path: '/api/v3/issues', token: 'viewer' },
    { name: 'GET /projects/:id/merge_requests', path: `/api/v3/projects/${p}/merge_requests`, token: 'viewer' },
    { name: 'GET /projects/:id/builds', path: `/api/v3/projects/${p}/builds`, token: 'viewer' },
    { name: 'GET /projects/:id/issues/:iid/notes', path: `/api/v3/projects/${p}/issues/1/notes`, token: 'viewer', byId: true },
    {
      name: 'GET /projects/:id/repository/commits',
      path: `/api/v3/projects/${p}/repository/commits`,
      token: 'viewer',
      git: ['log', '-n', '20', '--format=%H%x00%P%x00%an%x00%ae%x00%aI%x00%B%x00', 'master'],
    },
    {
      name: 'GET /projects/:id/repository/tree',
      path: `/api/v3/projects/${p}/repository/tree?path=src/d0/m3`,
      token: 'viewer',
      git: ['ls-tree', 'master:src/d0/m3'],
    },
    {
      name: 'GET /projects/:id/repository/blobs/master?filepath=',
      path: `/api/v3/projects/${p}/repository/blobs/master?filepath=src/d0/m3/file180.txt`,
      token: 'viewer',
      git: ['cat-file', '-p', 'master:src/d0/m3/file180.txt'],
    },
    {
      name: 'GET /projects/:id/repository/branches',
      path: `/api/v3/projects/${p}/repository/branches`,
      token: 'viewer',
      git: ['for-each-ref', '--format=%(refname)%00%(objectname)', 'refs/heads/'],
    },
  ];
}

async function prepare(name, scale, dataDir) {
  await admin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  await admin(`CREATE DATABASE "${name}"`);
  const dbUrl = `${PG_URL}/${name}`;
  const config = loadConfig({
    DATABASE_URL: dbUrl,
    DATA_DIR: dataDir,
    SECRET_KEY,
    LOG_LEVEL: 'silent',
    QUEUE_WORKERS: 'false',
    ROOT_PASSWORD: 'bench-root-password',
  });
  const t0 = Date.now();
  let app = await createApp(config); // migrates
  await app.close();
  const seed = await seedLarge({ dbUrl, dataDir, secretKey: SECRET_KEY, scale, log: (m) => log(`${name}: ${m}`) });
  log(`${name}: seeded in ${((Date.now() - t0) / 1000).toFixed(1)} s: ${JSON.stringify(seed.counts)}`);
  app = await createApp(config);
  const server = await app.app.listen(0, '127.0.0.1');
  return { name, dbUrl, app, port: server.address().port, seed };
}

function gitTime(repo, args) {
  const env = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: os.tmpdir(), LC_ALL: 'C' };
  return () =>
    new Promise((resolve, reject) => {
      const { execFile } = require('node:child_process');
      execFile('git', ['--git-dir', repo, ...args], { env, maxBuffer: 64 << 20 }, (e) => (e ? reject(e) : resolve()));
    });
}

async function explain(set, route) {
  const counter = set.app.db.counter;
  counter.statements.length = 0;
  counter.parameters.length = 0;
  counter.recording = true;
  await get(set.port, route.path, set.seed[`${route.token}Token`]);
  counter.recording = false;
  const c = new Client({ connectionString: set.dbUrl });
  await c.connect();
  const out = [];
  try {
    for (let i = 0; i < counter.statements.length; i++) {
      const sql = counter.statements[i];
      if (!/^\s*(SELECT|WITH)/i.test(sql)) {
        out.push({ sql, plan: '(not a read: not explained)' });
        continue;
      }
      try {
        const r = await c.query(`EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, SUMMARY ON) ${sql}`, counter.parameters[i] || []);
        out.push({ sql, plan: r.rows.map((x) => x['QUERY PLAN']).join('\n') });
      } catch (e) {
        out.push({ sql, plan: `(EXPLAIN failed: ${e.message})` });
      }
    }
  } finally {
    await c.end();
  }
  return out;
}

async function main() {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-data-'));
  const stamp = `${Date.now()}_${process.pid}`;
  const names = [`bench_small_${stamp}`, `bench_large_${stamp}`];
  const sets = [];
  try {
    sets.push(await prepare(names[0], SMALL_SCALE, path.join(tmp, 'small')));
    sets.push(await prepare(names[1], SCALE, path.join(tmp, 'large')));
    const [small, large] = sets;
    const rows = [];
    const plans = [];
    for (const route of routes(large.seed)) {
      const r = {};
      for (const set of sets) {
        const token = set.seed[`${route.token}Token`];
        const probe = await get(set.port, route.path.replace(`/projects/${large.seed.bigProjectId}/`, `/projects/${set.seed.bigProjectId}/`), token);
        if (probe.status !== 200) throw new Error(`${route.name} on ${set.name}: ${probe.status} ${probe.body.toString().slice(0, 200)}`);
        const p = route.path.replace(`/projects/${large.seed.bigProjectId}/`, `/projects/${set.seed.bigProjectId}/`);
        r[set === small ? 'small' : 'large'] = await time(() => get(set.port, p, token), REQUESTS);
      }
      if (route.git) r.git = await time(gitTime(large.seed.repoPath, route.git), REQUESTS);
      rows.push({ route, ...r });
      log(
        `${route.name}: small p50 ${r.small.p50.toFixed(2)} ms, large p50 ${r.large.p50.toFixed(2)} p99 ${r.large.p99.toFixed(2)} ms${r.git ? `, git ${r.git.p50.toFixed(2)} ms` : ''}`,
      );
      if (!route.git) plans.push({ route, statements: await explain(large, route) });
    }
    const byName = new Map(rows.map((x) => [x.route.name, x]));
    const lines = [
      `Large set: ${JSON.stringify(large.seed.counts)}; small set at scale ${SMALL_SCALE}. ${REQUESTS} sequential requests per route (after 20 warm-up), keep-alive, in-process app.`,
      '',
      '| route | small p50 ms | large p50 ms | large p99 ms | large / small | vs | ',
      '|---|---:|---:|---:|---:|---|',
    ];
    for (const x of rows) {
      let vs = '';
      if (x.git) vs = `git ${x.git.p50.toFixed(2)} ms → **${(x.large.p50 / x.git.p50).toFixed(2)}×** git`;
      if (x.route.deepOf) {
        const base = byName.get(x.route.deepOf);
        vs = `page 1: ${base.large.p50.toFixed(2)} ms → **${(x.large.p50 / base.large.p50).toFixed(2)}×** page 1`;
      }
      lines.push(
        `| ${x.route.name} | ${x.small.p50.toFixed(2)} | ${x.large.p50.toFixed(2)} | ${x.large.p99.toFixed(2)} | ${(x.large.p50 / x.small.p50).toFixed(2)} | ${vs} |`,
      );
    }
    const table = lines.join('\n');
    process.stdout.write(`\n${table}\n`);
    fs.mkdirSync(path.join(__dirname, 'results'), { recursive: true });
    fs.writeFileSync(path.join(__dirname, 'results', 'data-scale-latest.json'), JSON.stringify(rows, null, 2));
    const md = [
      '# EXPLAIN plans of the list routes on the large data set',
      '',
      'Written by `npm run bench:data` (bench/data-scale.bench.js): every statement each route sends, as recorded',
      'from the app, with `EXPLAIN (ANALYZE, BUFFERS)` on the large seeded set (bench/seed-large.js).',
      '',
      table,
      '',
    ];
    for (const p of plans) {
      md.push(`## ${p.route.name}`, '', `\`${p.route.path.replace(/\/projects\/\d+\//, '/projects/:id/')}\` — ${p.statements.length} statement(s)`, '');
      for (const s of p.statements) md.push('```sql', s.sql.trim(), '```', '```', s.plan, '```', '');
    }
    fs.writeFileSync(path.join(ROOT, 'docs', 'performance-plans.md'), md.join('\n'));
    log('wrote docs/performance-plans.md');
  } finally {
    for (const s of sets) await s.app.close().catch(() => undefined);
    agent.destroy();
    if (process.env.BENCH_KEEP !== '1') for (const n of names) await admin(`DROP DATABASE IF EXISTS "${n}" WITH (FORCE)`).catch(() => undefined);
    else log(`kept databases ${names.join(', ')}`);
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    process.stderr.write(`bench failed: ${e.stack || e.message}\n`);
    process.exit(1);
  },
);
