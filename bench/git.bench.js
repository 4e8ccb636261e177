'use strict';
/**
 * Git read API benchmark: the built app (dist/main.js) answering repository reads over HTTP against
 * the bare `git` command producing the same data, on the same machine in the same run.
 *
 *   npm run bench:git          (builds first)
 *
 * What it does: creates a throw-away PostgreSQL database and starts the server on it (temp DATA_DIR);
 * builds a repository of ~10,000 commits over ~1,000 files with `git fast-import` in a temp local bare
 * repository, pushes it to the server over smart HTTP, then measures, per operation, sequential
 * keep-alive API requests against spawning the equivalent git command (execFile) on the local bare
 * repository (the same objects). Also throughput (autocannon vs 8 concurrent git spawns) and clones
 * (smart HTTP vs a local `--no-local` clone). Merge requests: `changes` of an MR (the compare range) against
 * `git diff` of the same range, and accepting an MR (merge without a work tree) against `git merge` in a
 * work tree of the same repository, each on its own freshly prepared pair of diverged branches.
 *
 * Env (all optional): BENCH_PG_URL (default postgres://postgres@127.0.0.1:5432), BENCH_COMMITS (10000),
 * BENCH_FILES (1000), BENCH_ITERATIONS (30), BENCH_ARCHIVE_ITERATIONS (10), BENCH_WARMUP_ITERATIONS (3),
 * BENCH_CONNECTIONS (8), BENCH_DURATION (5 s), BENCH_CLONES (3), BENCH_MERGE_ITERATIONS (15), BENCH_APP_MAIN (default dist/main.js),
 * BENCH_ONLY=<comma-separated operation names> (tree,blob,raw,commit,commits,compare,archive,mr_changes,mr_merge,throughput,clone),
 * BENCH_PROFILE=1 (server runs with --cpu-prof; the .cpuprofile is written to bench/results/),
 * BENCH_REPO_CACHE=<folder> (keeps the generated repository there and reuses it on later runs),
 * BENCH_COMMIT_GRAPH=1 (writes a commit-graph in both repositories after the push: an experiment).
 *
 * Prints a markdown table and writes bench/results/git-latest.json. Exits non-zero on any failed
 * request, or when an API answer does not match what git says.
 */
const { execFile, spawn } = require('node:child_process');
const { createHash } = require('node:crypto');
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const zlib = require('node:zlib');
const autocannon = require('autocannon');

const { createHarness, sshClient } = require('./harness');

const ROOT = path.resolve(__dirname, '..');
const RESULTS_DIR = path.join(__dirname, 'results');
const COMMITS = Number(process.env.BENCH_COMMITS || 10_000);
const FILES = Number(process.env.BENCH_FILES || 1000);
const ITERATIONS = Number(process.env.BENCH_ITERATIONS || 30);
const ARCHIVE_ITERATIONS = Number(process.env.BENCH_ARCHIVE_ITERATIONS || 10);
const WARMUP_ITERATIONS = Number(process.env.BENCH_WARMUP_ITERATIONS || 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS || 8);
const DURATION = Number(process.env.BENCH_DURATION || 5);
const CLONES = Number(process.env.BENCH_CLONES || 3);
const MERGE_ITERATIONS = Number(process.env.BENCH_MERGE_ITERATIONS || 15);
const PROFILE = process.env.BENCH_PROFILE === '1';
const COMMIT_GRAPH = process.env.BENCH_COMMIT_GRAPH === '1';
const ONLY = process.env.BENCH_ONLY ? new Set(process.env.BENCH_ONLY.split(',').map((s) => s.trim())) : null;
const SECRET_KEY = 'bench-secret-key-0123456789abcdef0123456789abcdef';
const ROOT_PASSWORD = 'bench-root-password';
const DB_NAME = `bench_git_${Date.now()}_${process.pid}`;
const PROJECT = 'big';

const wanted = (name) => !ONLY || ONLY.has(name);
const h = createHarness('bench:git');
const { log, sleep } = h;

// ---------------------------------------------------------------------------------------------
// Processes, database, temp folders and cleanup: bench/harness.js
const { freePort, tempDir, waitReady } = h;
const startServer = (args, env) => h.startProcess('server', args, env);

async function api(base, method, p, token, body) {
  const headers = { 'Content-Type': 'application/json' };
  if (token) headers['PRIVATE-TOKEN'] = token;
  const r = await fetch(base + p, { method, headers, body: body ? JSON.stringify(body) : undefined });
  const text = await r.text();
  if (r.status < 200 || r.status > 299) throw new Error(`${method} ${p}: ${r.status} ${text.slice(0, 300)}`);
  return text ? JSON.parse(text) : null;
}

// ---------------------------------------------------------------------------------------------
// git
let gitHome;
function gitEnv(extra = {}) {
  return {
    PATH: process.env.PATH || '/usr/local/bin:/usr/bin:/bin',
    HOME: gitHome,
    XDG_CONFIG_HOME: path.join(gitHome, '.config'),
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_TERMINAL_PROMPT: '0',
    GIT_ASKPASS: '/bin/false',
    LC_ALL: 'C',
    LANG: 'C',
    TZ: 'UTC',
    ...extra,
  };
}

/** Runs git (no shell), resolves with stdout as a Buffer; rejects on a non-zero exit. */
function git(args, opts = {}) {
  return new Promise((resolve, reject) => {
    execFile(
      'git',
      args,
      { env: gitEnv({ ...(opts.gitDir ? { GIT_DIR: opts.gitDir } : {}), ...opts.env }), cwd: opts.cwd, encoding: 'buffer', maxBuffer: 1024 * 1024 * 1024 },
      (err, stdout, stderr) => {
        if (err) {
          const msg = String(stderr || '')
            .trim()
            .replace(/https?:\/\/[^@\s]*@/g, 'http://***@');
          reject(new Error(`git ${args.filter((a) => !a.includes('@')).join(' ')} failed: ${err.message.split('\n')[0]} ${msg}`));
        } else resolve(stdout);
      },
    );
  });
}

