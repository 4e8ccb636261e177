'use strict';
/**
 * Users API benchmark: the built app (dist/main.js) against a bare node:http baseline
 * (bench/bare-server.js) doing the same work, on a throw-away PostgreSQL database.
 *
 *   npm run bench          (builds first)
 *
 * Env (all optional): BENCH_PG_URL (server URL without database, default postgres://postgres@127.0.0.1:5432),
 * BENCH_USERS (1000), BENCH_CONNECTIONS (32), BENCH_DURATION (10 s), BENCH_WARMUP (3 s), DB_POOL_SIZE (10),
 * BENCH_APP_MAIN (the app's entry point, default dist/main.js: e.g. a copy of dist built from another revision),
 * BENCH_ONLY=<substring of the path> (e.g. `users?`: run only the matching endpoints),
 * BENCH_PROFILE=1 (runs both servers with --cpu-prof; .cpuprofile files written to bench/results/).
 *
 * Prints a markdown table and writes bench/results/users-latest.json. Exits non-zero on any error,
 * non-2xx response, or response mismatch between the two servers.
 */
const { createCipheriv, createHmac, hkdfSync, randomBytes } = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { isDeepStrictEqual } = require('node:util');
const bcrypt = require('bcryptjs');
const { Client } = require('pg');

const { createHarness, CLK_TCK } = require('./harness');

const ROOT = path.resolve(__dirname, '..');
const RESULTS_DIR = path.join(__dirname, 'results');
const USERS = Number(process.env.BENCH_USERS || 1000);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS || 32);
const DURATION = Number(process.env.BENCH_DURATION || 10);
const WARMUP = Number(process.env.BENCH_WARMUP || 3);
const POOL_SIZE = Number(process.env.DB_POOL_SIZE || 10);
const PROFILE = process.env.BENCH_PROFILE === '1';
const SECRET_KEY = 'bench-secret-key-0123456789abcdef0123456789abcdef';
const ROOT_PASSWORD = 'bench-root-password';
const EXTERNAL_URL = 'http://gitlab.bench.example';
const DB_NAME = `bench_${Date.now()}_${process.pid}`;

const ENDPOINTS = [
  { name: 'GET /api/v3/user', path: '/api/v3/user' },
  { name: 'GET /api/v3/users?per_page=100', path: '/api/v3/users?per_page=100' },
].filter((ep) => !process.env.BENCH_ONLY || ep.path.includes(process.env.BENCH_ONLY));

const h = createHarness('bench');
const { log, sleep } = h;

// ---------------------------------------------------------------------------------------------
// Processes, database and cleanup (bench/harness.js); the load generator and the monitor connection
// are stopped first, so that the servers stop at once.
let monitor; // the pg client that watches the bench database's backends
h.onCleanup(async () => {
  if (monitor) await monitor.end().catch(() => undefined);
  monitor = undefined;
});
const { freePort, startProcess, waitReady, cpuMs, cannon } = h;

/** Busy CPU time of the whole machine (all CPUs), in ms. */
function machineBusyMs() {
  try {
    const f = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal
    return ((f[0] + f[1] + f[2] + f[5] + f[6] + (f[7] || 0)) * 1000) / CLK_TCK;
  } catch {
    return 0;
  }
}

/** PIDs of the PostgreSQL backends connected to the bench database (the servers' pools), via one monitor connection. */
async function backendPids(dbUrl) {
  if (!monitor) {
    monitor = new Client({ connectionString: dbUrl });
    monitor.on('error', () => undefined); // the database goes away at cleanup
    await monitor.connect();
  }
  const { rows } = await monitor.query(
    'SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
  );
  return rows.map((r) => r.pid);
}

