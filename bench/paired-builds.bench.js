'use strict';
/**
 * Two builds of the app on the same data, paired: before/after figures for one change (issue 27).
 * A machine shared with other work moves req/s and latencies; the CPU the app process and its
 * PostgreSQL backends spend per request moves much less, and runs of the two builds alternate
 * (A B A B …) so that a drift of the machine's load falls on both.
 *
 *   BENCH_BUILDS=before=/tmp/a/dist/main.js,after=dist/main.js node bench/paired-builds.bench.js
 *
 * One database is created and migrated by the LAST build listed (the newest schema; older builds
 * run on it unchanged), then seeded with bench/seed-large.js at the shape of bench:lists (10,000
 * projects of which the viewer is a member of 1,000; 10,000 issues and 2,000 merge requests in the
 * listed project). Then BENCH_PAIRS (2) rounds: each build started, each route loaded with
 * autocannon (BENCH_CONNECTIONS 32, BENCH_WARMUP 3 s, BENCH_DURATION 10 s), the build stopped.
 * Both builds must answer each route with the same body (compared first).
 *
 * Env: BENCH_BUILDS (required), BENCH_ROUTES (comma list of: projects, issues, merge_requests,
 * user, projects_etag, issues_etag: the latter send If-None-Match with the ETag of the first answer), BENCH_PAIRS,
 * BENCH_PROJECTS (10000), BENCH_ISSUES (10000), BENCH_OTHER_ISSUES (20000); or an existing seeded
 * database: BENCH_DB_URL with SECRET_KEY (the seed's), BENCH_TOKEN (its viewer's) and
 * BENCH_BIG_PROJECT (1), which is then left in place. Prints a markdown table
 * of every run and the medians per build.
 */
const fs = require('node:fs');
const path = require('node:path');

const { createHarness } = require('./harness');
const { createApiBench } = require('./api-bench');
const { seedLarge } = require('./seed-large');

const PAIRS = Number(process.env.BENCH_PAIRS || 2);
const PROJECTS = Number(process.env.BENCH_PROJECTS || 10_000);
const ISSUES = Number(process.env.BENCH_ISSUES || 10_000);
const OTHER_ISSUES = Number(process.env.BENCH_OTHER_ISSUES ?? 20_000);
const SECRET_KEY = process.env.SECRET_KEY || 'bench-secret-key-0123456789abcdef0123456789abcdef';
const EXTERNAL_URL = 'http://gitlab.bench.example';
const DB_NAME = `bench_paired_${Date.now()}_${process.pid}`;

const h = createHarness('paired');
const { log, freePort, startProcess, waitReady } = h;
const { measure, getJson } = createApiBench(h);

function builds() {
  const spec = process.env.BENCH_BUILDS;
  if (!spec) throw new Error('BENCH_BUILDS=name=path/to/main.js,name=path/to/main.js is required');
  return spec.split(',').map((s) => {
    const [name, file] = s.split('=');
    const main = path.resolve(h.ROOT, file);
    if (!fs.existsSync(main)) throw new Error(`${main} not found`);
    return { name, main };
  });
}

function routes(bigId) {
  const all = {
    projects: { name: `GET /projects (member of ${PROJECTS / 10} of ${PROJECTS})`, path: '/api/v3/projects' },
    issues: { name: `GET /projects/:id/issues (20 of ${ISSUES})`, path: `/api/v3/projects/${bigId}/issues` },
    merge_requests: { name: 'GET /projects/:id/merge_requests (20 of 2000)', path: `/api/v3/projects/${bigId}/merge_requests` },
    user: { name: 'GET /user', path: '/api/v3/user' },
  };
  const names = (process.env.BENCH_ROUTES || 'projects,issues,merge_requests').split(',');
  return names.map((n) => {
    const etag = n.endsWith('_etag');
    const r = all[etag ? n.slice(0, -5) : n];
    if (!r) throw new Error(`unknown route ${n}`);
    return etag ? { ...r, name: `${r.name}, If-None-Match`, etag: true } : r;
  });
}

