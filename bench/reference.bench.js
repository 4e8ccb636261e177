'use strict';
/**
 * GitLab's reference load (issue 27): the GitLab Performance Tool's method (GPT: k6 scripts, each
 * endpoint alone at a constant arrival rate, judged by TTFB p90 and success rate) translated to v3.
 *
 *   npm run bench:reference          (builds first)
 *
 * Data: the large set of `seed:large` (bench/seed-large.js: 50,000 users, 10,000 projects, 200,000
 * issues, 2,000 merge requests, 20,000 builds in 5,000 pipelines) and its project `seed-group/big`
 * made GPT-like: the repository of 100,000 commits over 50,000 files gets, in the same fast-import
 * stream, a branch per merge request (`feature-<iid>`; every 100th is large: 100 commits over 1,000
 * files), a long-lived branch `long-lived` REF_FAR_BEHIND (1,000) commits behind master with
 * REF_FAR_AHEAD (200) commits of its own, and 50 annotated tags; 50 runners are registered to it.
 * Seeded once into database REF_DB (ref_large) and REF_CACHE/pg-data (/work/.cache-ref), and reused
 * while REF_CACHE/pg-state.json matches the seed's parameters (REF_RESEED=1 forces a new seed). The
 * embedded default's copy (REF_CACHE/embedded-data, PGlite) is seeded the same way, through the
 * embedded database's own socket, with the repository copied.
 *
 * Parts (REF_PARTS, comma list; default all): `endpoints` (each API endpoint alone at REF_RATE,
 * 200/s, for REF_DURATION, 60 s), `git` (pull at REF_PULL_RATE 20/s, push at REF_PUSH_RATE 4/s, each
 * alone), `mix` (everything at once for REF_MIX_DURATION, 300 s: REF_RATE spread over the API
 * endpoints, the pulls, the pushes, and REF_RUNNERS (50) runners polling every REF_RUNNER_INTERVAL
 * (3 s, the runner's default check_interval)), `capacity` (each endpoint stepped up in REF_STEP (5 s)
 * steps until its p90 TTFB exceeds 100 ms), `embedded` (the 1,000-user load: the endpoints at 20/s,
 * pulls 2/s, pushes 1/s, then mixed, on the embedded default (no DATABASE_URL) with its peak RSS).
 * REF_ONLY=<substring> keeps only the endpoints whose name contains it. REF_PARTS=seed only seeds (and
 * checks that every endpoint answers); REF_PARTS=embedded,seed also seeds the embedded default's copy.
 * REF_PULL_BODY=gpt sends GPT's exact upload-pack body (see makeGit: a negotiation round without a pack).
 * REF_APP_ROOT: the folder whose dist/main.js is measured (default this tree; e.g. a `git archive` of a
 * commit, built, so that the figures belong to that commit while others edit this tree).
 *
 * Open model: bench/open-load.js fires each request when it is due, whatever the earlier ones do;
 * TTFB is timed from when the request was due; at most 2 s of arrivals (≥ 50) are outstanding per
 * stream, later ones are dropped and count as failures (k6's maxVUs). Verdict: pass when p90 TTFB ≤ 100 ms, success ≥
 * 99.9 % and the achieved rate ≥ 95 % of the target. CPU per request: the app process's own (utime +
 * stime from /proc/<pid>/stat), its git children's (cutime + cstime: reaped children, plus the live ones: the spawn broker with the git processes it reaped, the cat-file processes), and
 * PostgreSQL's (the summed CPU of the backends connected to the bench database, from /proc, found
 * through pg_stat_activity every second; pg_stat_statements is not installed here). On the embedded
 * default PostgreSQL runs inside the app's process, so its CPU is in the app's.
 *
 * Writes bench/results/reference-latest.md and reference-latest.json (REF_OUT names them otherwise).
 */
const { createHash } = require('node:crypto');
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const zlib = require('node:zlib');
const { performance } = require('node:perf_hooks');
const { Client } = require('pg');

const { createHarness, cpuMs, rssMb, treeRssMb, childPids, CLK_TCK } = require('./harness');
const { request, runOpen } = require('./open-load');
const { seedLarge, repositoryPath, buildRepository, sizes } = require('./seed-large');

const ROOT = path.resolve(__dirname, '..');
// the build measured: this tree's dist/, or REF_APP_ROOT's (e.g. a clean `git archive` of a commit, built)
const APP_ROOT = path.resolve(process.env.REF_APP_ROOT || ROOT);
const RESULTS_DIR = path.join(__dirname, 'results');
const env = process.env;
const num = (v, d) => (v === undefined || v === '' ? d : Number(v));
const CACHE = env.REF_CACHE || '/work/.cache-ref';
const PG_URL = (env.BENCH_PG_URL || 'postgres://postgres@127.0.0.1:5432').replace(/\/+$/, '');
const DB_NAME = env.REF_DB || 'ref_large';
const DURATION = num(env.REF_DURATION, 60);
const MIX_DURATION = num(env.REF_MIX_DURATION, 300);
const STEP = num(env.REF_STEP, 5);
const RATE = num(env.REF_RATE, 200);
const PULL_RATE = num(env.REF_PULL_RATE, 20);
const PUSH_RATE = num(env.REF_PUSH_RATE, 4);
const RUNNERS = num(env.REF_RUNNERS, 50);
const RUNNER_INTERVAL = num(env.REF_RUNNER_INTERVAL, 3);
const SMALL = { rate: 20, pull: 2, push: 1, runners: Math.max(1, Math.round(RUNNERS / 10)) }; // GitLab's 1,000-user reference
const FAR_BEHIND = num(env.REF_FAR_BEHIND, 1000);
const FAR_AHEAD = num(env.REF_FAR_AHEAD, 200);
const SCALE = num(env.SEED_SCALE, 1);
const EMBEDDED_SCALE = num(env.REF_EMBEDDED_SCALE, SCALE);
const PARTS = new Set(
  (env.REF_PARTS || 'endpoints,git,mix,capacity,embedded')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean),
);
const P90_AIM_MS = 100;
const SUCCESS_AIM = 0.999;
const SECRET_KEY = 'reference-bench-secret-key-0123456789abcdef0123456789';
const ROOT_PASSWORD = 'reference-bench-root-password';
const EXTERNAL_URL = 'http://gitlab.reference.example';
const SEED_VERSION = 2;
const OUT = env.REF_OUT || 'reference-latest'; // bench/results/<OUT>.md and .json
const GPT_PULL_BODY = env.REF_PULL_BODY === 'gpt'; // GPT's exact upload-pack body (negotiation only, no pack)
const LARGE_MR_EVERY = 100;

const h = createHarness('reference');
const { log, sleep } = h;
const round = (x, d = 1) => (Number.isFinite(x) ? Math.round(x * 10 ** d) / 10 ** d : x);

