'use strict';
/**
 * Webhook benchmark: the built app (dist/main.js) on PostgreSQL.
 *
 *   npm run bench:hooks          (builds first)
 *
 * 1. Push latency: BENCH_PUSHES pushes (one new commit each) to a project with no hooks, and as many to
 *    a project with 10 hooks pointing at a slow receiver (2 s per request); the push must not wait for
 *    deliveries (they are queue jobs), so the ratio of the medians should be ≈ 1.
 * 2. Delivery throughput: 10 hooks to a fast receiver on one project, BENCH_ISSUES issues created
 *    (10 deliveries each); deliveries per second from the first request to the last delivery received.
 *
 * Env: BENCH_DATABASE_URL (a throw-away database: its `public` and `pgboss` schemas are dropped), else a
 * new database is created under BENCH_PG_URL and dropped at the end; BENCH_PUSHES (5), BENCH_ISSUES (50).
 */
const { execFile } = require('node:child_process');
const fs = require('node:fs');
const http = require('node:http');
const path = require('node:path');
const { createHarness, rootToken } = require('./harness');

const h = createHarness('bench:hooks');
const { log, sleep } = h;
const PUSHES = Number(process.env.BENCH_PUSHES || 5);
const ISSUES = Number(process.env.BENCH_ISSUES || 50);
const ROOT_PASSWORD = 'bench-root-password';

function git(args, cwd) {
  return new Promise((resolve, reject) =>
    execFile(
      'git',
      ['-c', 'user.name=Bench', '-c', 'user.email=bench@example.com', '-c', 'init.defaultBranch=master', ...args],
      { cwd, env: { PATH: process.env.PATH, HOME: cwd, GIT_TERMINAL_PROMPT: '0', GIT_CONFIG_NOSYSTEM: '1' } },
      (e, out, err) => (e ? reject(new Error(`git ${args.join(' ')}: ${err}`)) : resolve(out)),
    ),
  );
}

function receiver(delayMs) {
  const state = { count: 0, last: 0 };
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () =>
      setTimeout(() => {
        state.count++;
        state.last = Date.now();
        res.end('ok');
      }, delayMs),
    );
  });
  return new Promise((r) => server.listen(0, '127.0.0.1', () => r({ server, state, port: server.address().port })));
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

h.run(async () => {
  const dbUrl = await h.benchDatabase('bench_hooks');
  const data = h.tempDir('bench-hooks-');
  const { port, base } = await h.startApp('app', ['dist/main.js'], {
    DATABASE_URL: dbUrl,
    DATA_DIR: data,
    ROOT_PASSWORD,
    SECRET_KEY: 'bench-secret-key-0123456789abcdef0123456789abcdef',
    QUEUE_POLL_SECONDS: '0.5',
  });
  const call = async (method, p, body) => {
    const r = await fetch(`${base}/api/v3${p}`, {
      method,
      headers: { 'PRIVATE-TOKEN': token, 'Content-Type': 'application/json' },
      body: body && JSON.stringify(body),
    });
    if (r.status >= 300) throw new Error(`${method} ${p}: ${r.status} ${await r.text()}`);
    return r.json();
  };
  let token;
  token = await rootToken(base, ROOT_PASSWORD);
  await call('PUT', '/application/settings', { allow_local_requests_from_hooks_and_services: true });
  const slow = await receiver(2000);
  const fast = await receiver(0);
  h.onCleanup(() => {
    slow.server.close();
    fast.server.close();
  });

  // 1. push latency, with and without 10 slow hooks
  const plain = await call('POST', '/projects', { name: 'plain' });
  const hooked = await call('POST', '/projects', { name: 'hooked' });
  for (let i = 0; i < 10; i++) await call('POST', `/projects/${hooked.id}/hooks`, { url: `http://127.0.0.1:${slow.port}/h${i}` });
  const times = {};
  for (const p of [plain, hooked]) {
    const work = h.tempDir('bench-hooks-work-');
    await git(['init', '-q', '.'], work);
    const url = `http://root:${encodeURIComponent(ROOT_PASSWORD)}@127.0.0.1:${port}/${p.path_with_namespace}.git`;
    times[p.name] = [];
    for (let i = 0; i <= PUSHES; i++) {
      fs.writeFileSync(path.join(work, 'f.txt'), `change ${i}\n`);
      await git(['add', '-A'], work);
      await git(['commit', '-q', '-m', `c${i}`], work);
      const t0 = process.hrtime.bigint();
      await git(['push', '-q', url, 'master'], work);
      if (i > 0) times[p.name].push(Number(process.hrtime.bigint() - t0) / 1e6); // first push (repository set-up) not counted
    }
  }
  const mPlain = median(times.plain);
  const mHooked = median(times.hooked);
  log(`push median: no hooks ${mPlain.toFixed(0)} ms, 10 slow hooks ${mHooked.toFixed(0)} ms, ratio ${(mHooked / mPlain).toFixed(2)}`);

  // 2. throughput to a fast receiver
  const tp = await call('POST', '/projects', { name: 'throughput' });
  for (let i = 0; i < 10; i++)
    await call('POST', `/projects/${tp.id}/hooks`, { url: `http://127.0.0.1:${fast.port}/t${i}`, push_events: false, issues_events: true });
  const t0 = Date.now();
  await Promise.all(Array.from({ length: ISSUES }, (_, i) => call('POST', `/projects/${tp.id}/issues`, { title: `issue ${i}` })));
  const want = ISSUES * 10;
  const deadline = Date.now() + 300_000;
  while (fast.state.count < want && Date.now() < deadline) await sleep(50);
  const secs = (fast.state.last - t0) / 1000;
  log(`throughput: ${fast.state.count}/${want} deliveries in ${secs.toFixed(2)} s = ${(fast.state.count / secs).toFixed(1)} deliveries/s`);
  const result = {
    pushMedianMsNoHooks: mPlain,
    pushMedianMs10SlowHooks: mHooked,
    ratio: mHooked / mPlain,
    deliveries: fast.state.count,
    seconds: secs,
    perSecond: fast.state.count / secs,
  };
  fs.mkdirSync(path.join(__dirname, 'results'), { recursive: true });
  fs.writeFileSync(path.join(__dirname, 'results', 'hooks-latest.json'), JSON.stringify(result, null, 2) + '\n');
  process.stdout.write(JSON.stringify(result) + '\n');
  if (fast.state.count < want) throw new Error('not every delivery arrived');
});
