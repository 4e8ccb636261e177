'use strict';
/**
 * Git LFS (issue 39 item 3): a BENCH_LFS_MB megabyte object (1024: 1 GB, generated, never stored in
 * git) pushed and cloned with the stock git-lfs client over HTTP while the server's resident memory is
 * sampled every 50 ms; the same bytes sent and read through the LFS object endpoints and through a
 * plain Node HTTP file server (the reference: one `PUT` streamed to a file, one `GET` streamed from
 * it, same client), for the throughput ratio; then BENCH_LFS_CONCURRENT (50) concurrent downloads of
 * a BENCH_LFS_CONCURRENT_MB (32) megabyte object. Every body read is hashed and checked.
 *
 *   npm run bench:lfs            (builds first)
 *
 * Targets (the issue): server RSS ≤ 200 MB during the 1 GB push and clone, LFS throughput ≥ 0.8× the
 * plain transfer. Env: BENCH_LFS_MB, BENCH_LFS_CONCURRENT, BENCH_LFS_CONCURRENT_MB, BENCH_APP_MAIN.
 * Prints the figures and writes bench/results/lfs-latest.json; exits non-zero on a wrong byte.
 */
const { execFileSync, spawn } = require('node:child_process');
const { createHash } = require('node:crypto');
const fs = require('node:fs');
const http = require('node:http');
const path = require('node:path');
const { createHarness, rssMb, peakDuring, apiClient, rootToken } = require('./harness');

const ROOT = path.resolve(__dirname, '..');
const MB = Number(process.env.BENCH_LFS_MB || 1024);
const CONCURRENT = Number(process.env.BENCH_LFS_CONCURRENT || 50);
const CONCURRENT_MB = Number(process.env.BENCH_LFS_CONCURRENT_MB || 32);
const SECRET_KEY = 'bench-secret-key-0123456789abcdef0123456789abcdef';
const ROOT_PASSWORD = 'bench-root-password';
const DB_NAME = `bench_lfs_${Date.now()}_${process.pid}`;

const h = createHarness('bench:lfs');
const { log } = h;

/** Writes `size` bytes of generated, non-repeating content (seeded) to `file`; returns their SHA-256. */
async function writeGenerated(file, size, seed) {
  const block = Buffer.alloc(1 << 20);
  let x = 2654435761 ^ seed;
  for (let i = 0; i < block.length; i += 4) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    block.writeInt32LE(x | 0, i);
  }
  const hash = createHash('sha256');
  const out = fs.createWriteStream(file);
  for (let off = 0, n = 0; off < size; off += block.length, n++) {
    block.writeUInt32LE(n, 0);
    block.writeUInt32LE(seed, 4);
    const chunk = block.subarray(0, Math.min(block.length, size - off));
    hash.update(chunk);
    if (!out.write(chunk)) await new Promise((r) => out.once('drain', r));
  }
  await new Promise((r, j) => out.end((e) => (e ? j(e) : r())));
  return hash.digest('hex');
}

/** Streams `file` as the body of `method url`; resolves with the status. */
function sendFile(method, url, file, headers = {}) {
  return new Promise((resolve, reject) => {
    const size = fs.statSync(file).size;
    const req = http.request(url, { method, headers: { 'Content-Type': 'application/octet-stream', 'Content-Length': size, ...headers } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    });
    req.on('error', reject);
    fs.createReadStream(file).pipe(req);
  });
}

/** GETs `url`, hashing the body as it arrives; resolves with the status, the byte count and the SHA-256. */
function readHashed(url, headers = {}) {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers }, (res) => {
        const hash = createHash('sha256');
        let bytes = 0;
        res.on('data', (c) => {
          bytes += c.length;
          hash.update(c);
        });
        res.on('end', () => resolve({ status: res.statusCode, bytes, sha256: hash.digest('hex') }));
        res.on('error', reject);
      })
      .on('error', reject);
  });
}

/** The reference: a plain Node HTTP server that stores one PUT body in a file and serves it back. */
const PLAIN_SERVER = `
const http = require('node:http'); const fs = require('node:fs');
const file = process.argv[1];
http.createServer((req, res) => {
  if (req.method === 'PUT') { const out = fs.createWriteStream(file); req.pipe(out); out.on('finish', () => res.end()); return; }
  const size = fs.statSync(file).size;
  res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Content-Length': size });
  fs.createReadStream(file).pipe(res);
}).listen(Number(process.argv[2]), '127.0.0.1', () => console.log('ready'));
`;