/** Deterministic pseudo-random numbers (mulberry32), so every run builds the same history. */
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const DIRS = [
  // [directory, share of the files]; the first one is the big directory the tree benchmark lists.
  ['src/components', 0.2],
  ['test/unit', 0.15],
  ['lib', 0.12],
  ['src/services', 0.1],
  ['src/models', 0.1],
  ['docs', 0.1],
  ['src/utils', 0.08],
  ['scripts', 0.04],
  ['src/api/v1', 0.04],
  ['src/api/v2', 0.04],
  ['config', 0.03],
];
const WORDS = (
  'account build cache commit config context count data default event file filter handler index ' +
  'issue item key label limit list merge message model name node option order owner page parse path payload ' +
  'project query queue record ref request result route runner schema session state status store stream tag ' +
  'task token tree update user value version visibility'
).split(' ');
const VERBS = ['Fix', 'Add', 'Update', 'Refactor', 'Remove', 'Improve', 'Rename', 'Simplify', 'Document', 'Handle'];
const AUTHORS = [
  ['Ada Lovelace', 'ada@example.com', '+0000'],
  ['Grace Hopper', 'grace@example.org', '-0500'],
  ['Linus Torvalds', 'linus@example.net', '-0800'],
  ['Margaret Hamilton', 'margaret@example.com', '-0500'],
  ['Dennis Ritchie', 'dmr@example.org', '-0500'],
  ['Barbara Liskov', 'liskov@example.edu', '-0500'],
  ['Ken Thompson', 'ken@example.com', '-0800'],
  ['Anna Müller', 'anna.mueller@example.de', '+0100'],
  ['Hiro Tanaka', 'hiro@example.jp', '+0900'],
  ['Priya Sharma', 'priya@example.in', '+0530'],
  ['Lucas Silva', 'lucas@example.br', '-0300'],
  ['Zoë Dubois', 'zoe@example.fr', '+0100'],
];

function buildHistory(rand) {
  const pick = (arr) => arr[Math.floor(rand() * arr.length)];
  const cap = (s) => s[0].toUpperCase() + s.slice(1);
  const ident = () => pick(WORDS) + cap(pick(WORDS));
  const line = (ext) => {
    const r = rand();
    if (ext === '.md') {
      if (r < 0.1) return `## ${cap(pick(WORDS))} ${pick(WORDS)}`;
      if (r < 0.2) return '';
      return `The ${pick(WORDS)} ${pick(WORDS)} keeps the ${pick(WORDS)} ${pick(WORDS)} when the ${pick(WORDS)} changes (see \`${ident()}\`).`;
    }
    if (ext === '.yml') return `${pick(WORDS)}_${pick(WORDS)}: ${r < 0.5 ? Math.floor(rand() * 1000) : pick(WORDS)}`;
    if (r < 0.08) return '';
    if (r < 0.16) return `  // ${cap(pick(WORDS))} the ${pick(WORDS)} before the ${pick(WORDS)} is ${pick(WORDS)}ed.`;
    if (r < 0.24) return `export function ${ident()}(${pick(WORDS)}, ${pick(WORDS)}) {`;
    if (r < 0.3) return '}';
    if (r < 0.4) return `  if (${pick(WORDS)}.${pick(WORDS)} === ${Math.floor(rand() * 100)}) return ${ident()}(${pick(WORDS)});`;
    if (r < 0.5) return `  for (const ${pick(WORDS)} of ${ident()}) total += ${pick(WORDS)}.${pick(WORDS)};`;
    return `  const ${ident()} = ${ident()}(${pick(WORDS)}, '${pick(WORDS)}-${Math.floor(rand() * 10000)}');`;
  };

  const files = [];
  let left = FILES;
  DIRS.forEach(([dir, share], i) => {
    const n = i === DIRS.length - 1 ? left : Math.round(FILES * share);
    left -= n;
    for (let k = 0; k < n; k++) {
      const ext = dir === 'docs' ? '.md' : dir === 'config' ? '.yml' : dir.startsWith('test') ? '.test.js' : '.js';
      const name = `${dir}/${pick(WORDS)}_${pick(WORDS)}_${k}${ext}`;
      const count = 15 + Math.floor(rand() * rand() * 220);
      const lines = [];
      for (let j = 0; j < count; j++) lines.push(line(ext.endsWith('.md') ? '.md' : ext.endsWith('.yml') ? '.yml' : '.js'));
      files.push({ name, ext: ext.endsWith('.md') ? '.md' : ext.endsWith('.yml') ? '.yml' : '.js', lines });
    }
  });
  return { files, line, pick, ident, cap };
}