async function start(build, dbUrl, dataDir) {
  const port = await freePort();
  const server = {
    name: build.name,
    base: `http://127.0.0.1:${port}`,
    child: startProcess(build.name, [build.main], {
      DATABASE_URL: dbUrl,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      SECRET_KEY,
      ROOT_PASSWORD: 'bench-root-password',
      EXTERNAL_URL,
      LOG_LEVEL: 'error',
      DB_POOL_SIZE: '10',
      NODE_ENV: 'production',
    }),
  };
  await waitReady(server.child, server.base);
  return server;
}

async function stop(server) {
  server.child.stopping = true;
  server.child.kill('SIGTERM');
  await new Promise((r) => (server.child.exitCode !== null ? r() : server.child.once('exit', r)));
  h.children.delete(server.child);
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main() {
  const list = builds();
  const existing = process.env.BENCH_DB_URL;
  const dbUrl = existing ?? (await h.createDatabase(DB_NAME));
  const dataDir = h.tempDir('gitlab-bench-paired-');
  const newest = await start(list[list.length - 1], dbUrl, dataDir); // migrates
  const seed = existing
    ? { viewerToken: process.env.BENCH_TOKEN, bigProjectId: Number(process.env.BENCH_BIG_PROJECT || 1) }
    : await seedLarge({
        dbUrl,
        secretKey: SECRET_KEY,
        repo: false,
        counts: { users: 1000, projects: PROJECTS, issues: ISSUES + OTHER_ISSUES, bigIssues: ISSUES, mergeRequests: 2000, builds: 100 },
      });
  if (!existing) log(`seeded: ${JSON.stringify(seed.counts)}`);
  const eps = routes(seed.bigProjectId);
  const token = seed.viewerToken;
  // same answers from every build
  const reference = {};
  for (const ep of eps) reference[ep.path] = JSON.stringify((await getJson(newest.base, ep.path, token)).body);
  await stop(newest);
  const results = [];
  for (let round = 1; round <= PAIRS; round++) {
    for (const build of list) {
      const server = await start(build, dbUrl, dataDir);
      for (const ep of eps) {
        const body = JSON.stringify((await getJson(server.base, ep.path, token)).body);
        if (body !== reference[ep.path]) throw new Error(`${build.name} answers ${ep.path} differently from ${list[list.length - 1].name}`);
        let target = ep;
        if (ep.etag) {
          const r = await fetch(server.base + ep.path, { headers: { 'PRIVATE-TOKEN': token } });
          const tag = r.headers.get('etag');
          if (!tag) throw new Error(`${build.name}: no ETag on ${ep.path}`);
          target = { ...ep, headers: { 'If-None-Match': tag } };
        }
        const res = await measure(server, target, token, dbUrl);
        results.push({ round, build: build.name, ...res });
      }
      await stop(server);
    }
  }
  console.log('\n| route | build | round | req/s | p50 ms | app CPU ms/req | PostgreSQL CPU ms/req | other CPU % |');
  console.log('|---|---|---:|---:|---:|---:|---:|---:|');
  for (const r of results) {
    console.log(
      `| ${r.endpoint} | ${r.build} | ${r.round} | ${r.req_per_s.toFixed(0)} | ${r.latency_p50_ms} | ${r.server_cpu_ms_per_req} | ${r.postgres_cpu_ms_per_req} | ${r.other_cpu_percent} |`,
    );
  }
  console.log('\n| route | build | median req/s | median app CPU ms/req | median PostgreSQL CPU ms/req |');
  console.log('|---|---|---:|---:|---:|');
  for (const ep of eps) {
    for (const b of list) {
      const rs = results.filter((r) => r.endpoint === ep.name && r.build === b.name);
      console.log(
        `| ${ep.name} | ${b.name} | ${median(rs.map((r) => r.req_per_s)).toFixed(0)} | ${median(rs.map((r) => r.server_cpu_ms_per_req))} | ${median(rs.map((r) => r.postgres_cpu_ms_per_req))} |`,
      );
    }
  }
  const file = path.join(h.ROOT, 'bench', 'results', 'paired-latest.json');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, JSON.stringify({ builds: list, results }, null, 2));
}

h.run(main);