function profileArgs(name) {
  return PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${RESULTS_DIR}`, `--cpu-prof-name=${name}-${Date.now()}.cpuprofile`] : [];
}

function rssMb(pid) {
  try {
    const m = /VmRSS:\s+(\d+)\s+kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------------------------------------
/** 1,000 users (+ namespaces, an identity for every third one, a project for every fifth) in a few statements. */
async function seed(dbUrl) {
  const secret = Buffer.from(SECRET_KEY, 'utf8');
  const digestKey = Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), 'token-digest', 32));
  const encKey = Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), 'token-encryption', 32));
  const encrypt = (plain) => {
    const iv = randomBytes(12);
    const c = createCipheriv('aes-256-gcm', encKey, iv);
    const data = Buffer.concat([c.update(plain, 'utf8'), c.final()]);
    return ['v1', iv.toString('base64'), c.getAuthTag().toString('base64'), data.toString('base64')].join(':');
  };
  const passwordHash = bcrypt.hashSync('bench-user-password', 10);
  const cols = { username: [], email: [], name: [], digest: [], enc: [], bio: [], location: [] };
  for (let i = 1; i <= USERS; i++) {
    const token = randomBytes(15).toString('base64url');
    cols.username.push(`bench_user_${i}`);
    cols.email.push(`bench.user.${i}@example.com`);
    cols.name.push(`Bench User ${i}`);
    cols.digest.push(createHmac('sha256', digestKey).update(token, 'utf8').digest('hex'));
    cols.enc.push(encrypt(token));
    cols.bio.push(i % 2 ? `Bio of user ${i}` : null);
    cols.location.push(i % 3 ? null : 'Earth');
  }
  const db = new Client({ connectionString: dbUrl });
  await db.connect();
  try {
    await db.query('BEGIN');
    const { rows } = await db.query(
      `INSERT INTO users (username, email, name, encrypted_password, state, admin, projects_limit, can_create_group,
                          external, bio, location, skype, linkedin, twitter, website_url, theme_id, color_scheme_id,
                          two_factor_enabled, confirmed_at, sign_in_count, private_token_digest, private_token_encrypted)
       SELECT u.username, u.email, u.name, $1, 'active', false, 10, true, false, u.bio, u.location, '', '', '', '',
              2, 1, false, now(), 0, u.digest, u.enc
         FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[])
              AS u(username, email, name, digest, enc, bio, location)
       RETURNING id, username`,
      [passwordHash, cols.username, cols.email, cols.name, cols.digest, cols.enc, cols.bio, cols.location],
    );
    const ids = rows.map((r) => r.id);
    const names = rows.map((r) => r.username);
    await db.query(
      `INSERT INTO namespaces (name, path, kind, owner_id, description, visibility_level)
       SELECT n, n, 'user', id, '', 20 FROM unnest($1::int[], $2::text[]) AS t(id, n)`,
      [ids, names],
    );
    await db.query(
      `INSERT INTO identities (user_id, provider, extern_uid)
       SELECT id, 'ldapmain', 'uid=' || n || ',ou=people,dc=example,dc=com'
         FROM unnest($1::int[], $2::text[]) AS t(id, n) WHERE id % 3 = 0`,
      [ids, names],
    );
    // One personal project for every fifth user, and a limit of 1 for every tenth, so that
    // can_create_project (projects_limit > personal projects) varies across the page.
    const hasProjects = (await db.query(`SELECT to_regclass('public.projects') IS NOT NULL AS ok`)).rows[0].ok;
    if (hasProjects) {
      await db.query('SAVEPOINT projects');
      try {
        await db.query(
          `INSERT INTO projects (name, path, namespace_id, creator_id, runners_token_digest, runners_token_encrypted)
           SELECT 'bench-project', 'bench-project', n.id, n.owner_id, md5(n.id::text) || md5('p' || n.id), 'unused'
             FROM namespaces n WHERE n.kind = 'user' AND n.owner_id = ANY($1::int[]) AND n.owner_id % 5 = 0`,
          [ids],
        );
        await db.query('UPDATE users SET projects_limit = 1 WHERE id = ANY($1::int[]) AND id % 10 = 0', [ids]);
      } catch (e) {
        // The projects schema belongs to another area and may change: say so, keep benchmarking users.
        await db.query('ROLLBACK TO SAVEPOINT projects');
        log(`WARNING: could not seed projects (${e.message}); every can_create_project will be true`);
      }
    }
    await db.query('COMMIT');
    await db.query('ANALYZE');
    const counts = await db.query(
      `SELECT (SELECT count(*) FROM users)::int AS users, (SELECT count(*) FROM namespaces)::int AS namespaces,
              (SELECT count(*) FROM identities)::int AS identities` +
        (hasProjects ? ', (SELECT count(*) FROM projects)::int AS projects' : ''),
    );
    return counts.rows[0];
  } catch (e) {
    await db.query('ROLLBACK').catch(() => undefined);
    throw e;
  } finally {
    await db.end();
  }
}

// ---------------------------------------------------------------------------------------------
const PAGINATION_HEADERS = ['link', 'x-total', 'x-total-pages', 'x-per-page', 'x-page', 'x-next-page', 'x-prev-page'];

async function getJson(base, p, token) {
  const r = await fetch(base + p, { headers: { 'PRIVATE-TOKEN': token } });
  const text = await r.text();
  if (r.status !== 200) throw new Error(`GET ${base}${p}: ${r.status} ${text.slice(0, 300)}`);
  const headers = {};
  for (const name of PAGINATION_HEADERS) if (r.headers.has(name)) headers[name] = r.headers.get(name);
  return { body: JSON.parse(text), headers };
}

/** Both servers must answer each endpoint identically (body and pagination headers). */
async function checkSameResponses(appBase, bareBase, token) {
  for (const ep of ENDPOINTS) {
    const [a, b] = await Promise.all([getJson(appBase, ep.path, token), getJson(bareBase, ep.path, token)]);
    if (!isDeepStrictEqual(a, b)) {
      throw new Error(
        `${ep.name}: the baseline answers differently from the app\napp:  ${JSON.stringify(a).slice(0, 1500)}\n` +
          `bare: ${JSON.stringify(b).slice(0, 1500)}`,
      );
    }
    const n = Array.isArray(a.body) ? `${a.body.length} items, X-Total ${a.headers['x-total']}` : 'one object';
    log(`${ep.name}: app and baseline responses identical (${n})`);
  }
}

async function measure(server, ep, token, dbUrl) {
  const url = server.base + ep.path;
  const headers = { 'PRIVATE-TOKEN': token };
  if (WARMUP > 0) await cannon({ url, headers, connections: CONNECTIONS, duration: WARMUP });
  // PostgreSQL backends come and go (pg-pool closes idle clients): track each one from first to last sight.
  const pgCpu = new Map(); // pid -> { first, last }
  const samplePg = (pids) => {
    for (const pid of pids) {
      const ms = cpuMs(pid);
      if (!ms) continue;
      const e = pgCpu.get(pid);
      if (e) e.last = ms;
      else pgCpu.set(pid, { first: ms, last: ms });
    }
  };
  let pgPids = await backendPids(dbUrl);
  samplePg(pgPids);
  const cpu0 = { server: cpuMs(server.child.pid), self: process.cpuUsage(), machine: machineBusyMs() };
  let peak = rssMb(server.child.pid) ?? 0;
  let ticks = 0;
  const sampler = setInterval(() => {
    const v = rssMb(server.child.pid);
    if (v !== undefined && v > peak) peak = v;
    samplePg(pgPids);
    if (++ticks % 5 === 0) backendPids(dbUrl).then((p) => (pgPids = p), () => undefined);
  }, 200);
  let r;
  try {
    r = await cannon({ url, headers, connections: CONNECTIONS, duration: DURATION });
  } finally {
    clearInterval(sampler);
  }
  samplePg(pgPids);
  const serverCpu = cpuMs(server.child.pid) - cpu0.server;
  const pgCpuMs = [...pgCpu.values()].reduce((a, e) => a + e.last - e.first, 0);
  const selfCpu = process.cpuUsage(cpu0.self);
  const otherCpu = machineBusyMs() - cpu0.machine - serverCpu - pgCpuMs - (selfCpu.user + selfCpu.system) / 1000;
  const v = rssMb(server.child.pid);
  if (v !== undefined && v > peak) peak = v;
  const total = r.requests.total || 1;
  const res = {
    endpoint: ep.name,
    server: server.name,
    req_per_s: r.requests.average,
    requests_total: r.requests.total,
    duration_s: r.duration,
    latency_p50_ms: r.latency.p50,
    latency_p99_ms: r.latency.p99,
    latency_avg_ms: r.latency.average,
    non2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
    peak_rss_mb: Math.round(peak * 10) / 10,
    // CPU spent during the measured run: the server process, its pool's PostgreSQL backends, the load generator.
    server_cpu_ms_per_req: Math.round((serverCpu / total) * 1000) / 1000,
    server_cpu_percent: Math.round((serverCpu / (r.duration * 1000)) * 1000) / 10,
    postgres_cpu_ms_per_req: Math.round((pgCpuMs / total) * 1000) / 1000,
    postgres_cpu_percent: Math.round((pgCpuMs / (r.duration * 1000)) * 1000) / 10,
    loadgen_cpu_percent: Math.round(((selfCpu.user + selfCpu.system) / 1000 / (r.duration * 1000)) * 1000) / 10,
    // everything else the machine ran meanwhile (other processes, the other server idling, the kernel):
    // well above ~10%, req/s and latencies are skewed by work that is not this benchmark
    other_cpu_percent: Math.max(0, Math.round((otherCpu / (r.duration * 1000)) * 1000) / 10),
  };
  log(
    `${server.name.padEnd(4)} ${ep.name}: ${res.req_per_s.toFixed(1)} req/s, p50 ${res.latency_p50_ms} ms, ` +
      `p99 ${res.latency_p99_ms} ms, non-2xx ${res.non2xx}, errors ${res.errors}, RSS ${res.peak_rss_mb} MB, ` +
      `CPU server ${res.server_cpu_percent}% (${res.server_cpu_ms_per_req} ms/req), ` +
      `postgres ${res.postgres_cpu_percent}% (${res.postgres_cpu_ms_per_req} ms/req), load generator ${res.loadgen_cpu_percent}%, ` +
      `other ${res.other_cpu_percent}%`,
  );
  return res;
}

function table(results) {
  const lines = [
    '| endpoint | server | req/s | p50 ms | p99 ms | RSS MB |',
    '| --- | --- | ---: | ---: | ---: | ---: |',
  ];
  for (const r of results) {
    lines.push(
      `| ${r.endpoint} | ${r.server} | ${r.req_per_s.toFixed(1)} | ${r.latency_p50_ms} | ${r.latency_p99_ms} | ${r.peak_rss_mb.toFixed(1)} |`,
    );
  }
  lines.push('', '| endpoint | server | server CPU ms/req | server CPU % | postgres CPU ms/req | postgres CPU % | load gen CPU % | other CPU % |');
  lines.push('| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |');
  for (const r of results) {
    lines.push(
      `| ${r.endpoint} | ${r.server} | ${r.server_cpu_ms_per_req.toFixed(3)} | ${r.server_cpu_percent} | ` +
        `${r.postgres_cpu_ms_per_req.toFixed(3)} | ${r.postgres_cpu_percent} | ${r.loadgen_cpu_percent} | ${r.other_cpu_percent} |`,
    );
  }
  return lines.join('\n');
}

// ---------------------------------------------------------------------------------------------
async function main() {
  if (ENDPOINTS.length === 0) throw new Error(`BENCH_ONLY=${process.env.BENCH_ONLY} matches no endpoint`);
  const mainJs = path.resolve(ROOT, process.env.BENCH_APP_MAIN || 'dist/main.js');
  if (!fs.existsSync(mainJs)) throw new Error(`${mainJs} not found: run \`npm run build\` (npm run bench does)`);
  fs.mkdirSync(RESULTS_DIR, { recursive: true });
  const dataDir = h.tempDir('gitlab-bench-');
  const dbUrl = await h.createDatabase(DB_NAME);

  const [appPort, barePort] = [await freePort(), await freePort()];
  const appArgs = [...profileArgs('app'), mainJs];
  const app = {
    name: 'app',
    base: `http://127.0.0.1:${appPort}`,
    child: startProcess('app', appArgs, {
      DATABASE_URL: dbUrl,
      PORT: String(appPort),
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      SECRET_KEY,
      ROOT_PASSWORD,
      EXTERNAL_URL,
      LOG_LEVEL: 'error',
      DB_POOL_SIZE: String(POOL_SIZE),
      NODE_ENV: 'production',
    }),
  };
  await waitReady(app.child, app.base); // migrations ran, root exists
  log(`app ready on ${app.base} (pid ${app.child.pid})`);

  const signIn = await fetch(`${app.base}/api/v3/session`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ login: 'root', password: ROOT_PASSWORD }),
  });
  const session = await signIn.json();
  if (signIn.status !== 201 && signIn.status !== 200) throw new Error(`sign-in failed: ${signIn.status} ${JSON.stringify(session)}`);
  const token = session.private_token;
  if (!token || !session.is_admin) throw new Error('sign-in did not return an administrator private token');

  const t0 = Date.now();
  const counts = await seed(dbUrl);
  log(`seeded in ${Date.now() - t0} ms: ${JSON.stringify(counts)}`);

  const bare = {
    name: 'bare',
    base: `http://127.0.0.1:${barePort}`,
    child: startProcess('bare', [...profileArgs('bare'), path.join(__dirname, 'bare-server.js')], {
      DATABASE_URL: dbUrl,
      PORT: String(barePort),
      HOST: '127.0.0.1',
      SECRET_KEY,
      EXTERNAL_URL,
      DB_POOL_SIZE: String(POOL_SIZE),
      NODE_ENV: 'production',
    }),
  };
  await waitReady(bare.child, bare.base);
  log(`baseline ready on ${bare.base} (pid ${bare.child.pid})`);

  await checkSameResponses(app.base, bare.base, token);

  const results = [];
  for (const ep of ENDPOINTS) {
    for (const server of [app, bare]) {
      if (server.child.exitCode !== null) throw new Error(`${server.name} died:\n${server.child.tail()}`);
      results.push(await measure(server, ep, token, dbUrl));
    }
  }

  const ratios = ENDPOINTS.map((ep) => {
    const a = results.find((r) => r.endpoint === ep.name && r.server === 'app');
    const b = results.find((r) => r.endpoint === ep.name && r.server === 'bare');
    return { endpoint: ep.name, app_over_bare_req_per_s: Math.round((a.req_per_s / b.req_per_s) * 100) / 100 };
  });

  const out = [
    '',
    `Users API benchmark — ${USERS} seeded users, ${CONNECTIONS} connections, ${DURATION} s per run ` +
      `(after ${WARMUP} s warm-up), pool ${POOL_SIZE}, node ${process.version}, ${os.cpus().length} CPUs`,
    '',
    table(results),
    '',
    '| endpoint | app/bare req/s |',
    '| --- | ---: |',
    ...ratios.map((r) => `| ${r.endpoint} | ${r.app_over_bare_req_per_s.toFixed(2)} |`),
    '',
  ].join('\n');
  process.stdout.write(out + '\n');
  const busiest = Math.max(...results.map((r) => r.other_cpu_percent));
  if (busiest > 25) {
    process.stdout.write(
      `Note: other work used up to ${busiest}% CPU (of ${os.cpus().length * 100}%) during the runs: ` +
        'req/s and latencies are skewed by it; CPU ms/req is the steadier comparison.\n\n',
    );
  }

  const report = {
    date: new Date().toISOString(),
    node: process.version,
    cpus: os.cpus().length,
    cpu_model: os.cpus()[0]?.model,
    users_seeded: counts.users,
    seeded: counts,
    connections: CONNECTIONS,
    duration_s: DURATION,
    warmup_s: WARMUP,
    db_pool_size: POOL_SIZE,
    results,
    ratios,
  };
  fs.writeFileSync(path.join(RESULTS_DIR, 'users-latest.json'), JSON.stringify(report, null, 2) + '\n');
  log(`wrote ${path.relative(ROOT, path.join(RESULTS_DIR, 'users-latest.json'))}`);

  const bad = results.filter((r) => r.non2xx > 0 || r.errors > 0 || r.timeouts > 0 || r.requests_total === 0);
  if (bad.length) {
    throw new Error(
      `failed requests: ${bad.map((r) => `${r.server} ${r.endpoint} (non-2xx ${r.non2xx}, errors ${r.errors}, timeouts ${r.timeouts})`).join('; ')}`,
    );
  }
  for (const s of [app, bare]) s.child.stopping = true;
}

h.run(main);