/** Streams the fast-import input: one commit adding every file, then COMMITS small commits. */
async function fastImport(gitDir, rand) {
  const { files, line, pick, cap } = buildHistory(rand);
  const child = spawn('git', ['fast-import', '--quiet', '--done'], {
    env: gitEnv({ GIT_DIR: gitDir }),
    stdio: ['pipe', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise((resolve) => child.on('close', resolve));
  const write = async (s) => {
    if (!child.stdin.write(s)) await new Promise((r) => child.stdin.once('drain', r));
  };
  const data = (s) => `data ${Buffer.byteLength(s)}\n${s}\n`;
  let time = Date.UTC(2015, 0, 5, 9, 0, 0) / 1000;
  const commit = async (author, message, changed) => {
    const [name, email, tz] = author;
    time += 60 + Math.floor(rand() * 4 * 3600);
    let s = `commit refs/heads/master\nauthor ${name} <${email}> ${time} ${tz}\ncommitter ${name} <${email}> ${time} ${tz}\n${data(message)}`;
    for (const f of changed) s += `M 100644 inline ${f.name}\n${data(f.lines.join('\n') + '\n')}`;
    await write(s + '\n');
  };
  await commit(AUTHORS[0], 'Initial import\n', files);
  for (let i = 1; i <= COMMITS; i++) {
    const n = 1 + Math.floor(rand() * 3);
    const changed = new Set();
    while (changed.size < n) changed.add(files[Math.floor(Math.pow(rand(), 1.6) * files.length)]);
    for (const f of changed) {
      const edits = 1 + Math.floor(rand() * 4);
      for (let e = 0; e < edits; e++) {
        const at = Math.floor(rand() * f.lines.length);
        const r = rand();
        if (r < 0.45) f.lines[at] = line(f.ext);
        else if (r < 0.85 || f.lines.length < 20) f.lines.splice(at, 0, line(f.ext));
        else f.lines.splice(at, 1);
      }
    }
    const first = [...changed][0];
    let message = `${pick(VERBS)} ${pick(WORDS)} ${pick(WORDS)} in ${path.basename(first.name)}\n`;
    if (rand() < 0.4) {
      message +=
        `\n${cap(pick(WORDS))} ${pick(WORDS)} was ${pick(WORDS)}ed twice when the ${pick(WORDS)} ${pick(WORDS)} changed;\n` +
        `this keeps the ${pick(WORDS)} in one place.\n`;
    }
    if (rand() < 0.1) message += `\nCloses #${1 + Math.floor(rand() * 900)}\n`;
    await commit(pick(AUTHORS), message, [...changed]);
  }
  await write('done\n');
  child.stdin.end();
  const code = await exited;
  if (code !== 0) throw new Error(`git fast-import failed (${code}): ${stderr}`);
  return files;
}

// ---------------------------------------------------------------------------------------------
// Measurement
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
let BASE;
let TOKEN;

/** One GET over the keep-alive agent; resolves with { status, body } once the whole body arrived. */
function get(p, headers = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request(`${BASE}${p}`, { method: 'GET', agent, headers: { 'PRIVATE-TOKEN': TOKEN, ...headers } }, (res) => {
      const chunks = [];
      res.on('data', (d) => chunks.push(d));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

async function getOk(p) {
  const r = await get(p);
  if (r.status !== 200) throw new Error(`GET ${p}: ${r.status} ${r.body.toString('utf8').slice(0, 300)}`);
  return r;
}

const now = () => process.hrtime.bigint();
const ms = (t0) => Number(now() - t0) / 1e6;

function stats(samples) {
  const s = [...samples].sort((a, b) => a - b);
  const q = (p) => s[Math.min(s.length - 1, Math.max(0, Math.ceil(p * s.length) - 1))];
  return {
    n: s.length,
    median_ms: round(s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2),
    p95_ms: round(q(0.95)),
    min_ms: round(s[0]),
    max_ms: round(s[s.length - 1]),
    mean_ms: round(s.reduce((a, b) => a + b, 0) / s.length),
  };
}
const round = (x, d = 2) => Math.round(x * 10 ** d) / 10 ** d;

/**
 * Alternates the API call and the git command (warm-up rounds first, not counted), so that drift on
 * the machine hits both sides alike. `apiFn(i)` / `gitFn(i)` get the iteration number.
 */
async function compareOp(name, iterations, apiFn, gitFn) {
  const cpu0 = { server: cpuMs(serverPid, true), git: cpuMs('self', false, true) };
  for (let i = 0; i < WARMUP_ITERATIONS; i++) {
    await apiFn(-1 - i);
    await gitFn(-1 - i);
  }
  const a = [];
  const g = [];
  for (let i = 0; i < iterations; i++) {
    let t = now();
    await apiFn(i);
    a.push(ms(t));
    t = now();
    await gitFn(i);
    g.push(ms(t));
  }
  const calls = WARMUP_ITERATIONS + iterations;
  const res = { operation: name, iterations, api: stats(a), git: stats(g) };
  res.ratio = round(res.api.median_ms / res.git.median_ms);
  // CPU per call: the server process and the git commands it waited for / the git commands the bench ran.
  res.api.cpu_ms = round((cpuMs(serverPid, true) - cpu0.server) / calls);
  res.git.cpu_ms = round((cpuMs('self', false, true) - cpu0.git) / calls);
  log(`${name}: API median ${res.api.median_ms} ms (p95 ${res.api.p95_ms}), git median ${res.git.median_ms} ms (p95 ${res.git.p95_ms}), ratio ${res.ratio}`);
  return res;
}

/**
 * Like compareOp, with an untimed `after(i)` step after each git run (set-up of the next run, e.g. a
 * checkout), so that only the operation itself is measured on both sides.
 */
async function compareOpPrepared(name, iterations, apiFn, gitFn, after) {
  const cpu0 = { server: cpuMs(serverPid, true), git: cpuMs('self', false, true) };
  for (let i = 0; i < WARMUP_ITERATIONS; i++) {
    await apiFn(-1 - i);
    await gitFn(-1 - i);
    await after(-1 - i);
  }
  const a = [];
  const g = [];
  for (let i = 0; i < iterations; i++) {
    let t = now();
    await apiFn(i);
    a.push(ms(t));
    t = now();
    await gitFn(i);
    g.push(ms(t));
    await after(i);
  }
  const calls = WARMUP_ITERATIONS + iterations;
  const res = { operation: name, iterations, api: stats(a), git: stats(g) };
  res.ratio = round(res.api.median_ms / res.git.median_ms);
  res.api.cpu_ms = round((cpuMs(serverPid, true) - cpu0.server) / calls);
  res.git.cpu_ms = round((cpuMs('self', false, true) - cpu0.git) / calls);
  log(`${name}: API median ${res.api.median_ms} ms (p95 ${res.api.p95_ms}), git median ${res.git.median_ms} ms (p95 ${res.git.p95_ms}), ratio ${res.ratio}`);
  return res;
}

const CLK_TCK = 100; // USER_HZ on Linux
let serverPid;

/** CPU time of a process in ms from /proc: its own (utime + stime) and/or its reaped children's (cutime + cstime). */
function cpuMs(pid, own = true, children = own) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    let ticks = 0;
    if (own) ticks += Number(f[11]) + Number(f[12]);
    if (children) ticks += Number(f[13]) + Number(f[14]);
    return (ticks * 1000) / CLK_TCK;
  } catch {
    return 0;
  }
}

function cannon(opts) {
  return new Promise((resolve, reject) => {
    const inst = autocannon(opts, (err, res) => (err ? reject(err) : resolve(res)));
    inst.on('error', reject);
  });
}

/** `concurrency` loops each spawning the git command back to back for `seconds`: completed runs per second. */
async function gitLoop(args, gitDir, concurrency, seconds) {
  const deadline = Date.now() + seconds * 1000;
  let done = 0;
  const t0 = now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (Date.now() < deadline) {
        await git(args, { gitDir });
        done++;
      }
    }),
  );
  return { runs: done, seconds: round(ms(t0) / 1000, 3), per_s: round(done / (ms(t0) / 1000), 1) };
}

// ---------------------------------------------------------------------------------------------
function parseLsTree(buf) {
  return buf
    .toString('utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      const [meta, name] = l.split('\t');
      const [mode, type, id] = meta.split(' ');
      return { id, name, type, mode };
    });
}

