'use strict';
/**
 * Git over SSH (issue 24): the built-in server with the stock OpenSSH client, on PostgreSQL.
 *  - a clone of a BENCH_SSH_MB (10) MB repository over SSH, over HTTP and with a local
 *    `git clone --no-local`, as throughput ratios;
 *  - push and clone of a BENCH_SSH_BIG_MB (1024; 0 skips) MB repository over SSH while the server's
 *    resident memory is sampled (streams, no buffering);
 *  - BENCH_SSH_CONCURRENCY (50) concurrent SSH clones, all of which must succeed, and as many
 *    concurrent `ssh -T` connections: set-up (handshake + authentication + greeting) p50/p99.
 *
 *   npm run bench:ssh            (builds first)
 *
 * Prints a table and writes bench/results/ssh-latest.json; exits non-zero when a transfer fails.
 */
const { spawn, execFileSync } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { createHarness, rssMb, peakDuring, sshClient, apiClient } = require('./harness');

const ROOT = path.resolve(__dirname, '..');
const MB = Number(process.env.BENCH_SSH_MB || 10);
const BIG_MB = Number(process.env.BENCH_SSH_BIG_MB ?? 1024);
const N = Number(process.env.BENCH_SSH_CONCURRENCY || 50);
const SECRET_KEY = 'bench-secret-key-0123456789abcdef0123456789abcdef';
const ROOT_PASSWORD = 'bench-root-password';
const DB_NAME = `bench_ssh_${Date.now()}_${process.pid}`;

const h = createHarness('bench:ssh');
const { log } = h;

function run(cmd, args, opts = {}) {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const c = spawn(cmd, args, { cwd: opts.cwd, env: opts.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    c.stdout.on('data', (d) => (out = (out + d).slice(-2000)));
    c.stderr.on('data', (d) => (err = (err + d).slice(-2000)));
    c.on('exit', (code) => {
      const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
      code === 0 ? resolve({ seconds, out }) : reject(new Error(`${cmd} ${args.slice(-3).join(' ')} exited ${code}: ${err}`));
    });
  });
}

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
};
const r2 = (x) => Math.round(x * 100) / 100;