// ---------------------------------------------------------------------------------------------
// The GPT-like repository: the seed's 100,000 commits plus branches, a far branch and tags.

const fileIndex = (c, k, files) => (c * 7919 + k * 104729) % files;

/** Appended to seed-large's fast-import stream: merge request branches, the long-lived branch, tags. */
function gptRepositoryExtension(commits, files, mergeRequests) {
  return async (write, { data, fileName, t0 }) => {
    let mark = commits;
    const commit = async (branch, from, time, message, changed) => {
      mark++;
      let s = `commit refs/heads/${branch}\nmark :${mark}\ncommitter Seed <seed@example.com> ${time} +0000\n${data(message)}from :${from}\n`;
      for (const [f, content] of changed) s += `M 100644 inline ${fileName(f)}\n${data(content)}`;
      await write(s + '\n');
      return mark;
    };
    // far from master: forked FAR_BEHIND commits before master's tip, with commits of its own
    let tip = Math.max(1, commits - FAR_BEHIND);
    for (let k = 1; k <= FAR_AHEAD; k++) {
      const f = fileIndex(k, 1, files);
      tip = await commit('long-lived', tip, t0 + (commits - FAR_BEHIND) * 60 + k * 30, `Long-lived change ${k}`, [[f, `file ${f}\nlong-lived ${k}\n`]]);
    }
    // a branch per merge request, forked from master at different depths; every 100th is large
    for (let g = 1; g <= mergeRequests; g++) {
      const large = g % LARGE_MR_EVERY === 0;
      let from = Math.max(1, commits - ((g * 37) % 5000));
      const n = large ? 100 : 1 + (g % 3);
      for (let k = 1; k <= n; k++) {
        const changed = [];
        for (let j = 0; j < (large ? 10 : 1 + (k % 2)); j++) {
          const f = large ? (g * 13 + (k - 1) * 10 + j) % files : fileIndex(g, k * 3 + j, files);
          changed.push([f, `file ${f}\nmerge request ${g} change ${k}\n`]);
        }
        from = await commit(`feature-${g}`, from, t0 + commits * 60 + g * 600 + k, `Merge request ${g}, change ${k}`, changed);
      }
    }
    for (let k = 1; k <= 50; k++) {
      await write(
        `tag v${k}.0.0\nfrom :${Math.max(1, Math.round((commits * k) / 50))}\ntagger Seed <seed@example.com> ${t0 + k * 86400} +0000\n${data(`Release ${k}.0.0`)}`,
      );
    }
  };
}

// ---------------------------------------------------------------------------------------------
// Servers and seeding (idempotent: reused while the state file matches).