function sameSet(a, b) {
  const key = (e) => `${e.mode} ${e.type} ${e.id} ${e.name}`;
  const x = a.map(key).sort();
  const y = b.map(key).sort();
  return x.length === y.length && x.every((v, i) => v === y[i]);
}

function assert(cond, msg) {
  if (!cond) throw new Error(`mismatch: ${msg}`);
}

const LOG_FORMAT = '--format=%H%x00%P%x00%an%x00%ae%x00%aI%x00%cI%x00%B%x00';

// ---------------------------------------------------------------------------------------------
async function main() {
  const mainJs = path.resolve(ROOT, process.env.BENCH_APP_MAIN || 'dist/main.js');
  if (!fs.existsSync(mainJs)) throw new Error('dist/main.js not found: run `npm run build` (npm run bench:git does)');
  fs.mkdirSync(RESULTS_DIR, { recursive: true });
  const loadStart = os.loadavg();
  const work = tempDir('gitlab-bench-git-');
  gitHome = path.join(work, 'home');
  fs.mkdirSync(gitHome);
  const dataDir = path.join(work, 'data');
  const localRepo = path.join(work, 'local.git');

  // --- database and server
  const dbUrl = await h.createDatabase(DB_NAME);
  const port = await freePort();
  const sshPort = await freePort();
  BASE = `http://127.0.0.1:${port}`;
  const profileArgs = PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${RESULTS_DIR}`, `--cpu-prof-name=git-server-${Date.now()}.cpuprofile`] : [];
  const serverReady = (async () => {
    const child = startServer([...profileArgs, mainJs], {
      DATABASE_URL: dbUrl,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      SECRET_KEY,
      ROOT_PASSWORD,
      EXTERNAL_URL: BASE,
      LOG_LEVEL: 'error',
      NODE_ENV: 'production',
      SSH_PORT: String(sshPort),
      SSH_LISTEN: '127.0.0.1',
    });
    await waitReady(child, BASE);
    return child;
  })();
  serverReady.catch(() => undefined); // awaited below; a start failure must not go unhandled meanwhile

  // --- the repository, built while the server starts
  let t0 = Date.now();
  let importMs = 0;
  let repackMs = 0;
  const cache = process.env.BENCH_REPO_CACHE && path.resolve(process.env.BENCH_REPO_CACHE, `c${COMMITS}-f${FILES}.git`);
  if (cache && fs.existsSync(path.join(cache, 'objects'))) {
    fs.cpSync(cache, localRepo, { recursive: true });
    log(`local repository copied from ${cache}`);
  } else {
    await git(['init', '--bare', '--quiet', '--initial-branch=master', localRepo]);
    await fastImport(localRepo, rng(20240601));
    importMs = Date.now() - t0;
    t0 = Date.now();
    await git(['repack', '-a', '-d', '-f', '-q', '--window=10', '--depth=50'], { gitDir: localRepo });
    repackMs = Date.now() - t0;
    if (cache) fs.cpSync(localRepo, cache, { recursive: true });
  }
  const fileCount = Number((await git(['ls-tree', '-r', '--name-only', '-z', 'HEAD'], { gitDir: localRepo })).toString().split('\0').filter(Boolean).length);
  const commitCount = Number((await git(['rev-list', '--count', 'HEAD'], { gitDir: localRepo })).toString().trim());
  log(
    `repository: ${commitCount} commits over ${fileCount} files` +
      (importMs ? `; built in ${importMs} ms (fast-import) + ${repackMs} ms (repack)` : ' (from BENCH_REPO_CACHE)'),
  );

  const server = await serverReady;
  serverPid = server.pid;
  log(`server ready on ${BASE} (pid ${server.pid})`);
  const session = await api(BASE, 'POST', '/api/v3/session', null, { login: 'root', password: ROOT_PASSWORD });
  TOKEN = session.private_token;
  if (!TOKEN || !session.is_admin) throw new Error('sign-in did not return an administrator private token');
  const project = await api(BASE, 'POST', '/api/v3/projects', TOKEN, { name: PROJECT });
  await api(BASE, 'PUT', `/api/v3/projects/${project.id}`, TOKEN, { visibility_level: 20 });
  const pathWithNs = project.path_with_namespace;

  t0 = Date.now();
  const authUrl = `http://root:${encodeURIComponent(TOKEN)}@127.0.0.1:${port}/${pathWithNs}.git`;
  await git(['push', '--quiet', authUrl, '--all'], { gitDir: localRepo });
  const pushMs = Date.now() - t0;
  const serverRepo = path.join(
    dataDir,
    'repositories',
    '@hashed',
    ...(() => {
      const h = createHash('sha256').update(String(project.id)).digest('hex');
      return [h.slice(0, 2), h.slice(2, 4), `${h}.git`];
    })(),
  );
  const refsLocal = (await git(['for-each-ref', '--format=%(refname) %(objectname)'], { gitDir: localRepo })).toString();
  const refsServer = (await git(['for-each-ref', '--format=%(refname) %(objectname)'], { gitDir: serverRepo })).toString();
  assert(refsLocal === refsServer, `refs differ after push:\nlocal:\n${refsLocal}\nserver:\n${refsServer}`);
  // The server records the default branch right after the push response ended: wait for it.
  let shown;
  for (let i = 0; i < 100; i++) {
    shown = await api(BASE, 'GET', `/api/v3/projects/${project.id}`, TOKEN);
    if (shown.default_branch) break;
    await sleep(50);
  }
  assert(shown.default_branch === 'master', `default branch after push is ${shown.default_branch}`);
  const sizeOf = async (dir) => {
    const v = (await git(['count-objects', '-v'], { gitDir: dir })).toString();
    return Object.fromEntries(
      v
        .trim()
        .split('\n')
        .map((l) => l.split(': '))
        .map(([k, x]) => [k, Number(x)]),
    );
  };
  if (COMMIT_GRAPH) {
    // Experiment: the same commit-graph file in both repositories (git's own housekeeping writes one).
    for (const dir of [localRepo, serverRepo]) await git(['commit-graph', 'write', '--reachable'], { gitDir: dir });
    log('wrote a commit-graph in the local and the server repository (BENCH_COMMIT_GRAPH=1)');
  }
  const [localObjects, serverObjects] = await Promise.all([sizeOf(localRepo), sizeOf(serverRepo)]);
  log(`pushed over HTTP in ${pushMs} ms; local pack ${localObjects['size-pack']} KiB, server pack ${serverObjects['size-pack']} KiB`);

  // --- fixtures
  const P = `/api/v3/projects/${project.id}/repository`;
  const revs = (await git(['rev-list', 'HEAD'], { gitDir: localRepo })).toString().trim().split('\n');
  const treeDir = DIRS[0][0];
  const treeEntries = parseLsTree(await git(['ls-tree', `HEAD:${treeDir}`], { gitDir: localRepo }));
  // A typical file: the median-sized one of the big directory.
  const sized = await Promise.all(
    treeEntries.slice(0, 60).map(async (e) => ({ e, size: Number((await git(['cat-file', '-s', e.id], { gitDir: localRepo })).toString()) })),
  );
  sized.sort((a, b) => a.size - b.size);
  const blobEntry = sized[Math.floor(sized.length / 2)].e;
  const blobPath = `${treeDir}/${blobEntry.name}`;
  const blobSize = sized[Math.floor(sized.length / 2)].size;
  const commitSha = revs[Math.min(1234, revs.length - 1)];
  const compareFrom = revs[50];
  log(
    `tree ${treeDir} (${treeEntries.length} entries), blob ${blobPath} (${blobSize} bytes, ${blobEntry.id}), commit ${commitSha}, compare ${compareFrom}..master`,
  );

  const results = [];
  const G = { gitDir: localRepo };

  // What any repository read costs before git is involved: authentication, the project and its
  // permissions (a raw blob name that is not hex is refused with 404 without asking git).
  const floorSamples = [];
  for (let i = 0; i < WARMUP_ITERATIONS + ITERATIONS; i++) {
    const t = now();
    const r = await get(`${P}/raw_blobs/not-a-sha`);
    if (r.status !== 404) throw new Error(`GET ${P}/raw_blobs/not-a-sha: ${r.status}, expected 404`);
    if (i >= WARMUP_ITERATIONS) floorSamples.push(ms(t));
  }
  const floor = stats(floorSamples);
  log(`API floor (raw_blobs/not-a-sha → 404: auth + project access, no git): median ${floor.median_ms} ms (p95 ${floor.p95_ms})`);

  // --- tree
  if (wanted('tree')) {
    const q = `${P}/tree?path=${encodeURIComponent(treeDir)}`;
    const a = JSON.parse((await getOk(q)).body);
    assert(sameSet(a, treeEntries), 'tree entries differ from git ls-tree');
    const r = await compareOp(
      `tree (${treeEntries.length} entries)`,
      ITERATIONS,
      () => getOk(q),
      () => git(['ls-tree', `HEAD:${treeDir}`], G),
    );
    results.push({ key: 'tree', ...r });
  }

  // --- blob by path
  if (wanted('blob')) {
    const q = `${P}/blobs/master?filepath=${encodeURIComponent(blobPath)}`;
    const [a, b] = [(await getOk(q)).body, await git(['cat-file', '-p', `HEAD:${blobPath}`], G)];
    assert(a.equals(b), 'blob bytes differ from git cat-file');
    const r = await compareOp(
      `blob (${blobSize} B)`,
      ITERATIONS,
      () => getOk(q),
      () => git(['cat-file', '-p', `HEAD:${blobPath}`], G),
    );
    results.push({ key: 'blob', ...r });
  }

  // --- raw blob by sha
  if (wanted('raw')) {
    const q = `${P}/raw_blobs/${blobEntry.id}`;
    const [a, b] = [(await getOk(q)).body, await git(['cat-file', '-p', blobEntry.id], G)];
    assert(a.equals(b), 'raw blob bytes differ from git cat-file');
    const r = await compareOp(
      'raw blob',
      ITERATIONS,
      () => getOk(q),
      () => git(['cat-file', '-p', blobEntry.id], G),
    );
    results.push({ key: 'raw', ...r });
  }

  // --- one commit
  const commitArgs = ['log', '-1', LOG_FORMAT, commitSha];
  if (wanted('commit')) {
    const q = `${P}/commits/${commitSha}`;
    const a = JSON.parse((await getOk(q)).body);
    const [id, parents, , , , , message] = (await git(commitArgs, G)).toString('utf8').split('\0');
    assert(a.id === id && a.parent_ids.join(' ') === parents && a.message === message, 'commit differs from git log');
    const r = await compareOp(
      'one commit',
      ITERATIONS,
      () => getOk(q),
      () => git(commitArgs, G),
    );
    results.push({ key: 'commit', ...r });
  }

  // --- commits list, page 50
  if (wanted('commits')) {
    const q = `${P}/commits?per_page=100&page=50`;
    const args = ['log', '--skip=4900', '-n', '100', LOG_FORMAT, 'HEAD'];
    const a = JSON.parse((await getOk(q)).body);
    const ids = (await git(['log', '--skip=4900', '-n', '100', '--format=%H', 'HEAD'], G)).toString().split('\n').filter(Boolean);
    assert(a.length === ids.length && a.map((c) => c.id).join() === ids.join(), 'commits page differs from git log');
    const r = await compareOp(
      'commits (page 50 × 100)',
      ITERATIONS,
      () => getOk(q),
      () => git(args, G),
    );
    results.push({ key: 'commits', ...r });
    // The same page from a different tip every time: nothing the server remembers (the total count) helps.
    const tip = (i) => revs[i < 0 ? ITERATIONS - 1 - i : i];
    const qt = (sha) => `${P}/commits?per_page=100&page=50&ref_name=${sha}`;
    const argsTip = (sha) => ['log', '--skip=4900', '-n', '100', LOG_FORMAT, sha];
    const b = JSON.parse((await getOk(qt(revs[7]))).body);
    const idsTip = (await git(['log', '--skip=4900', '-n', '100', '--format=%H', revs[7]], G)).toString().split('\n').filter(Boolean);
    assert(b.map((c) => c.id).join() === idsTip.join(), 'commits page (ref_name) differs from git log');
    const rt = await compareOp(
      'commits (page 50 × 100, new tip each time)',
      ITERATIONS,
      (i) => getOk(qt(tip(i))),
      (i) => git(argsTip(tip(i)), G),
    );
    results.push({ key: 'commits_new_tip', ...rt });
  }

  // --- compare ~50 commits
  if (wanted('compare')) {
    const q = `${P}/compare?from=${compareFrom}&to=master`;
    const gitCompare = async () => {
      const l = await git(['log', LOG_FORMAT, `${compareFrom}..master`], G);
      const d = await git(['diff', '--full-index', `${compareFrom}...master`], G);
      return { l, d };
    };
    const a = JSON.parse((await getOk(q)).body);
    const { l, d } = await gitCompare();
    const ids = l
      .toString('utf8')
      .split('\0\n')
      .map((s) => s.split('\0')[0])
      .filter(Boolean)
      .reverse();
    const files = (d.toString('utf8').match(/^diff --git /gm) || []).length;
    assert(a.commits.map((c) => c.id).join() === ids.join(), 'compare commits differ from git log');
    assert(a.diffs.length === files, `compare has ${a.diffs.length} diffs, git diff ${files} files`);
    const r = await compareOp(`compare (${ids.length} commits, ${files} files)`, ITERATIONS, () => getOk(q), gitCompare);
    results.push({ key: 'compare', ...r });
  }

  // --- merge requests: changes of an MR against `git diff` of the same range
  const API = `/api/v3/projects/${project.id}`;
  if (wanted('mr_changes')) {
    await api(BASE, 'POST', `${API}/repository/branches`, TOKEN, { branch_name: 'mr-base', ref: compareFrom });
    const mr = await api(BASE, 'POST', `${API}/merge_requests`, TOKEN, { source_branch: 'master', target_branch: 'mr-base', title: 'Bench changes' });
    const q = `${API}/merge_requests/${mr.id}/changes`;
    const gitChanges = () => git(['diff', '--full-index', `${compareFrom}...master`], G);
    const a = JSON.parse((await getOk(q)).body);
    const files = (await git(['diff', '--name-only', '-z', `${compareFrom}...master`], G)).toString().split('\0').filter(Boolean).length;
    const commits = JSON.parse((await getOk(`${API}/merge_requests/${mr.id}/commits`)).body).length;
    assert(a.changes.length === files, `MR changes has ${a.changes.length} entries, git diff ${files} files`);
    const r = await compareOp(`MR changes (${commits} commits, ${files} files) vs git diff`, ITERATIONS, () => getOk(q), gitChanges);
    results.push({ key: 'mr_changes', ...r });
  }

  // --- merge requests: accept (merge-tree + commit-tree + CAS update-ref) against `git merge` in a work tree
  if (wanted('mr_merge')) {
    const n = WARMUP_ITERATIONS + MERGE_ITERATIONS;
    const tree = path.join(work, 'merge-tree');
    await git(['worktree', 'add', '--quiet', '--detach', tree, 'master'], G);
    const wt = { cwd: tree };
    const who = ['-c', 'user.name=Bench', '-c', 'user.email=bench@example.com'];
    // Fixtures (not timed): per run a target branch 50 commits behind master with one commit of its own,
    // so that master and it have diverged; the same branch is fetched into the local repository.
    const mrs = [];
    for (let i = 0; i < n; i++) {
      const branch = `mt-${i}`;
      await api(BASE, 'POST', `${API}/repository/branches`, TOKEN, { branch_name: branch, ref: compareFrom });
      await api(BASE, 'POST', `${API}/repository/files`, TOKEN, {
        file_path: `bench/target-${i}.txt`,
        branch_name: branch,
        content: `target ${i}\n`,
        commit_message: `Target ${i}`,
      });
      mrs.push(await api(BASE, 'POST', `${API}/merge_requests`, TOKEN, { source_branch: 'master', target_branch: branch, title: `Bench merge ${i}` }));
    }
    const refspecs = mrs.map((_, i) => `+refs/heads/mt-${i}:refs/heads/mt-${i}`);
    await git(['fetch', '--quiet', authUrl, ...refspecs], G);
    const idx = (i) => (i < 0 ? -1 - i : WARMUP_ITERATIONS + i);
    const put = (p) =>
      new Promise((resolve, reject) => {
        const req = http.request(`${BASE}${p}`, { method: 'PUT', agent, headers: { 'PRIVATE-TOKEN': TOKEN } }, (res) => {
          const chunks = [];
          res.on('data', (d) => chunks.push(d));
          res.on('end', () =>
            res.statusCode === 200 ? resolve(Buffer.concat(chunks)) : reject(new Error(`PUT ${p}: ${res.statusCode} ${Buffer.concat(chunks)}`)),
          );
          res.on('error', reject);
        });
        req.on('error', reject);
        req.end();
      });
    // The work-tree side: the checkout of the target branch is set-up (done before the timer starts).
    let checkedOut = -1;
    const prepare = async (k) => {
      await git(['checkout', '--quiet', '-B', `wt-${k}`, `mt-${k}`], wt);
      checkedOut = k;
    };
    await prepare(idx(-1));
    const apiMerge = async (i) => {
      const body = JSON.parse((await put(`${API}/merge_requests/${mrs[idx(i)].id}/merge`)).toString());
      assert(body.state === 'merged', `MR ${mrs[idx(i)].iid} not merged: ${body.state}`);
    };
    const gitMerge = async (i) => {
      const k = idx(i);
      assert(checkedOut === k, 'work tree not prepared');
      await git([...who, 'merge', '--quiet', '--no-ff', '-m', `Merge branch 'master' into 'mt-${k}'`, 'master'], wt);
    };
    const r = await compareOpPrepared(
      `MR merge (${COMMITS}-commit repository) vs git merge in a work tree`,
      MERGE_ITERATIONS,
      apiMerge,
      gitMerge,
      // the next run's checkout, untimed
      async (i) => {
        const next = i < 0 ? (i === -WARMUP_ITERATIONS ? WARMUP_ITERATIONS : idx(i - 1)) : idx(i + 1);
        if (next < n) await prepare(next);
      },
    );
    // the API merges are real merge commits with both parents
    const merged = (await git(['rev-list', '--parents', '-n', '1', `refs/heads/mt-0`], { gitDir: serverRepo })).toString().trim().split(' ');
    assert(merged.length === 3, 'the merged target tip is not a merge commit');
    results.push({ key: 'mr_merge', ...r });
    await git(['worktree', 'remove', '--force', tree], G);
  }

  // --- archive: a different commit every iteration (uncached), then the same ones again (cached)
  if (wanted('archive')) {
    const shas = revs.slice(100, 100 + ARCHIVE_ITERATIONS + WARMUP_ITERATIONS);
    const pick = (i) => shas[i < 0 ? ARCHIVE_ITERATIONS - 1 - i : i];
    const q = (sha) => `${P}/archive.tar.gz?sha=${sha}`;
    const gitArchive = (sha) => git(['archive', '--format=tar.gz', sha], G);
    // Same tar as git's (with the server's prefix), whatever gzip did.
    const probe = revs[99];
    const a = await getOk(q(probe));
    const b = await git(['archive', '--format=tar', `--prefix=${PROJECT}-${probe}-${probe}/`, probe], G);
    assert(zlib.gunzipSync(a.body).equals(b), 'archive tar differs from git archive');
    const r = await compareOp(
      'archive.tar.gz (uncached)',
      ARCHIVE_ITERATIONS,
      (i) => getOk(q(pick(i))),
      (i) => gitArchive(pick(i)),
    );
    results.push({ key: 'archive', archive_bytes: a.body.length, ...r });
    const rc = await compareOp(
      'archive.tar.gz (cached)',
      ARCHIVE_ITERATIONS,
      (i) => getOk(q(pick(i))),
      (i) => gitArchive(pick(i)),
    );
    results.push({ key: 'archive_cached', archive_bytes: a.body.length, ...rc });
  }

  // --- throughput
  const throughput = [];
  if (wanted('throughput')) {
    const ops = [
      { key: 'tree', url: `${P}/tree?path=${encodeURIComponent(treeDir)}`, args: ['ls-tree', `HEAD:${treeDir}`] },
      { key: 'blob', url: `${P}/blobs/master?filepath=${encodeURIComponent(blobPath)}`, args: ['cat-file', '-p', `HEAD:${blobPath}`] },
      { key: 'commit', url: `${P}/commits/${commitSha}`, args: commitArgs },
    ];
    for (const op of ops) {
      const opts = { url: BASE + op.url, headers: { 'PRIVATE-TOKEN': TOKEN }, connections: CONNECTIONS };
      await cannon({ ...opts, duration: 1 });
      const c = await cannon({ ...opts, duration: DURATION });
      const loop = await gitLoop(op.args, localRepo, CONNECTIONS, DURATION);
      const res = {
        operation: op.key,
        connections: CONNECTIONS,
        duration_s: DURATION,
        api_req_per_s: round(c.requests.average, 1),
        api_requests: c.requests.total,
        api_latency_p50_ms: c.latency.p50,
        api_latency_p99_ms: c.latency.p99,
        api_non2xx: c.non2xx,
        api_errors: c.errors + c.timeouts,
        git_runs_per_s: loop.per_s,
        git_runs: loop.runs,
      };
      res.ratio = round(res.api_req_per_s / res.git_runs_per_s);
      log(`throughput ${op.key}: API ${res.api_req_per_s} req/s (p50 ${res.api_latency_p50_ms} ms), git ${res.git_runs_per_s} runs/s → ${res.ratio}×`);
      if (c.non2xx || c.errors || c.timeouts || !c.requests.total) {
        throw new Error(`throughput ${op.key}: non-2xx ${c.non2xx}, errors ${c.errors}, timeouts ${c.timeouts}`);
      }
      throughput.push(res);
    }
  }

  // --- clone
  let clone;
  if (wanted('clone')) {
    const anonUrl = `${BASE}/${pathWithNs}.git`;
    const sshUrl = `ssh://git@127.0.0.1:${sshPort}/${pathWithNs}.git`;
    const sshWork = fs.mkdtempSync(path.join(work, 'ssh-'));
    const { gitSshCommand } = await sshClient({
      api: (method, p, body, token) => api(BASE, method, `/api/v3${p}`, token, body),
      token: TOKEN,
      sshPort,
      work: sshWork,
    });
    const http_ = [];
    const ssh_ = [];
    const local = [];
    const dest = path.join(work, 'clone.git');
    const timed = async (args, env) => {
      fs.rmSync(dest, { recursive: true, force: true });
      const t = now();
      await git(args, { env });
      const d = ms(t);
      const heads = (await git(['for-each-ref', '--format=%(refname) %(objectname)', 'refs/heads'], { gitDir: dest })).toString();
      // every branch of the pushed repository, at its tip (the server may hold more: the merge requests' branches)
      const cloned = new Set(heads.split('\n').filter(Boolean));
      assert(
        refsLocal
          .split('\n')
          .filter((l) => l.startsWith('refs/heads/'))
          .every((l) => cloned.has(l)),
        'cloned refs differ',
      );
      fs.rmSync(dest, { recursive: true, force: true });
      return d;
    };
    for (let i = 0; i < CLONES; i++) {
      // Alternate which goes first.
      const h = () => timed(['clone', '--bare', '--quiet', anonUrl, dest]);
      const l = () => timed(['clone', '--bare', '--quiet', '--no-local', localRepo, dest]);
      const o = () => timed(['clone', '--bare', '--quiet', sshUrl, dest], { GIT_SSH_COMMAND: gitSshCommand });
      // rotate which goes first
      const order = [
        [h, http_],
        [l, local],
        [o, ssh_],
      ];
      for (let k = 0; k < order.length; k++) {
        const [f, into] = order[(i + k) % order.length];
        into.push(await f());
      }
    }
    clone = { iterations: CLONES, http: stats(http_), ssh: stats(ssh_), local: stats(local), pack_kib: serverObjects['size-pack'] };
    clone.ratio_local_over_http = round(clone.local.median_ms / clone.http.median_ms);
    clone.ratio_local_over_ssh = round(clone.local.median_ms / clone.ssh.median_ms);
    log(
      `clone: HTTP median ${clone.http.median_ms} ms, SSH median ${clone.ssh.median_ms} ms, local --no-local median ${clone.local.median_ms} ms → ` +
        `HTTP ${clone.ratio_local_over_http}×, SSH ${clone.ratio_local_over_ssh}×`,
    );
  }

  if (server.exitCode !== null) throw new Error(`server died:\n${server.tail()}`);

  // --- report
  const lines = [
    '',
    `Git read API vs bare git — ${commitCount} commits, ${fileCount} files, pack ${serverObjects['size-pack']} KiB; ` +
      `${ITERATIONS} iterations (archive ${ARCHIVE_ITERATIONS}) after ${WARMUP_ITERATIONS} warm-up; ` +
      `git ${(await git(['--version'])).toString().trim().replace('git version ', '')}, node ${process.version}, ${os.cpus().length} CPUs`,
    '',
    '| operation | API median ms | API p95 ms | git median ms | git p95 ms | ratio |',
    '| --- | ---: | ---: | ---: | ---: | ---: |',
    ...results.map(
      (r) =>
        `| ${r.operation} | ${r.api.median_ms.toFixed(2)} | ${r.api.p95_ms.toFixed(2)} | ${r.git.median_ms.toFixed(2)} | ${r.git.p95_ms.toFixed(2)} | ${r.ratio.toFixed(2)} |`,
    ),
    '',
    'CPU per call (ms; /proc, 10 ms ticks averaged over the calls): ' +
      results.map((r) => `${r.key} API ${r.api.cpu_ms.toFixed(1)} vs git ${r.git.cpu_ms.toFixed(1)}`).join('; ') +
      '.',
    '',
    `API floor (GET .../raw_blobs/not-a-sha → 404: authentication and project access, no git): median ${floor.median_ms.toFixed(2)} ms, p95 ${floor.p95_ms.toFixed(2)} ms. ` +
      `Load average ${loadStart.map((x) => x.toFixed(1)).join(' ')} at the start, ${os
        .loadavg()
        .map((x) => x.toFixed(1))
        .join(' ')} at the end.`,
    '',
  ];
  if (throughput.length) {
    lines.push(`Throughput (${CONNECTIONS} connections / ${CONNECTIONS} concurrent git spawns, ${DURATION} s):`, '');
    lines.push('| operation | API req/s | git runs/s | API/git |', '| --- | ---: | ---: | ---: |');
    for (const t of throughput) lines.push(`| ${t.operation} | ${t.api_req_per_s.toFixed(1)} | ${t.git_runs_per_s.toFixed(1)} | ${t.ratio.toFixed(2)} |`);
    lines.push('');
  }
  if (clone) {
    lines.push(
      `Clone (${CLONES}×, pack ${clone.pack_kib} KiB): HTTP median ${clone.http.median_ms.toFixed(0)} ms (p95 ${clone.http.p95_ms.toFixed(0)}), ` +
        `SSH median ${clone.ssh.median_ms.toFixed(0)} ms (p95 ${clone.ssh.p95_ms.toFixed(0)}), ` +
        `local --no-local median ${clone.local.median_ms.toFixed(0)} ms (p95 ${clone.local.p95_ms.toFixed(0)}); ` +
        `local/HTTP = ${clone.ratio_local_over_http.toFixed(2)}, local/SSH = ${clone.ratio_local_over_ssh.toFixed(2)} (each at that fraction of the local clone's speed)`,
      '',
    );
  }
  process.stdout.write(lines.join('\n') + '\n');

  const report = {
    date: new Date().toISOString(),
    node: process.version,
    git: (await git(['--version'])).toString().trim(),
    cpus: os.cpus().length,
    cpu_model: os.cpus()[0]?.model,
    repository: {
      commit_graph: COMMIT_GRAPH,
      commits: commitCount,
      files: fileCount,
      fast_import_ms: importMs,
      repack_ms: repackMs,
      push_ms: pushMs,
      local: localObjects,
      server: serverObjects,
      tree_dir: treeDir,
      tree_entries: treeEntries.length,
      blob_path: blobPath,
      blob_bytes: blobSize,
      commit: commitSha,
      compare_from: compareFrom,
    },
    load_average: { start: loadStart, end: os.loadavg() },
    api_floor: floor,
    iterations: ITERATIONS,
    archive_iterations: ARCHIVE_ITERATIONS,
    warmup_iterations: WARMUP_ITERATIONS,
    results,
    throughput,
    clone,
  };
  fs.writeFileSync(path.join(RESULTS_DIR, 'git-latest.json'), JSON.stringify(report, null, 2) + '\n');
  log(`wrote ${path.relative(ROOT, path.join(RESULTS_DIR, 'git-latest.json'))}`);
  server.stopping = true;
}

h.onCleanup(() => agent.destroy());
h.run(main);
