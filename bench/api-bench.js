'use strict';
/**
 * What the HTTP API benchmarks with a bare baseline (bench/users.bench.js, bench/lists.bench.js)
 * share: both servers must answer alike (body and pagination headers) before anything is measured;
 * each endpoint is then loaded by autocannon with the same connections for the same time, while the
 * server's CPU, its PostgreSQL backends' CPU, the load generator's and the rest of the machine's are
 * sampled, with the server's peak RSS; and the markdown tables of the results.
 *
 * Env read here: BENCH_CONNECTIONS (32), BENCH_DURATION or BENCH_SECONDS (10 s per run),
 * BENCH_WARMUP (3 s), BENCH_PROFILE=1 (--cpu-prof for both servers, profiles in bench/results/).
 */
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { isDeepStrictEqual } = require('node:util');
const { Client } = require('pg');
const { CLK_TCK } = require('./harness');

const RESULTS_DIR = path.join(__dirname, 'results');
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS || 32);
const DURATION = Number(process.env.BENCH_DURATION || process.env.BENCH_SECONDS || 10);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 3);
const PROFILE = process.env.BENCH_PROFILE === '1';

/** The measuring helpers bound to a harness (bench/harness.js): its log, load generator and cleanup. */
function createApiBench(h) {
  const { log, cpuMs, cannon } = h;
  let monitor; // the pg client that watches the bench database's backends
  h.onCleanup(async () => {
    if (monitor) await monitor.end().catch(() => undefined);
    monitor = undefined;
  });

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
    const { rows } = await monitor.query('SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()');
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
  const PAGINATION_HEADERS = ['link', 'x-total', 'x-total-pages', 'x-per-page', 'x-page', 'x-next-page', 'x-prev-page'];

  async function getJson(base, p, token) {
    const r = await fetch(base + p, { headers: { 'PRIVATE-TOKEN': token } });
    const text = await r.text();
    if (r.status !== 200) throw new Error(`GET ${base}${p}: ${r.status} ${text.slice(0, 300)}`);
    const headers = {};
    for (const name of PAGINATION_HEADERS) if (r.headers.has(name)) headers[name] = r.headers.get(name);
    return { body: JSON.parse(text), headers };
  }

  /** Where two parsed answers first differ (a path like `body[3].author.name`), for the error message. */
  function firstDifference(a, b, at = '') {
    if (isDeepStrictEqual(a, b)) return undefined;
    if (a && b && typeof a === 'object' && typeof b === 'object' && Array.isArray(a) === Array.isArray(b)) {
      const keys = Array.isArray(a) ? [...Array(Math.max(a.length, b.length)).keys()] : [...new Set([...Object.keys(a), ...Object.keys(b)])];
      if (!Array.isArray(a) && Object.keys(a).join() !== Object.keys(b).join() && Object.keys(a).length === Object.keys(b).length) {
        return `${at}: keys in another order: app ${Object.keys(a).join(',')} / bare ${Object.keys(b).join(',')}`;
      }
      for (const k of keys) {
        const d = firstDifference(a[k], b[k], Array.isArray(a) ? `${at}[${k}]` : `${at}.${k}`);
        if (d) return d;
      }
    }
    return `${at}: app ${JSON.stringify(a)?.slice(0, 300)} / bare ${JSON.stringify(b)?.slice(0, 300)}`;
  }

  /**
   * Both servers must answer each endpoint identically (body, key order included, and pagination
   * headers). `ep.token` when set, else `token`, authenticates.
   */
  async function checkSameResponses(appBase, bareBase, endpoints, token) {
    for (const ep of endpoints) {
      const t = ep.token ?? token;
      const [a, b] = await Promise.all([getJson(appBase, ep.path, t), getJson(bareBase, ep.path, t)]);
      const d = firstDifference(a, b);
      if (d) throw new Error(`${ep.name}: the baseline answers differently from the app at ${d}`);
      const n = Array.isArray(a.body) ? `${a.body.length} items, X-Total ${a.headers['x-total']}` : 'one object';
      log(`${ep.name}: app and baseline responses identical (${n})`);
    }
  }

  async function measure(server, ep, token, dbUrl) {
    const url = server.base + ep.path;
    const headers = { 'PRIVATE-TOKEN': ep.token ?? token, ...ep.headers };
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
      if (++ticks % 5 === 0)
        backendPids(dbUrl).then(
          (p) => (pgPids = p),
          () => undefined,
        );
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
    const lines = ['| endpoint | server | req/s | p50 ms | p99 ms | RSS MB |', '| --- | --- | ---: | ---: | ---: | ---: |'];
    for (const r of results) {
      lines.push(`| ${r.endpoint} | ${r.server} | ${r.req_per_s.toFixed(1)} | ${r.latency_p50_ms} | ${r.latency_p99_ms} | ${r.peak_rss_mb.toFixed(1)} |`);
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

  /**
   * Measures every endpoint on the app and on the bare handler, prints the table and the app/bare
   * ratios under `title`, writes `file` (with `extra` fields) in bench/results, and fails on any
   * failed request.
   */
  async function runAndReport({ app, bare, endpoints, token, dbUrl, title, file, extra = {} }) {
    const results = [];
    for (const ep of endpoints) {
      for (const server of [app, bare]) {
        if (server.child.exitCode !== null) throw new Error(`${server.name} died:\n${server.child.tail()}`);
        results.push(await measure(server, ep, token, dbUrl));
      }
    }
    const ratios = endpoints.map((ep) => {
      const a = results.find((r) => r.endpoint === ep.name && r.server === 'app');
      const b = results.find((r) => r.endpoint === ep.name && r.server === 'bare');
      return { endpoint: ep.name, app_over_bare_req_per_s: Math.round((a.req_per_s / b.req_per_s) * 100) / 100 };
    });
    const out = [
      '',
      title,
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
      ...extra,
      connections: CONNECTIONS,
      duration_s: DURATION,
      warmup_s: WARMUP,
      results,
      ratios,
    };
    fs.writeFileSync(path.join(RESULTS_DIR, file), JSON.stringify(report, null, 2) + '\n');
    h.log(`wrote bench/results/${file}`);
    const bad = results.filter((r) => r.non2xx > 0 || r.errors > 0 || r.timeouts > 0 || r.requests_total === 0);
    if (bad.length) {
      throw new Error(
        `failed requests: ${bad.map((r) => `${r.server} ${r.endpoint} (non-2xx ${r.non2xx}, errors ${r.errors}, timeouts ${r.timeouts})`).join('; ')}`,
      );
    }
    for (const s of [app, bare]) s.child.stopping = true;
  }

  /** Starts the bare baseline `script` (in bench/) on a free port with `env`, and waits for it. */
  /** The app under measurement: `node [profile] <mainJs>` in production mode with `env`, once ready. */
  async function startMeasuredApp(mainJs, env) {
    const app = await h.startApp('app', [...profileArgs('app'), mainJs], { NODE_ENV: 'production', ...env });
    h.log(`app ready on ${app.base} (pid ${app.child.pid})`);
    return app;
  }

  async function startBare(script, env) {
    const port = await h.freePort();
    const bare = {
      name: 'bare',
      base: `http://127.0.0.1:${port}`,
      child: h.startProcess('bare', [...profileArgs('bare'), path.join(__dirname, script)], {
        PORT: String(port),
        HOST: '127.0.0.1',
        NODE_ENV: 'production',
        ...env,
      }),
    };
    await h.waitReady(bare.child, bare.base);
    h.log(`baseline ready on ${bare.base} (pid ${bare.child.pid})`);
    return bare;
  }

  return {
    CONNECTIONS,
    DURATION,
    WARMUP,
    PROFILE,
    RESULTS_DIR,
    profileArgs,
    getJson,
    checkSameResponses,
    measure,
    table,
    runAndReport,
    startMeasuredApp,
    startBare,
  };
}

module.exports = { createApiBench };