async function admin(fn) {
  const c = new Client({ connectionString: `${PG_URL}/postgres` });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

async function startApp(name, dataDir, extraEnv) {
  const t0 = Date.now();
  const env = { DATA_DIR: dataDir, SECRET_KEY, ROOT_PASSWORD, EXTERNAL_URL, NODE_ENV: 'production', ...extraEnv };
  const { child, base } = await h.startApp(name, [path.join(APP_ROOT, 'dist/main.js')], env, { timeoutMs: 300_000 });
  log(`${name} ready on ${base} (pid ${child.pid}) in ${Date.now() - t0} ms`);
  return { name, child, base, url: new URL(base), readyMs: Date.now() - t0 };
}

async function stopApp(app) {
  app.child.stopping = true;
  if (app.child.exitCode !== null || app.child.signalCode !== null) return;
  const exited = new Promise((r) => app.child.once('exit', r));
  app.child.kill('SIGTERM');
  const t = setTimeout(() => app.child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(t);
}

async function api(app, method, p, token, body) {
  const r = await fetch(`${app.base}${p}`, {
    method,
    headers: { 'Content-Type': 'application/json', ...(token ? { 'PRIVATE-TOKEN': token } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  let parsed;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = text;
  }
  return { status: r.status, body: parsed };
}

function seedKey(scale) {
  const s = sizes(scale);
  return JSON.stringify({ v: SEED_VERSION, scale, ...s, farBehind: FAR_BEHIND, farAhead: FAR_AHEAD, largeMrEvery: LARGE_MR_EVERY, runners: RUNNERS });
}

function readState(file) {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
}

/** The repository and the runners, once the rows are in (`seeded` is seedLarge's answer). */
async function finishSeed(app, seeded, dataDir, scale, repoFrom) {
  const s = sizes(scale);
  const dir = repositoryPath(dataDir, seeded.bigProjectId);
  const t0 = Date.now();
  fs.rmSync(dir, { recursive: true, force: true });
  if (repoFrom) {
    fs.mkdirSync(path.dirname(dir), { recursive: true });
    execFileSync('cp', ['-a', repoFrom, dir]);
    log(`repository copied from ${repoFrom} in ${Date.now() - t0} ms`);
  } else {
    await buildRepository(dir, s.commits, s.files, gptRepositoryExtension(s.commits, s.files, s.mergeRequests));
    // the state the server's own housekeeping leaves a repository in after a push (GitService.housekeeping):
    // a commit-graph with changed-path filters, without which each path-limited walk (a file's last commit)
    // reads most of the 100,000 commits
    execFileSync('git', ['--git-dir', dir, 'commit-graph', 'write', '--reachable', '--changed-paths'], { env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1' } });
    log(`repository of ${s.commits} commits + merge request branches, long-lived branch and tags written in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  }
  const project = await api(app, 'GET', `/api/v3/projects/${seeded.bigProjectId}`, seeded.ownerToken);
  if (project.status !== 200 || !project.body.runners_token)
    throw new Error(`project ${seeded.bigProjectId}: ${project.status} ${JSON.stringify(project.body).slice(0, 200)}`);
  const runnerTokens = [];
  for (let i = 0; i < RUNNERS; i++) {
    const r = await api(app, 'POST', '/ci/api/v1/runners/register', undefined, { token: project.body.runners_token, description: `reference runner ${i + 1}` });
    if (r.status !== 201) throw new Error(`runner registration: ${r.status} ${JSON.stringify(r.body)}`);
    runnerTokens.push(r.body.token);
  }
  return { runnerTokens, repoPath: dir };
}

/** PostgreSQL mode: database REF_DB and REF_CACHE/pg-data, seeded when missing or stale. */
async function preparePg() {
  const dataDir = path.join(CACHE, 'pg-data');
  const stateFile = path.join(CACHE, 'pg-state.json');
  const key = seedKey(SCALE);
  const state = readState(stateFile);
  const dbExists = await admin(async (c) => (await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [DB_NAME])).rowCount > 0);
  const dbUrl = `${PG_URL}/${DB_NAME}`;
  if (state && state.key === key && dbExists && fs.existsSync(state.repoPath) && env.REF_RESEED !== '1') {
    log(`reusing the seeded data set (database ${DB_NAME}, ${dataDir}; seeded ${state.seededAt} in ${state.seedSeconds} s)`);
    return { ...state, dataDir, dbUrl };
  }
  log(`seeding the large data set into database ${DB_NAME} and ${dataDir} (scale ${SCALE})`);
  const t0 = Date.now();
  fs.rmSync(stateFile, { force: true });
  await admin(async (c) => {
    await c.query(`DROP DATABASE IF EXISTS "${DB_NAME}" WITH (FORCE)`);
    await c.query(`CREATE DATABASE "${DB_NAME}"`);
  });
  fs.rmSync(dataDir, { recursive: true, force: true });
  fs.mkdirSync(dataDir, { recursive: true });
  const app = await startApp('app (seeding)', dataDir, { DATABASE_URL: dbUrl });
  try {
    const seeded = await seedLarge({ dbUrl, secretKey: SECRET_KEY, scale: SCALE, repo: false, log: (m) => log(`seed: ${m}`) });
    const out = saveSeedState(stateFile, key, t0, seeded, await finishSeed(app, seeded, dataDir, SCALE));
    log(`seeded in ${out.seedSeconds} s`);
    return { ...out, dataDir, dbUrl };
  } finally {
    await stopApp(app);
  }
}

/** Writes what a finished seed left (its key, when and how long, the ids and tokens the runs need) to `stateFile`. */
function saveSeedState(stateFile, key, t0, seeded, rest) {
  const out = {
    key,
    seededAt: new Date().toISOString(),
    seedSeconds: Math.round((Date.now() - t0) / 1000),
    counts: seeded.counts,
    bigProjectId: seeded.bigProjectId,
    viewerToken: seeded.viewerToken,
    ownerToken: seeded.ownerToken,
    ...rest,
  };
  fs.writeFileSync(stateFile, JSON.stringify(out, null, 2));
  return out;
}

/** The embedded default: REF_CACHE/embedded-data, its PGlite seeded through its own socket. */
async function prepareEmbedded(pg) {
  const dataDir = path.join(CACHE, 'embedded-data');
  const stateFile = path.join(CACHE, 'embedded-state.json');
  const key = seedKey(EMBEDDED_SCALE) + (EMBEDDED_SCALE === SCALE ? pg.key : '');
  const state = readState(stateFile);
  if (state && state.key === key && fs.existsSync(state.repoPath) && env.REF_RESEED !== '1') {
    log(`reusing the seeded embedded data folder ${dataDir} (seeded ${state.seededAt} in ${state.seedSeconds} s)`);
    return { ...state, dataDir };
  }
  log(`seeding the embedded default's data folder ${dataDir} (scale ${EMBEDDED_SCALE})`);
  const t0 = Date.now();
  fs.rmSync(stateFile, { force: true });
  fs.rmSync(dataDir, { recursive: true, force: true });
  fs.mkdirSync(dataDir, { recursive: true });
  // the app creates the database from the build's template and migrates it; then the bench opens it
  let app = await startApp('embedded (migrating)', dataDir, { DATABASE_URL: '' });
  await stopApp(app);
  const { EmbeddedPostgres } = require(path.join(APP_ROOT, 'dist/database/embedded-postgres.js'));
  const db = await EmbeddedPostgres.start(path.join(dataDir, 'db'));
  let seeded;
  try {
    const o = db.connectionOptions;
    const dbUrl = `postgres://${o.username}@localhost/${o.database}?host=${encodeURIComponent(o.host)}&port=${o.port}`;
    seeded = await seedLarge({ dbUrl, secretKey: SECRET_KEY, scale: EMBEDDED_SCALE, repo: false, log: (m) => log(`embedded seed: ${m}`) });
  } finally {
    await db.stop();
  }
  app = await startApp('embedded (seeding)', dataDir, { DATABASE_URL: '' });
  try {
    const rest = await finishSeed(app, seeded, dataDir, EMBEDDED_SCALE, EMBEDDED_SCALE === SCALE ? pg.repoPath : undefined);
    const out = saveSeedState(stateFile, key, t0, seeded, rest);
    log(`embedded data folder seeded in ${out.seedSeconds} s`);
    return { ...out, dataDir };
  } finally {
    await stopApp(app);
  }
}

// ---------------------------------------------------------------------------------------------
// What is requested.

/** The endpoint families GPT tests that v3 has, with the ids they need read from the running app. */
async function discover(app, seed) {
  const id = seed.bigProjectId;
  const tok = seed.viewerToken;
  const one = async (p) => {
    const r = await api(app, 'GET', p, tok);
    if (r.status !== 200) throw new Error(`GET ${p}: ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
    return r.body;
  };
  const s = sizes(app.scale);
  const largeIid = Math.min(s.mergeRequests, LARGE_MR_EVERY) === LARGE_MR_EVERY ? LARGE_MR_EVERY : 1;
  const [mr] = await one(`/api/v3/projects/${id}/merge_requests?iid=${largeIid}`);
  const [issue] = await one(`/api/v3/projects/${id}/issues?iid=${Math.ceil(s.bigIssues / 2)}`);
  const [tip] = await one(`/api/v3/projects/${id}/repository/commits?per_page=1`);
  const root = await one(`/api/v3/projects/${id}/repository/tree`);
  const src = root.find((e) => e.name === 'src');
  if (!mr || !issue || !tip || !src) throw new Error('the seeded project lacks a merge request, an issue, a commit or its src folder');
  const f = Math.min(1234, s.files - 1);
  const file = `src/d${Math.floor(f / 500)}/m${Math.floor(f / 50) % 10}/file${f}.txt`;
  const folder = path.posix.dirname(file);
  const P = `/api/v3/projects/${id}`;
  const endpoints = [
    ['GET /projects', '/api/v3/projects'],
    ['GET /projects/:id', `/api/v3/projects/${encodeURIComponent('seed-group/big')}`],
    ['GET /projects/:id/issues', `${P}/issues`],
    ['GET /projects/:id/issues/:issue_id', `${P}/issues/${issue.id}`],
    ['GET /projects/:id/merge_requests', `${P}/merge_requests`],
    [`GET /projects/:id/merge_requests/:id (large, ${LARGE_MR_EVERY} commits)`, `${P}/merge_requests/${mr.id}`],
    ['GET /projects/:id/merge_requests/:id/changes (large)', `${P}/merge_requests/${mr.id}/changes`],
    ['GET /projects/:id/merge_requests/:id/commits (large)', `${P}/merge_requests/${mr.id}/commits`],
    ['GET /projects/:id/repository/tree (50 entries)', `${P}/repository/tree?path=${encodeURIComponent(folder)}`],
    ['GET /projects/:id/repository/files', `${P}/repository/files?file_path=${encodeURIComponent(file)}&ref=master`],
    ['GET /projects/:id/repository/blobs/:sha (raw file)', `${P}/repository/blobs/master?filepath=${encodeURIComponent(file)}`],
    ['GET /projects/:id/repository/commits', `${P}/repository/commits`],
    ['GET /projects/:id/repository/commits/:sha', `${P}/repository/commits/${tip.id}`],
    ['GET /projects/:id/repository/commits/:sha/diff', `${P}/repository/commits/${tip.id}/diff`],
    [`GET /projects/:id/repository/compare (long-lived…master)`, `${P}/repository/compare?from=long-lived&to=master`],
    // GPT's v4 calls get v4's default page of 20; v3 answers the whole list unless per_page is given (GitLab 8)
    ['GET /projects/:id/repository/branches (page of 20 of 2,002)', `${P}/repository/branches?per_page=20`],
    ['GET /projects/:id/repository/branches/:branch', `${P}/repository/branches/master`],
    ['GET /projects/:id/repository/tags (page of 20)', `${P}/repository/tags?per_page=20`],
    ['GET /users', '/api/v3/users'],
    ['GET /user', '/api/v3/user'],
    ['GET /projects/search/:query', '/api/v3/projects/search/proj-12'],
  ]
    .map(([name, p]) => ({ name, path: p }))
    .filter((e) => !env.REF_ONLY || e.name.includes(env.REF_ONLY));
  for (const e of endpoints) await one(e.path); // each answers 200 before it is measured
  return { endpoints, srcTree: src.id, project: 'seed-group/big' };
}

// ---------------------------------------------------------------------------------------------
// Git over HTTP as GPT does it.

const basic = (user, token) => `Basic ${Buffer.from(`${user}:${token}`).toString('base64')}`;
const pkt = (s) => {
  const b = Buffer.isBuffer(s) ? s : Buffer.from(s);
  return Buffer.concat([Buffer.from((b.length + 4).toString(16).padStart(4, '0')), b]);
};

/** The advertised refs of `GET info/refs?service=…` ({ name: sha }). */
function parseRefs(body) {
  const refs = {};
  for (const m of body.toString('latin1').matchAll(/([0-9a-f]{40}) ([^\0\n]+)/g)) refs[m[2]] = m[1];
  return refs;
}

function gitObject(type, data) {
  const sha = createHash('sha1').update(`${type} ${data.length}\0`).update(data).digest();
  return { type, data, sha };
}

/** A version 2 pack of `objects` (commit, tree, blob), undeltified. */
function pack(objects) {
  const types = { commit: 1, tree: 2, blob: 3 };
  const head = Buffer.alloc(12);
  head.write('PACK', 0);
  head.writeUInt32BE(2, 4);
  head.writeUInt32BE(objects.length, 8);
  const parts = [head];
  for (const o of objects) {
    let size = o.data.length;
    const bytes = [];
    let c = (types[o.type] << 4) | (size & 15);
    size = Math.floor(size / 16);
    while (size > 0) {
      bytes.push(c | 0x80);
      c = size & 0x7f;
      size = Math.floor(size / 128);
    }
    bytes.push(c);
    parts.push(Buffer.from(bytes), zlib.deflateSync(o.data));
  }
  const body = Buffer.concat(parts);
  return Buffer.concat([body, createHash('sha1').update(body).digest()]);
}

function makeGit(app, seed, srcTree, project) {
  const viewerAuth = basic('seed_viewer', seed.viewerToken);
  const ownerAuth = basic('seed_owner', seed.ownerToken);
  const repo = `/${project}.git`;
  const refsOf = async (agent, service, auth) => {
    const r = await request(agent, app.url, {
      path: `${repo}/info/refs?service=${service}`,
      headers: { authorization: auth, 'accept-encoding': 'deflate, gzip', pragma: 'no-cache' },
      collect: true,
    });
    if (r.status !== 200) throw new Error(`info/refs ${service}: ${r.status}`);
    return parseRefs(r.body);
  };
  let pullBody;
  let pushSeq = 0;
  const clients = []; // { branch, tip, busy }
  let masterTip;
  return {
    async prepare(agent) {
      const refs = await refsOf(agent, 'git-upload-pack', viewerAuth);
      masterTip = refs['refs/heads/master'];
      const far = refs['refs/heads/long-lived'];
      if (!masterTip || !far) throw new Error('master or long-lived missing from the advertised refs');
      // want the default branch's tip, have the far branch's. GPT's body puts a flush between the
      // `have` and the `done`: in the stateless protocol of smart HTTP the flush ends the request's
      // round, so upload-pack answers ACK/NAK and no pack (GPT counts the 200). A client's last round
      // is `want… 0000 have… done`, answered with the pack: that is the default here.
      pullBody = GPT_PULL_BODY
        ? `0054want ${masterTip} multi_ack side-band-64k ofs-delta\n00000032have ${far}\n00000009done\n`
        : `0054want ${masterTip} multi_ack side-band-64k ofs-delta\n00000032have ${far}\n0009done\n`;
      const pushRefs = await refsOf(agent, 'git-receive-pack', ownerAuth);
      clients.length = 0;
      for (const [name, sha] of Object.entries(pushRefs)) {
        const m = /^refs\/heads\/(ref-push-\d+)$/.exec(name);
        if (m) clients.push({ branch: m[1], tip: sha, busy: false });
      }
    },
    /** One pull: the refs, then the pack of master's tip over the far branch's. */
    async pull(agent, dueAt) {
      const a = await request(agent, app.url, {
        path: `${repo}/info/refs?service=git-upload-pack`,
        headers: { authorization: viewerAuth, 'accept-encoding': 'deflate, gzip', pragma: 'no-cache' },
        since: dueAt,
      });
      if (a.status !== 200) return { ok: false, ttfbs: [a.ttfbMs], error: `info/refs ${a.status || a.error}` };
      const b = await request(agent, app.url, {
        method: 'POST',
        path: `${repo}/git-upload-pack`,
        headers: { authorization: viewerAuth, 'content-type': 'application/x-git-upload-pack-request', accept: 'application/x-git-upload-pack-result' },
        body: pullBody,
        collect: true,
      });
      const ok = b.status === 200 && (GPT_PULL_BODY ? /ACK|NAK/.test(b.body.subarray(0, 200).toString('latin1')) : b.body.includes('PACK'));
      const head = b.body
        ? b.body
            .subarray(0, 60)
            .toString('latin1')
            .replace(/[^\x20-\x7e]/g, '.')
        : '';
      return { ok, ttfbs: [a.ttfbMs, b.ttfbMs], error: ok ? undefined : `upload-pack ${b.status || b.error} ${head}` };
    },
    /** One small push: a new commit (one new file) on a branch of its own client. */
    async push(agent, dueAt) {
      let client = clients.find((c) => !c.busy);
      if (!client) {
        client = { branch: `ref-push-${clients.length + 1}`, tip: null, busy: false };
        clients.push(client);
      }
      client.busy = true;
      try {
        const a = await request(agent, app.url, {
          path: `${repo}/info/refs?service=git-receive-pack`,
          headers: { authorization: ownerAuth, pragma: 'no-cache' },
          since: dueAt,
          collect: true,
        });
        if (a.status !== 200) return { ok: false, ttfbs: [a.ttfbMs], error: `info/refs ${a.status || a.error}` };
        // as a client does, the branch's old value is the advertised one (an earlier push that timed out may have landed)
        client.tip = parseRefs(a.body)[`refs/heads/${client.branch}`] || null;
        const n = ++pushSeq;
        const now = Math.floor(Date.now() / 1000);
        const blob = gitObject('blob', Buffer.from(`push ${n} of ${client.branch} at ${Date.now()}\n`));
        const tree = gitObject(
          'tree',
          Buffer.concat([Buffer.from(`100644 ${client.branch}.txt\0`), blob.sha, Buffer.from('40000 src\0'), Buffer.from(srcTree, 'hex')]),
        );
        const parent = client.tip || masterTip;
        const commit = gitObject(
          'commit',
          Buffer.from(
            `tree ${tree.sha.toString('hex')}\nparent ${parent}\nauthor Reference Bench <ref@example.com> ${now} +0000\ncommitter Reference Bench <ref@example.com> ${now} +0000\n\nPush ${n}\n`,
          ),
        );
        const sha = commit.sha.toString('hex');
        const old = client.tip || '0'.repeat(40);
        const body = Buffer.concat([
          pkt(`${old} ${sha} refs/heads/${client.branch}\0report-status agent=reference-bench\n`),
          Buffer.from('0000'),
          pack([commit, tree, blob]),
        ]);
        const b = await request(agent, app.url, {
          method: 'POST',
          path: `${repo}/git-receive-pack`,
          headers: { authorization: ownerAuth, 'content-type': 'application/x-git-receive-pack-request', accept: 'application/x-git-receive-pack-result' },
          body,
          collect: true,
        });
        const text = b.body ? b.body.toString('latin1') : '';
        const ok = b.status === 200 && text.includes('unpack ok') && text.includes(`ok refs/heads/${client.branch}`);
        if (ok) client.tip = sha;
        return {
          ok,
          ttfbs: [a.ttfbMs, b.ttfbMs],
          error: ok ? undefined : `receive-pack ${b.status || b.error} ${text.slice(0, 80).replace(/[^\x20-\x7e]/g, '.')}`,
        };
      } finally {
        client.busy = false;
      }
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Measuring.

function childrenCpuMs(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(f[13]) + Number(f[14])) * 1000) / CLK_TCK;
  } catch {
    return 0;
  }
}

function machineBusyMs() {
  const f = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  return ((f[0] + f[1] + f[2] + f[5] + f[6] + (f[7] || 0)) * 1000) / CLK_TCK;
}

/** CPU of the app, its git children, its PostgreSQL backends (PostgreSQL mode), the load generator and the rest; peak RSS. */
async function monitor(app, dbUrl) {
  let pg;
  if (dbUrl) {
    pg = new Client({ connectionString: dbUrl });
    pg.on('error', () => undefined);
    await pg.connect();
  }
  const backends = new Map(); // pid -> { first, last }
  const samplePg = async () => {
    if (!pg) return;
    const { rows } = await pg.query('SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()');
    for (const { pid } of rows) {
      const ms = cpuMs(pid);
      if (!ms) continue;
      const e = backends.get(pid);
      if (e) e.last = ms;
      else backends.set(pid, { first: ms, last: ms });
    }
  };
  await samplePg();
  const pid = app.child.pid;
  // live children of the app (the spawn broker, with the git processes it started and reaped, and
  // the long-lived cat-file processes): their CPU is not in the app's cutime until they exit
  const kids = new Map(); // pid -> { first, last }
  const sampleKids = () => {
    for (const k of childPids(pid)) {
      const ms = cpuMs(k) + childrenCpuMs(k);
      const e = kids.get(k);
      if (e) e.last = ms;
      else kids.set(k, { first: ms, last: ms });
    }
  };
  sampleKids();
  const start = { app: cpuMs(pid), git: childrenCpuMs(pid), self: process.cpuUsage(), machine: machineBusyMs(), t: performance.now() };
  let peakOwn = rssMb(pid);
  let peakTree = treeRssMb(pid);
  let ticks = 0;
  const timer = setInterval(() => {
    peakOwn = Math.max(peakOwn, rssMb(pid));
    peakTree = Math.max(peakTree, treeRssMb(pid));
    if (++ticks % 5 === 0) {
      samplePg().catch(() => undefined);
      sampleKids();
    }
  }, 200);
  return {
    async stop(requests) {
      clearInterval(timer);
      await samplePg().catch(() => undefined);
      if (pg) await pg.end().catch(() => undefined);
      const wallMs = performance.now() - start.t;
      const appMs = cpuMs(pid) - start.app;
      sampleKids();
      const gitMs = childrenCpuMs(pid) - start.git + [...kids.values()].reduce((a, e) => a + e.last - e.first, 0);
      const pgMs = [...backends.values()].reduce((a, e) => a + e.last - e.first, 0);
      const self = process.cpuUsage(start.self);
      const selfMs = (self.user + self.system) / 1000;
      const otherMs = machineBusyMs() - start.machine - appMs - gitMs - pgMs - selfMs;
      const per = (ms) => (requests ? round(ms / requests, 2) : undefined);
      const pct = (ms) => round((ms / wallMs) * 100, 0);
      return {
        app_cpu_ms_per_req: per(appMs),
        git_cpu_ms_per_req: per(gitMs),
        pg_cpu_ms_per_req: dbUrl ? per(pgMs) : undefined,
        app_cpu_pct: pct(appMs),
        git_cpu_pct: pct(gitMs),
        pg_cpu_pct: dbUrl ? pct(pgMs) : undefined,
        loadgen_cpu_pct: pct(selfMs),
        other_cpu_pct: Math.max(0, pct(otherMs)),
        peak_rss_mb: round(peakOwn, 0),
        peak_tree_rss_mb: round(peakTree, 0),
      };
    },
  };
}

function newAgent() {
  // no agent `timeout`: it also cut requests in flight at that time (each request has its own 60 s limit)
  return new http.Agent({ keepAlive: true, maxSockets: Infinity, maxFreeSockets: 256 });
}

/** A stream of iterations: an API GET, a pull, a push or a runner's poll. */
function apiStream(app, ep, token) {
  return {
    name: ep.name,
    iteration: (agent) => async (dueAt) => {
      const r = await request(agent, app.url, { path: ep.path, headers: { 'PRIVATE-TOKEN': token, accept: 'application/json' }, since: dueAt });
      const ok = r.status === 200 || r.status === 201;
      return { ok, ttfbs: [r.ttfbMs], error: ok ? undefined : `${r.status || r.error}` };
    },
  };
}

function pollStream(app, tokens) {
  let i = 0;
  return {
    name: `POST /ci/api/v1/builds/register.json (${tokens.length} runners)`,
    iteration: (agent) => async (dueAt) => {
      const token = tokens[i++ % tokens.length];
      const body = JSON.stringify({
        token,
        info: { name: 'gitlab-ci-multi-runner', version: '1.11.5', revision: 'reference', platform: 'linux', architecture: 'amd64' },
      });
      const r = await request(agent, app.url, {
        method: 'POST',
        path: '/ci/api/v1/builds/register.json',
        headers: { 'content-type': 'application/json' },
        body,
        collect: true,
        since: dueAt,
      });
      // 404 {} is "no build for you" (the queue is empty: every seeded build has finished)
      const ok = r.status === 201 || (r.status === 404 && r.body.toString() === '{}');
      return { ok, ttfbs: [r.ttfbMs], error: ok ? undefined : `${r.status || r.error} ${r.body ? r.body.toString().slice(0, 80) : ''}` };
    },
  };
}

function verdict(r) {
  const reasons = [];
  if (!(r.ttfb_p90_ms <= P90_AIM_MS)) reasons.push(`p90 > ${P90_AIM_MS} ms`);
  if (!(r.success_rate >= SUCCESS_AIM)) reasons.push('success < 99.9 %');
  if (!(r.achieved_rate >= 0.95 * r.target_rate)) reasons.push('rate < 95 %');
  return reasons.length ? `fail (${reasons.join(', ')})` : 'pass';
}

/** Runs `streams` ({ name, rate, iteration(agent) }) at once for `seconds`; CPU over all of them. */
async function measure(app, dbUrl, streams, seconds) {
  const agent = newAgent();
  const mon = await monitor(app, dbUrl);
  try {
    // as k6's constant-arrival-rate with maxVUs: at most 2 s of arrivals (≥ 50) outstanding per stream, later ones dropped
    // (counted as failed), so an overloaded run ends with a bounded queue instead of minutes of backlog
    const graceS = Math.max(10, Math.min(15, seconds / 2));
    const runs = await Promise.all(
      streams.map((s) =>
        runOpen({ rate: s.rate, durationS: seconds, iteration: s.iteration(agent), graceS, maxInFlight: Math.max(50, Math.ceil(2 * s.rate)) }),
      ),
    );
    const requests = runs.reduce((a, r) => a + r.requests, 0);
    const cpu = await mon.stop(requests);
    if (app.child.exitCode !== null) throw new Error(`${app.name} died:\n${app.child.tail()}`);
    return { runs: runs.map((r, i) => ({ name: streams[i].name, ...r, verdict: verdict(r) })), cpu, requests };
  } finally {
    agent.destroy();
    await settle(app);
  }
}

/**
 * Waits until the app answers promptly again (three probes in a row under 100 ms, at most 120 s), so
 * that requests still queued from an overloaded run do not count against the next one.
 */
async function settle(app) {
  const agent = newAgent();
  const t0 = Date.now();
  let fast = 0;
  try {
    while (fast < 3 && Date.now() - t0 < 120_000) {
      const r = await request(agent, app.url, { path: '/-/readiness', timeoutMs: 120_000 });
      fast = r.status === 200 && r.ttfbMs < 100 ? fast + 1 : 0;
      await sleep(200);
    }
  } finally {
    agent.destroy();
  }
  if (Date.now() - t0 > 2000) log(`  (the app took ${round((Date.now() - t0) / 1000)} s to settle after the run)`);
}

function describe(name, r, cpu) {
  const errs = Object.keys(r.errors).length ? ` errors ${JSON.stringify(r.errors).slice(0, 200)}` : '';
  log(
    `${name}: target ${r.target_rate}/s achieved ${round(r.achieved_rate)}/s, TTFB p50 ${round(r.ttfb_p50_ms)} p90 ${round(r.ttfb_p90_ms)} p99 ${round(r.ttfb_p99_ms)} ms, ` +
      `success ${round(r.success_rate * 100, 2)} %${cpu ? `, CPU/req app ${cpu.app_cpu_ms_per_req} git ${cpu.git_cpu_ms_per_req} pg ${cpu.pg_cpu_ms_per_req ?? '-'} ms, loadgen ${cpu.loadgen_cpu_pct} %, other ${cpu.other_cpu_pct} %, RSS ${cpu.peak_rss_mb}/${cpu.peak_tree_rss_mb} MB` : ''}` +
      `${r.max_schedule_lag_ms > 50 ? `, schedule lag up to ${round(r.max_schedule_lag_ms)} ms` : ''}${errs} → ${verdict(r)}`,
  );
}

/** Each stream alone at its rate for `seconds`. */
async function alone(app, dbUrl, streams, seconds, rows = []) {
  for (const s of streams) {
    const m = await measure(app, dbUrl, [s], seconds);
    describe(s.name, m.runs[0], m.cpu);
    rows.push({ ...m.runs[0], ...m.cpu });
    savePartial();
    await sleep(1000);
  }
  return rows;
}

/** What has been measured so far, written after each run (bench/results/<OUT>.partial.json): a long run stopped early keeps its figures. */
const partial = {};
function savePartial() {
  fs.writeFileSync(path.join(RESULTS_DIR, `${OUT}.partial.json`), JSON.stringify(partial, null, 2) + '\n');
}

/** The highest rate of the ladder whose p90 TTFB ≤ 100 ms (with ≥ 99.9 % success and ≥ 95 % of the rate). */
async function capacity(app, dbUrl, stream, ladder) {
  let best = 0;
  let last;
  for (const rate of ladder) {
    const m = await measure(app, dbUrl, [{ ...stream, rate }], STEP);
    last = m.runs[0];
    log(
      `  capacity ${stream.name} @ ${rate}/s: p90 ${round(last.ttfb_p90_ms)} ms, success ${round(last.success_rate * 100, 2)} %, achieved ${round(last.achieved_rate)}/s → ${last.verdict}`,
    );
    await sleep(500);
    if (last.verdict !== 'pass') break;
    best = rate;
  }
  savePartial();
  return best;
}

// ---------------------------------------------------------------------------------------------
// The run of one server (PostgreSQL mode at the 10,000-user rates, or the embedded default at 1,000's).

async function runServer({ label, app, dbUrl, seed, rates, parts }) {
  app.scale = seed.scale;
  const { endpoints, srcTree, project } = await discover(app, seed);
  const git = makeGit(app, seed, srcTree, project);
  const prepAgent = newAgent();
  await git.prepare(prepAgent);
  prepAgent.destroy();
  const apiStreams = endpoints.map((ep) => apiStream(app, ep, seed.viewerToken));
  const pull = { name: 'git pull (info/refs + upload-pack: master over long-lived)', iteration: (agent) => (due) => git.pull(agent, due) };
  const push = { name: 'git push (info/refs + receive-pack: 1 commit, own branch)', iteration: (agent) => (due) => git.push(agent, due) };
  const runners = seed.runnerTokens.slice(0, rates.runners);
  const poll = pollStream(app, runners);
  const out = { label, alone: [], git: [], mix: undefined, capacity: {} };
  partial[label] = out;

  if (parts.has('endpoints')) {
    log(`${label}: each endpoint alone at ${rates.api}/s for ${DURATION} s`);
    await alone(
      app,
      dbUrl,
      apiStreams.map((s) => ({ ...s, rate: rates.api })),
      DURATION,
      out.alone,
    );
  }
  if (parts.has('git')) {
    log(`${label}: git pull at ${rates.pull}/s, git push at ${rates.push}/s, each alone for ${DURATION} s`);
    await alone(
      app,
      dbUrl,
      [
        { ...pull, rate: rates.pull },
        { ...push, rate: rates.push },
      ],
      DURATION,
      out.git,
    );
  }
  if (parts.has('mix')) {
    const per = rates.api / apiStreams.length;
    const runnerRate = runners.length / RUNNER_INTERVAL;
    log(
      `${label}: mixed for ${MIX_DURATION} s — ${rates.api} API req/s over ${apiStreams.length} endpoints (${round(per, 2)}/s each), ${rates.pull} pulls/s, ${rates.push} pushes/s, ${runners.length} runners polling every ${RUNNER_INTERVAL} s`,
    );
    const streams = [
      ...apiStreams.map((s) => ({ ...s, rate: per })),
      { ...pull, rate: rates.pull },
      { ...push, rate: rates.push },
      { ...poll, rate: runnerRate },
    ];
    const m = await measure(app, dbUrl, streams, MIX_DURATION);
    for (const r of m.runs) describe(`mix ${r.name}`, r);
    const apiRuns = m.runs.slice(0, apiStreams.length);
    const all = apiRuns.reduce((a, r) => ({ ok: a.ok + r.ok, n: a.n + r.iterations, rate: a.rate + r.achieved_rate, p90: Math.max(a.p90, r.ttfb_p90_ms) }), {
      ok: 0,
      n: 0,
      rate: 0,
      p90: 0,
    });
    out.mix = {
      duration_s: MIX_DURATION,
      runs: m.runs,
      cpu: m.cpu,
      api_total: { target_rate: rates.api, achieved_rate: all.rate, success_rate: all.ok / all.n, worst_p90_ms: all.p90 },
    };
    savePartial();
    log(
      `${label} mix: CPU/req app ${m.cpu.app_cpu_ms_per_req} git ${m.cpu.git_cpu_ms_per_req} pg ${m.cpu.pg_cpu_ms_per_req ?? '-'} ms; app ${m.cpu.app_cpu_pct} %, git ${m.cpu.git_cpu_pct} %, pg ${m.cpu.pg_cpu_pct ?? '-'} %, loadgen ${m.cpu.loadgen_cpu_pct} %, other ${m.cpu.other_cpu_pct} %; peak RSS ${m.cpu.peak_rss_mb} MB (tree ${m.cpu.peak_tree_rss_mb})`,
    );
  }
  if (parts.has('capacity')) {
    log(`${label}: capacity, ${STEP} s steps`);
    const ladder = [10, 25, 50, 100, 150, 200, 300, 400, 600, 800, 1200];
    for (const s of apiStreams) out.capacity[s.name] = await capacity(app, dbUrl, s, ladder);
    out.capacity[pull.name] = await capacity(app, dbUrl, pull, [1, 2, 5, 10, 20, 40, 80]);
    out.capacity[push.name] = await capacity(app, dbUrl, push, [1, 2, 4, 8, 16, 32]);
    // below the first step: try lower ones
    for (const s of apiStreams) if (out.capacity[s.name] === 0) out.capacity[s.name] = await capacity(app, dbUrl, s, [5, 2, 1].reverse());
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Tables.

const fmt = (x, d = 1) => (x === undefined || x === null || Number.isNaN(x) ? '—' : Number(x).toFixed(d));

function table(result, withCpu = true) {
  const lines = [
    `| endpoint | target /s | achieved /s | p50 ms | p90 ms | p99 ms | success % | app CPU ms/req | git CPU ms/req | PostgreSQL CPU ms/req | capacity /s (p90 ≤ ${P90_AIM_MS} ms) | verdict |`,
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|',
  ];
  for (const r of [...result.alone, ...result.git]) {
    const cap = result.capacity[r.name];
    lines.push(
      `| ${r.name} | ${r.target_rate} | ${fmt(r.achieved_rate)} | ${fmt(r.ttfb_p50_ms)} | ${fmt(r.ttfb_p90_ms)} | ${fmt(r.ttfb_p99_ms)} | ${fmt(r.success_rate * 100, 2)} | ` +
        `${withCpu ? fmt(r.app_cpu_ms_per_req, 2) : '—'} | ${withCpu ? fmt(r.git_cpu_ms_per_req, 2) : '—'} | ${fmt(r.pg_cpu_ms_per_req, 2)} | ${cap === undefined ? '—' : cap} | ${r.verdict} |`,
    );
  }
  return lines.join('\n');
}

function mixTable(mix) {
  const lines = [
    `| stream (mixed, ${mix.duration_s} s) | target /s | achieved /s | p50 ms | p90 ms | p99 ms | success % | verdict |`,
    '|---|---:|---:|---:|---:|---:|---:|---|',
  ];
  for (const r of mix.runs) {
    lines.push(
      `| ${r.name} | ${fmt(r.target_rate, 2)} | ${fmt(r.achieved_rate, 2)} | ${fmt(r.ttfb_p50_ms)} | ${fmt(r.ttfb_p90_ms)} | ${fmt(r.ttfb_p99_ms)} | ${fmt(r.success_rate * 100, 2)} | ${r.verdict} |`,
    );
  }
  const t = mix.api_total;
  lines.push(
    `| **all API endpoints** | ${t.target_rate} | ${fmt(t.achieved_rate)} | | worst ${fmt(t.worst_p90_ms)} | | ${fmt(t.success_rate * 100, 2)} | ${t.worst_p90_ms <= P90_AIM_MS && t.success_rate >= SUCCESS_AIM ? 'pass' : 'fail'} |`,
  );
  const c = mix.cpu;
  lines.push(
    '',
    `CPU during the mix (% of one core): app ${c.app_cpu_pct}, its git children ${c.git_cpu_pct}, PostgreSQL ${c.pg_cpu_pct ?? '(in the app)'}, load generator ${c.loadgen_cpu_pct}, ` +
      `everything else on the machine ${c.other_cpu_pct}; per request: app ${c.app_cpu_ms_per_req} ms, git ${c.git_cpu_ms_per_req} ms, PostgreSQL ${c.pg_cpu_ms_per_req ?? '—'} ms. ` +
      `Peak RSS: app ${c.peak_rss_mb} MB, with its children ${c.peak_tree_rss_mb} MB.`,
  );
  return lines.join('\n');
}

function peakOf(result) {
  const all = [...result.alone, ...result.git].map((r) => r.peak_tree_rss_mb);
  if (result.mix) all.push(result.mix.cpu.peak_tree_rss_mb);
  const own = [...result.alone, ...result.git].map((r) => r.peak_rss_mb);
  if (result.mix) own.push(result.mix.cpu.peak_rss_mb);
  return { tree: all.length ? Math.max(...all) : undefined, own: own.length ? Math.max(...own) : undefined };
}

// ---------------------------------------------------------------------------------------------

if (process.argv[2] === '--render') {
  // node bench/reference.bench.js --render bench/results/<OUT>.partial.json: the tables of a run stopped early
  const p = JSON.parse(fs.readFileSync(process.argv[3], 'utf8'));
  for (const [label, r] of Object.entries(p)) {
    process.stdout.write(`\n## ${label}\n\n${r.alone.length || r.git.length ? table(r) : ''}\n${r.mix ? '\n' + mixTable(r.mix) + '\n' : ''}`);
  }
  process.exit(0);
}

h.run(async () => {
  if (!fs.existsSync(path.join(APP_ROOT, 'dist/main.js')))
    throw new Error(`${APP_ROOT}/dist/main.js not found: run \`npm run build\` (npm run bench:reference does)`);
  fs.mkdirSync(CACHE, { recursive: true });
  fs.mkdirSync(RESULTS_DIR, { recursive: true });
  const commit = (() => {
    try {
      if (env.REF_COMMIT) return env.REF_COMMIT;
      // the build measured: REF_APP_ROOT's commit when it is a checkout (a `git archive` copy: set REF_COMMIT)
      const head = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: APP_ROOT }).toString().trim();
      const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no', '--', 'src'], { cwd: ROOT }).toString().trim();
      return APP_ROOT === ROOT && dirty ? `${head} + uncommitted changes in src/` : head;
    } catch {
      return 'unknown';
    }
  })();
  const loadBefore = os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');
  const report = {
    date: new Date().toISOString(),
    commit,
    node: process.version,
    cpus: os.cpus().length,
    load_average_before: loadBefore,
    duration_s: DURATION,
    mix_duration_s: MIX_DURATION,
    step_s: STEP,
  };
  const md = [
    `# Reference load (issue 27) — ${report.date}`,
    '',
    `Commit ${commit}; node ${process.version}; ${os.cpus().length} CPUs; load average before ${loadBefore}. ` +
      `Each endpoint alone for ${DURATION} s; mix for ${MIX_DURATION} s; capacity steps of ${STEP} s. Open model (bench/open-load.js), TTFB from when each request was due. ` +
      `Verdict: p90 ≤ ${P90_AIM_MS} ms, success ≥ 99.9 %, achieved ≥ 95 % of the target.`,
  ];
  const write = () => {
    fs.writeFileSync(path.join(RESULTS_DIR, `${OUT}.md`), md.join('\n') + '\n');
    fs.writeFileSync(path.join(RESULTS_DIR, `${OUT}.json`), JSON.stringify(report, null, 2) + '\n');
  };

  // REF_PARTS=embedded alone skips PostgreSQL mode's measurements (its seed is still needed: the embedded copy of the repository)
  const pgParts = new Set([...PARTS].filter((p) => p !== 'embedded'));
  const seedT0 = Date.now();
  const pgSeed = { ...(await preparePg()), scale: SCALE };
  report.pg_seed = {
    seconds_this_run: Math.round((Date.now() - seedT0) / 1000),
    seeded_at: pgSeed.seededAt,
    seed_seconds: pgSeed.seedSeconds,
    counts: pgSeed.counts,
  };
  if (pgParts.size) {
    const app = await startApp('app (PostgreSQL mode)', pgSeed.dataDir, { DATABASE_URL: pgSeed.dbUrl });
    const r = await runServer({
      label: '10,000-user load, PostgreSQL mode',
      app,
      dbUrl: pgSeed.dbUrl,
      seed: pgSeed,
      rates: { api: RATE, pull: PULL_RATE, push: PUSH_RATE, runners: RUNNERS },
      parts: pgParts,
    });
    await stopApp(app);
    report.postgresql = r;
    md.push('', `## 10,000-user load (${RATE} API req/s per endpoint alone, ${PULL_RATE} pulls/s, ${PUSH_RATE} pushes/s) — PostgreSQL mode`, '');
    if (r.alone.length || r.git.length) md.push(table(r));
    if (r.mix) md.push('', mixTable(r.mix));
    write();
  }
  if (PARTS.has('embedded')) {
    const eSeed = { ...(await prepareEmbedded(pgSeed)), scale: EMBEDDED_SCALE };
    const app = await startApp('app (embedded default)', eSeed.dataDir, { DATABASE_URL: '' });
    const idle = round(treeRssMb(app.child.pid), 0);
    // REF_PARTS=embedded alone: all of it on the embedded default; with other parts: those (`seed`: none, only the seed)
    const eParts = new Set(['endpoints', 'git', 'mix'].filter((p) => PARTS.has(p) || PARTS.size === 1));
    const r = await runServer({
      label: '1,000-user load, embedded default',
      app,
      dbUrl: undefined,
      seed: eSeed,
      rates: { api: SMALL.rate, pull: SMALL.pull, push: SMALL.push, runners: SMALL.runners },
      parts: eParts,
    });
    await stopApp(app);
    const peak = peakOf(r);
    report.embedded = { ...r, idle_rss_mb: idle, peak_rss_mb: peak.own, peak_tree_rss_mb: peak.tree, seed_seconds: eSeed.seedSeconds, counts: eSeed.counts };
    md.push(
      '',
      `## 1,000-user load (${SMALL.rate} API req/s per endpoint alone, ${SMALL.pull} pulls/s, ${SMALL.push} push/s) — embedded default (PGlite, no DATABASE_URL)`,
      '',
      `Peak RSS: ${peak.own} MB (app process; PostgreSQL runs inside it), ${peak.tree} MB with its git children; ${idle} MB after start. PostgreSQL's CPU is in the app's.`,
      '',
    );
    if (r.alone.length || r.git.length) md.push(table(r));
    if (r.mix) md.push('', mixTable(r.mix));
    write();
  }
  report.load_average_after = os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');
  md.push('', `Load average after: ${report.load_average_after}.`);
  write();
  process.stdout.write('\n' + md.join('\n') + '\n');
  log(`wrote bench/results/${OUT}.md and ${OUT}.json`);
});
