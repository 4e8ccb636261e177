'use strict';
/**
 * Git transfers stream (issue "Fast and light at scale", goal 6): push and clone of a big repository
 * over smart HTTP while the server's resident memory is sampled, against a local `git clone`; and a
 * slow client (a clone whose reader stalls) during which no database connection of the server is
 * busy (pg_stat_activity: no `active` or `idle in transaction` backend of the app).
 *
 *   npm run bench:transfer            (builds first)
 *
 * Env: BENCH_GIT_MB (1024: size of the repository, incompressible), BENCH_PG_URL, BENCH_APP_MAIN.
 * Prints a table and writes bench/results/transfer-latest.json; exits non-zero when a transfer fails.
 */
const { spawn, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { Client } = require('pg');
const { createHarness, rssMb, peakDuring, apiClient, rootToken } = require('./harness');

const ROOT = path.resolve(__dirname, '..');
const MB = Number(process.env.BENCH_GIT_MB || 1024);
const SECRET_KEY = 'bench-secret-key-0123456789abcdef0123456789abcdef';
const ROOT_PASSWORD = 'bench-root-password';
const DB_NAME = `bench_transfer_${Date.now()}_${process.pid}`;

const h = createHarness('bench:transfer');
const { log, sleep } = h;

function git(args, opts = {}) {
  return new Promise((resolve, reject) => {
    const env = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: opts.home, GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C' };
    const c = spawn('git', args, { cwd: opts.cwd, env, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    c.stderr.on('data', (d) => (err = (err + d).slice(-2000)));
    c.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`git ${args[0]} exited ${code}: ${err}`))));
  });
}