h.run(async () => {
  const mainJs = path.resolve(ROOT, process.env.BENCH_APP_MAIN || 'dist/main.js');
  const dbUrl = await h.createDatabase(DB_NAME);
  const sshPort = await h.freePort();
  const dataDir = h.tempDir('ssh-data-');
  const work = h.tempDir('ssh-work-');
  const home = path.join(work, 'home');
  fs.mkdirSync(home);
  const appEnv = {
    DATABASE_URL: dbUrl,
    SECRET_KEY,
    ROOT_PASSWORD,
    DATA_DIR: dataDir,
    NODE_ENV: 'production',
    SSH_PORT: String(sshPort),
    SSH_LISTEN: '127.0.0.1',
    SSH_MAX_SESSIONS_PER_IP: String(N + 10),
    GIT_AUTH_BAN_IP_WHITELIST: '127.0.0.1',
  };
  const { child: app, port, base } = await h.startApp('app', [mainJs], appEnv);
  const api = apiClient(base);
  const s = await api('POST', '/session', { login: 'root', password: ROOT_PASSWORD });
  const token = s.private_token;
  const { sshArgs, gitSshCommand } = await sshClient({ api, token, sshPort, work });
  const env = {
    ...process.env,
    HOME: home,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_SSH_COMMAND: gitSshCommand,
    GIT_AUTHOR_NAME: 'b',
    GIT_AUTHOR_EMAIL: 'b@example.com',
    GIT_COMMITTER_NAME: 'b',
    GIT_COMMITTER_EMAIL: 'b@example.com',
  };
  const sshUrl = (p) => `ssh://git@127.0.0.1:${sshPort}/root/${p}.git`;
  const httpUrl = (p) => `http://root:${ROOT_PASSWORD}@127.0.0.1:${port}/root/${p}.git`;

  /** A repository of `mb` megabytes of incompressible files (8 MB each, or one smaller). */
  const makeRepo = (name, mb) => {
    const src = path.join(work, name);
    execFileSync('git', ['init', '-q', '--initial-branch=master', src], { env });
    execFileSync('git', ['config', 'core.bigFileThreshold', '1m'], { cwd: src, env });
    const files = Math.max(1, Math.ceil(mb / 8));
    for (let i = 0; i < files; i++) fs.writeFileSync(path.join(src, `blob-${i}.bin`), crypto.randomBytes(Math.min(8, mb - i * 8) << 20));
    execFileSync('git', ['-c', 'core.compression=0', 'add', '.'], { cwd: src, env });
    execFileSync('git', ['commit', '-q', '-m', name], { cwd: src, env });
    return src;
  };

  // 1. throughput: a MB repository cloned over SSH, over HTTP and locally (best of 3 each)
  await api('POST', '/projects', { name: 'small' }, token);
  const small = makeRepo('small-src', MB);
  await run('git', ['-c', 'pack.compression=0', 'push', '-q', sshUrl('small'), 'master'], { cwd: small, env });
  const best = async (f) => {
    let b = Infinity;
    for (let i = 0; i < 3; i++) b = Math.min(b, (await f(i)).seconds);
    return b;
  };
  const sshClone = await best((i) => run('git', ['clone', '-q', '--bare', sshUrl('small'), path.join(work, `s-ssh-${i}.git`)], { env }));
  const httpClone = await best((i) => run('git', ['clone', '-q', '--bare', httpUrl('small'), path.join(work, `s-http-${i}.git`)], { env }));
  const localClone = await best((i) => run('git', ['clone', '-q', '--bare', '--no-local', small, path.join(work, `s-local-${i}.git`)], { env }));
  log(`${MB} MB clone: ssh ${r2(sshClone)} s, http ${r2(httpClone)} s, local ${r2(localClone)} s`);

  // 2. concurrency: N concurrent clones (all must succeed) and N concurrent connection set-ups
  const clones = await Promise.all(
    Array.from({ length: N }, (_, i) => run('git', ['clone', '-q', '--bare', sshUrl('small'), path.join(work, `c-${i}.git`)], { env })),
  );
  const setups = await Promise.all(Array.from({ length: N }, () => run('ssh', [...sshArgs, '-T', 'git@127.0.0.1'], { env })));
  const setupMs = setups.map((x) => x.seconds * 1000);
  const cloneS = clones.map((x) => x.seconds);
  log(
    `${N} concurrent clones ok (p50 ${r2(pct(cloneS, 50))} s, max ${r2(Math.max(...cloneS))} s); set-up p50 ${Math.round(pct(setupMs, 50))} ms, p99 ${Math.round(pct(setupMs, 99))} ms`,
  );
  const single = [];
  for (let i = 0; i < 20; i++) single.push((await run('ssh', [...sshArgs, '-T', 'git@127.0.0.1'], { env })).seconds * 1000);

  // 3. memory: a BIG_MB repository pushed and cloned over SSH
  let big = null;
  if (BIG_MB > 0) {
    await api('POST', '/projects', { name: 'big' }, token);
    const bigSrc = makeRepo('big-src', BIG_MB);
    const idle = Math.round(rssMb(app.pid));
    const { result: _push, ...push } = await peakDuring(app.pid, () =>
      run('git', ['-c', 'pack.compression=0', 'push', '-q', sshUrl('big'), 'master'], { cwd: bigSrc, env }),
    );
    const { result: _clone, ...clone } = await peakDuring(app.pid, () =>
      run('git', ['clone', '-q', '--bare', sshUrl('big'), path.join(work, 'big-clone.git')], { env }),
    );
    big = { size_mb: BIG_MB, idle_rss_mb: idle, push, clone };
    log(`${BIG_MB} MB: push ${JSON.stringify(push)}, clone ${JSON.stringify(clone)}`);
  }

  const results = {
    clone_mb: MB,
    clone_seconds: { ssh: r2(sshClone), http: r2(httpClone), local: r2(localClone) },
    ssh_vs_local: r2(localClone / sshClone),
    http_vs_local: r2(localClone / httpClone),
    concurrent: {
      clients: N,
      clones_ok: clones.length,
      clone_p50_s: r2(pct(cloneS, 50)),
      clone_max_s: r2(Math.max(...cloneS)),
      setup_p50_ms: Math.round(pct(setupMs, 50)),
      setup_p99_ms: Math.round(pct(setupMs, 99)),
    },
    sequential_setup_ms: { p50: Math.round(pct(single, 50)), p99: Math.round(pct(single, 99)) },
    big,
  };
  fs.mkdirSync(path.join(__dirname, 'results'), { recursive: true });
  fs.writeFileSync(path.join(__dirname, 'results', 'ssh-latest.json'), JSON.stringify(results, null, 2));
  process.stdout.write(
    [
      '',
      `| ${MB} MB clone | seconds (best of 3) | × local clone |`,
      '|---|---:|---:|',
      `| over SSH | ${results.clone_seconds.ssh} | ${results.ssh_vs_local} |`,
      `| over HTTP | ${results.clone_seconds.http} | ${results.http_vs_local} |`,
      `| local \`git clone --no-local\` | ${results.clone_seconds.local} | 1 |`,
      '',
      `${N} concurrent SSH clones: ${clones.length}/${N} succeeded, p50 ${results.concurrent.clone_p50_s} s, slowest ${results.concurrent.clone_max_s} s`,
      `connection set-up (handshake + auth + greeting): ${N} at once p50 ${results.concurrent.setup_p50_ms} ms, p99 ${results.concurrent.setup_p99_ms} ms; one at a time p50 ${results.sequential_setup_ms.p50} ms, p99 ${results.sequential_setup_ms.p99} ms`,
      big
        ? `${BIG_MB} MB over SSH: push ${big.push.seconds} s, server peak RSS ${big.push.peak_rss_mb} MB (with git children ${big.push.peak_tree_rss_mb}); clone ${big.clone.seconds} s, peak RSS ${big.clone.peak_rss_mb} MB (with git ${big.clone.peak_tree_rss_mb}); idle ${big.idle_rss_mb} MB`
        : '',
      '',
    ].join('\n'),
  );
});
