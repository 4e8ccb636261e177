'use strict';
/**
 * Hot list reads at scale (issue 17, goal 1): the built app (dist/main.js) against a bare node:http
 * baseline (bench/lists-bare-server.js) sending the same SQL and building the same JSON, on a
 * throw-away PostgreSQL database seeded with bench/seed-large.js's shape at these sizes:
 * 10,000 private projects of which the viewer (`seed_viewer`, a developer, not an administrator)
 * is a member of 1,000; one project with 10,000 issues (authors, assignees, milestones, one or two
 * labels, two notes each) and 2,000 merge requests; 20,000 more issues spread over the other
 * projects (two each: with every issue in one project, PostgreSQL's statistics make it count a
 * project's open issues by scanning the whole table, which no real instance looks like); 1,000 users.
 *
 *   GET /api/v3/projects                        (20 of the viewer's 1,000)
 *   GET /api/v3/projects/:id/issues             (20 of 10,000, author/assignee/milestone/labels)
 *   GET /api/v3/projects/:id/merge_requests     (20 of 2,000)
 *
 *   npm run bench:lists          (builds first)
 *
 * Both servers must answer each route identically (body, key order, pagination headers) before
 * anything is measured. Then each route is loaded with autocannon (BENCH_CONNECTIONS, 32) for
 * BENCH_DURATION / BENCH_SECONDS (10 s, after BENCH_WARMUP, 3 s) on each server: req/s, p50, p99,
 * server and PostgreSQL CPU per request, peak RSS.
 *
 * Env (all optional): BENCH_PG_URL, BENCH_CONNECTIONS, BENCH_DURATION (or BENCH_SECONDS), BENCH_WARMUP,
 * DB_POOL_SIZE (10), BENCH_APP_MAIN (default dist/main.js), BENCH_ONLY=<substring of the route name>,
 * BENCH_PROFILE=1 (both servers with --cpu-prof; profiles in bench/results/), BENCH_ISSUES (10000: the
 * listed project's), BENCH_OTHER_ISSUES (20000), BENCH_PROJECTS (10000: the viewer is a member of one in ten).
 *
 * Prints a markdown table and writes bench/results/lists-latest.json. Exits non-zero on any error,
 * non-2xx response, or response mismatch between the two servers.
 */
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const { createHarness } = require('./harness');
const { createApiBench } = require('./api-bench');
const { seedLarge } = require('./seed-large');

const ROOT = path.resolve(__dirname, '..');
const POOL_SIZE = Number(process.env.DB_POOL_SIZE || 10);
const ISSUES = Number(process.env.BENCH_ISSUES || 10_000);
const OTHER_ISSUES = Number(process.env.BENCH_OTHER_ISSUES ?? 20_000);
const PROJECTS = Number(process.env.BENCH_PROJECTS || 10_000);
const SECRET_KEY = 'bench-secret-key-0123456789abcdef0123456789abcdef';
const ROOT_PASSWORD = 'bench-root-password';
const EXTERNAL_URL = 'http://gitlab.bench.example';
const DB_NAME = `bench_lists_${Date.now()}_${process.pid}`;

const h = createHarness('lists');
const { log } = h;
const { CONNECTIONS, DURATION, WARMUP, RESULTS_DIR, checkSameResponses, runAndReport, startMeasuredApp, startBare } = createApiBench(h);

function endpoints(bigId) {
  return [
    { name: `GET /projects (member of ${PROJECTS / 10} of ${PROJECTS})`, path: '/api/v3/projects' },
    { name: `GET /projects/:id/issues (20 of ${ISSUES})`, path: `/api/v3/projects/${bigId}/issues` },
    { name: 'GET /projects/:id/merge_requests (20 of 2000)', path: `/api/v3/projects/${bigId}/merge_requests` },
  ].filter((ep) => !process.env.BENCH_ONLY || ep.name.includes(process.env.BENCH_ONLY));
}

async function main() {
  const mainJs = path.resolve(ROOT, process.env.BENCH_APP_MAIN || 'dist/main.js');
  if (!fs.existsSync(mainJs)) throw new Error(`${mainJs} not found: run \`npm run build\` (npm run bench:lists does)`);
  fs.mkdirSync(RESULTS_DIR, { recursive: true });
  const dataDir = h.tempDir('gitlab-bench-lists-');
  const dbUrl = await h.createDatabase(DB_NAME);

  // migrations ran; the bare handler presents git@HOST: URLs, as the app does without its SSH server
  const env = { DATABASE_URL: dbUrl, DATA_DIR: dataDir, SECRET_KEY, ROOT_PASSWORD, EXTERNAL_URL, SSH_ENABLED: 'false', DB_POOL_SIZE: String(POOL_SIZE) };
  const app = await startMeasuredApp(mainJs, env);

  const t0 = Date.now();
  const seed = await seedLarge({
    dbUrl,
    secretKey: SECRET_KEY,
    repo: false,
    counts: { users: 1000, projects: PROJECTS, issues: ISSUES + OTHER_ISSUES, bigIssues: ISSUES, mergeRequests: 2000, builds: 100 },
  });
  log(`seeded in ${Date.now() - t0} ms: ${JSON.stringify(seed.counts)}`);
  const ENDPOINTS = endpoints(seed.bigProjectId);
  if (ENDPOINTS.length === 0) throw new Error(`BENCH_ONLY=${process.env.BENCH_ONLY} matches no route`);

  const bare = await startBare('lists-bare-server.js', { DATABASE_URL: dbUrl, SECRET_KEY, EXTERNAL_URL, DB_POOL_SIZE: String(POOL_SIZE) });

  const token = seed.viewerToken;
  await checkSameResponses(app.base, bare.base, ENDPOINTS, token);

  await runAndReport({
    app,
    bare,
    endpoints: ENDPOINTS,
    token,
    dbUrl,
    title:
      `Hot list reads — ${PROJECTS} projects (viewer member of ${PROJECTS / 10}), ${ISSUES} issues in the listed project ` +
      `(${OTHER_ISSUES} in the others), 2000 merge requests; ` +
      `${CONNECTIONS} connections, ${DURATION} s per run (after ${WARMUP} s warm-up), pool ${POOL_SIZE}, node ${process.version}, ` +
      `${os.cpus().length} CPUs`,
    file: 'lists-latest.json',
    extra: { seeded: seed.counts, db_pool_size: POOL_SIZE },
  });
}

h.run(main);