function run(cmd, args, opts) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { ...opts, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr = (stderr + d).slice(-4000)));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`${cmd} ${args.join(' ')} failed (${code}): ${stderr}`))));
  });
}

h.run(async () => {
  const mainJs = path.resolve(ROOT, process.env.BENCH_APP_MAIN || 'dist/main.js');
  const dbUrl = await h.createDatabase(DB_NAME);
  const dataDir = h.tempDir('lfs-data-');
  const work = h.tempDir('lfs-work-');
  const port = await h.freePort();
  const { child: app, base } = await h.startApp(
    'app',
    [mainJs],
    {
      DATABASE_URL: dbUrl,
      SECRET_KEY,
      ROOT_PASSWORD,
      DATA_DIR: dataDir,
      NODE_ENV: 'production',
      EXTERNAL_URL: `http://127.0.0.1:${port}`,
      LFS_MAX_OBJECT_SIZE: String((MB + 1) * 1024 * 1024),
    },
    { port },
  );
  const token = await rootToken(base, ROOT_PASSWORD);
  const api = apiClient(base);
  const project = await api('POST', '/projects', { name: 'lfs-bench' }, token);
  const repo = `${base}/${project.path_with_namespace}`;
  const authorization = `Basic ${Buffer.from(`root:${token}`).toString('base64')}`;
  const size = MB * 1024 * 1024;

  const env = {
    PATH: process.env.PATH,
    HOME: work,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_TERMINAL_PROMPT: '0',
    GIT_AUTHOR_NAME: 'B',
    GIT_AUTHOR_EMAIL: 'b@example.com',
    GIT_COMMITTER_NAME: 'B',
    GIT_COMMITTER_EMAIL: 'b@example.com',
  };
  const git = (args, cwd) => run('git', ['-c', 'init.defaultBranch=master', '-c', 'credential.helper=', ...args], { cwd, env });
  execFileSync('git', ['lfs', 'install', '--skip-repo'], { env });

  // 1. the object, in a work tree tracked by git-lfs (hashing it into .git/lfs is the client's, before the timing)
  const tree = path.join(work, 'push');
  fs.mkdirSync(tree);
  await git(['init', '-q', tree], work);
  await git(['lfs', 'track', '*.bin'], tree);
  log(`writing a ${MB} MB object`);
  const big = path.join(tree, 'big.bin');
  const oid = await writeGenerated(big, size, 1);
  await git(['add', '.'], tree);
  await git(['commit', '-qm', 'big'], tree);
  const remote = `http://root:${encodeURIComponent(token)}@127.0.0.1:${port}/${project.path_with_namespace}.git`;
  await git(['remote', 'add', 'origin', remote], tree);

  const idle_rss_mb = Math.round(rssMb(app.pid));
  log(`git push with git-lfs (server RSS at rest: ${idle_rss_mb} MB)`);
  const push = await peakDuring(app.pid, () => git(['push', '-q', 'origin', 'master'], tree));
  log(`git clone with git-lfs`);
  const cloneDir = path.join(work, 'clone');
  const clone = await peakDuring(app.pid, () => git(['clone', '-q', remote, cloneDir], work));
  const cloned = createHash('sha256')
    .update(fs.readFileSync(path.join(cloneDir, 'big.bin')))
    .digest('hex');
  fs.rmSync(cloneDir, { recursive: true, force: true });

  // 2. the same bytes through the LFS object endpoints and through the plain server, one client
  log('raw LFS object upload and download');
  const raw = path.join(work, 'raw.bin');
  const rawOid = await writeGenerated(raw, size, 2);
  const lfsPut = await peakDuring(app.pid, () => sendFile('PUT', `${repo}.git/gitlab-lfs/objects/${rawOid}/${size}`, raw, { Authorization: authorization }));
  const lfsGet = await peakDuring(app.pid, () => readHashed(`${repo}.git/gitlab-lfs/objects/${rawOid}`, { Authorization: authorization }));
  log('plain HTTP reference');
  const plainPort = await h.freePort();
  const plainFile = path.join(work, 'plain-stored.bin');
  const plain = spawn(process.execPath, ['-e', PLAIN_SERVER, plainFile, String(plainPort)], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    await new Promise((r) => plain.stdout.once('data', r));
    const plainPut = await peakDuring(plain.pid, () => sendFile('PUT', `http://127.0.0.1:${plainPort}/f`, raw));
    const plainGet = await peakDuring(plain.pid, () => readHashed(`http://127.0.0.1:${plainPort}/f`));
    fs.rmSync(raw);
    fs.rmSync(plainFile, { force: true });

    // 3. concurrent downloads of a smaller object
    log(`${CONCURRENT} concurrent downloads of a ${CONCURRENT_MB} MB object`);
    const small = path.join(work, 'small.bin');
    const smallOid = await writeGenerated(small, CONCURRENT_MB * 1024 * 1024, 3);
    const smallPut = await sendFile('PUT', `${repo}.git/gitlab-lfs/objects/${smallOid}/${CONCURRENT_MB * 1024 * 1024}`, small, {
      Authorization: authorization,
    });
    const many = await peakDuring(app.pid, () =>
      Promise.all(Array.from({ length: CONCURRENT }, () => readHashed(`${repo}.git/gitlab-lfs/objects/${smallOid}`, { Authorization: authorization }))),
    );
    const manyOk = smallPut === 200 && many.result.every((r) => r.status === 200 && r.sha256 === smallOid);

    const rate = (mb, s) => Math.round(mb / s);
    const out = {
      object_mb: MB,
      server_idle_rss_mb: idle_rss_mb,
      git_lfs_push: {
        seconds: push.seconds,
        mb_per_second: rate(MB, push.seconds),
        server_peak_rss_mb: push.peak_rss_mb,
        server_peak_tree_rss_mb: push.peak_tree_rss_mb,
      },
      git_lfs_clone: { seconds: clone.seconds, mb_per_second: rate(MB, clone.seconds), server_peak_rss_mb: clone.peak_rss_mb, content_matches: cloned === oid },
      lfs_object_put: { status: lfsPut.result, seconds: lfsPut.seconds, mb_per_second: rate(MB, lfsPut.seconds), server_peak_rss_mb: lfsPut.peak_rss_mb },
      lfs_object_get: {
        status: lfsGet.result.status,
        seconds: lfsGet.seconds,
        mb_per_second: rate(MB, lfsGet.seconds),
        server_peak_rss_mb: lfsGet.peak_rss_mb,
        content_matches: lfsGet.result.sha256 === rawOid,
      },
      plain_put: { status: plainPut.result, seconds: plainPut.seconds, mb_per_second: rate(MB, plainPut.seconds), server_peak_rss_mb: plainPut.peak_rss_mb },
      plain_get: {
        status: plainGet.result.status,
        seconds: plainGet.seconds,
        mb_per_second: rate(MB, plainGet.seconds),
        content_matches: plainGet.result.sha256 === rawOid,
      },
      upload_vs_plain: Math.round((plainPut.seconds / lfsPut.seconds) * 100) / 100,
      download_vs_plain: Math.round((plainGet.seconds / lfsGet.seconds) * 100) / 100,
      concurrent_downloads: {
        count: CONCURRENT,
        object_mb: CONCURRENT_MB,
        all_ok: manyOk,
        seconds: many.seconds,
        total_mb_per_second: rate(CONCURRENT * CONCURRENT_MB, many.seconds),
        server_peak_rss_mb: many.peak_rss_mb,
      },
    };
    out.targets = {
      rss_le_200_mb: Math.max(push.peak_rss_mb, clone.peak_rss_mb, lfsPut.peak_rss_mb, lfsGet.peak_rss_mb) <= 200,
      throughput_ge_0_8_of_plain: out.upload_vs_plain >= 0.8 && out.download_vs_plain >= 0.8,
    };
    console.log(JSON.stringify(out, null, 2));
    fs.mkdirSync(path.join(ROOT, 'bench', 'results'), { recursive: true });
    fs.writeFileSync(path.join(ROOT, 'bench', 'results', 'lfs-latest.json'), JSON.stringify({ at: new Date().toISOString(), ...out }, null, 2) + '\n');
    const exact = cloned === oid && lfsPut.result === 200 && lfsGet.result.sha256 === rawOid && plainGet.result.sha256 === rawOid && manyOk;
    if (!exact) throw new Error('a transfer did not carry the bytes exactly');
  } finally {
    plain.kill();
  }
});