h.run(async () => {
  const mainJs = path.resolve(ROOT, process.env.BENCH_APP_MAIN || 'dist/main.js');
  const dbUrl = await h.createDatabase(DB_NAME);
  const dataDir = h.tempDir('transfer-data-');
  const work = h.tempDir('transfer-work-');
  const home = path.join(work, 'home');
  fs.mkdirSync(home);
  const appEnv = { DATABASE_URL: dbUrl, SECRET_KEY, ROOT_PASSWORD, DATA_DIR: dataDir, NODE_ENV: 'production' };
  const { child: app, port, base } = await h.startApp('app', [mainJs], appEnv);
  const token = await rootToken(base, ROOT_PASSWORD);
  await apiClient(base)('POST', '/projects', { name: 'big' }, token);
  const remote = `http://root:${ROOT_PASSWORD}@127.0.0.1:${port}/root/big.git`;

  // a repository of MB megabytes of incompressible files (8 MB each)
  const src = path.join(work, 'src');
  execFileSync('git', ['init', '-q', '--initial-branch=master', src], { env: { ...process.env, HOME: home } });
  // as a client pushing large binaries: no delta search on them (it is client CPU, not the server's work)
  execFileSync('git', ['config', 'core.bigFileThreshold', '1m'], { cwd: src, env: { ...process.env, HOME: home } });
  const files = Math.max(1, Math.round(MB / 8));
  const chunk = Buffer.alloc(8 << 20);
  for (let i = 0; i < files; i++) {
    require('node:crypto').randomFillSync(chunk);
    fs.writeFileSync(path.join(src, `blob-${i}.bin`), chunk);
  }
  const gitEnv = {
    ...process.env,
    HOME: home,
    GIT_AUTHOR_NAME: 'b',
    GIT_AUTHOR_EMAIL: 'b@example.com',
    GIT_COMMITTER_NAME: 'b',
    GIT_COMMITTER_EMAIL: 'b@example.com',
  };
  execFileSync('git', ['-c', 'core.compression=0', 'add', '.'], { cwd: src, env: gitEnv });
  execFileSync('git', ['commit', '-q', '-m', 'big'], { cwd: src, env: gitEnv });
  log(`repository of ${files} × 8 MB files committed`);
  const idle = Math.round(rssMb(app.pid));

  const { result: _push, ...push } = await peakDuring(app.pid, () => git(['-c', 'pack.compression=0', 'push', '-q', remote, 'master'], { cwd: src, home }));
  log(`push: ${JSON.stringify(push)}`);
  const { result: _clone, ...clone } = await peakDuring(app.pid, () => git(['clone', '-q', '--bare', remote, path.join(work, 'clone.git')], { home }));
  log(`clone: ${JSON.stringify(clone)}`);
  const t0 = process.hrtime.bigint();
  await git(['clone', '-q', '--bare', '--no-local', src, path.join(work, 'local.git')], { home });
  const localSeconds = Math.round((Number(process.hrtime.bigint() - t0) / 1e9) * 100) / 100;

  // a slow client: upload-pack's answer is read 64 KB at a time with pauses; meanwhile count the
  // server's database backends that are busy (active or idle in transaction)
  const monitor = new Client({ connectionString: dbUrl });
  await monitor.connect();
  h.onCleanup(() => monitor.end().catch(() => undefined));
  const want = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: src, env: gitEnv }).toString().trim();
  const pkt = (s) => (s.length + 4).toString(16).padStart(4, '0') + s;
  const body = `${pkt(`want ${want} no-progress\n`)}0000${pkt('done\n')}`;
  const auth = `Basic ${Buffer.from(`root:${ROOT_PASSWORD}`).toString('base64')}`;
  let busyMax = 0;
  const busyQueries = new Set();
  let samples = 0;
  let received = 0;
  await new Promise((resolve, reject) => {
    const req = require('node:http').request(
      `${base}/root/big.git/git-upload-pack`,
      {
        method: 'POST',
        headers: { 'content-type': 'application/x-git-upload-pack-request', accept: 'application/x-git-upload-pack-result', authorization: auth },
      },
      (res) => {
        if (res.statusCode !== 200) return reject(new Error(`slow clone: ${res.statusCode}`));
        res.pause();
        let started = 0; // set when the first bytes arrive
        const deadline = Date.now() + 120_000;
        const step = async () => {
          const { rows } = await monitor.query(
            `SELECT state, left(regexp_replace(query, '\\s+', ' ', 'g'), 80) AS query FROM pg_stat_activity
            WHERE datname = current_database() AND pid <> pg_backend_pid() AND state IN ('active', 'idle in transaction')`,
          );
          busyMax = Math.max(busyMax, rows.length);
          for (const r of rows) busyQueries.add(`${r.state}: ${r.query}`); // what held one: a request or background work
          samples++;
          let c;
          let n = 0;
          while (n < 65536 && (c = res.read()) !== null) n += c.length;
          received += n;
          if (received > 0 && !started) started = Date.now();
          if ((started && Date.now() - started > 5000) || Date.now() > deadline) {
            res.destroy();
            return resolve();
          }
          setTimeout(() => step().catch(reject), 100);
        };
        res.on('error', () => undefined);
        step().catch(reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
  log(
    `slow client: ${samples} samples (reading stalled to 640 KB/s for 5 s), ${Math.round(received / 1024)} KB read, busy backends at most ${busyMax}${busyQueries.size ? ` (${[...busyQueries].join(' | ')})` : ''}`,
  );
  await sleep(500);

  const results = {
    size_mb: files * 8,
    idle_rss_mb: idle,
    push,
    clone,
    local_clone_seconds: localSeconds,
    clone_vs_local: Math.round((localSeconds / clone.seconds) * 100) / 100,
    slow_client: { seconds: 5, samples, kb_read: Math.round(received / 1024), busy_db_backends_max: busyMax, busy_queries: [...busyQueries] },
  };
  fs.mkdirSync(path.join(__dirname, 'results'), { recursive: true });
  fs.writeFileSync(path.join(__dirname, 'results', 'transfer-latest.json'), JSON.stringify(results, null, 2));
  process.stdout.write(
    [
      '',
      `| ${results.size_mb} MB repository | seconds | server peak RSS MB | with git children MB |`,
      '|---|---:|---:|---:|',
      `| push over HTTP | ${push.seconds} | ${push.peak_rss_mb} | ${push.peak_tree_rss_mb} |`,
      `| clone over HTTP | ${clone.seconds} | ${clone.peak_rss_mb} | ${clone.peak_tree_rss_mb} |`,
      `| local \`git clone --no-local\` | ${localSeconds} | — | — |`,
      '',
      `server idle RSS ${idle} MB; clone throughput ${results.clone_vs_local}× a local clone; slow client: busy database backends at most ${busyMax}`,
      '',
    ].join('\n'),
  );
});
