'use strict';
/**
 * Memory of a raw read of a large blob (issue 28, item 2): a blob of BENCH_BLOB_MB megabytes (1024:
 * 1 GB, over the 256 MB the shared cat-file reader holds in memory) is written into a project's
 * repository with git (generated, never stored), then read once through
 * `GET /projects/:id/repository/raw_blobs/:sha` while the server's resident memory is sampled
 * every 50 ms. The body is hashed as it arrives and checked against the blob.
 *
 *   npm run bench:blob            (builds first)
 *
 * Env: BENCH_BLOB_MB (1024), BENCH_PG_URL, BENCH_APP_MAIN.
 * Prints the figures and writes bench/results/large-blob-latest.json; exits non-zero on a wrong read.
 */
const { execFileSync } = require('node:child_process');
const { createHash } = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { createHarness, rssMb, peakDuring, apiClient, rootToken } = require('./harness');

const ROOT = path.resolve(__dirname, '..');
const MB = Number(process.env.BENCH_BLOB_MB || 1024);
const SECRET_KEY = 'bench-secret-key-0123456789abcdef0123456789abcdef';
const ROOT_PASSWORD = 'bench-root-password';
const DB_NAME = `bench_blob_${Date.now()}_${process.pid}`;

const h = createHarness('bench:blob');
const { log } = h;

/** Writes `size` bytes of generated, non-repeating content to `file`; returns their SHA-1. */
async function writeGenerated(file, size) {
  const block = Buffer.alloc(1 << 20);
  let x = 2654435761;
  for (let i = 0; i < block.length; i += 4) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    block.writeInt32LE(x | 0, i);
  }
  const hash = createHash('sha1');
  const out = fs.createWriteStream(file);
  for (let off = 0, n = 0; off < size; off += block.length, n++) {
    block.writeUInt32LE(n, 0);
    const chunk = block.subarray(0, Math.min(block.length, size - off));
    hash.update(chunk);
    if (!out.write(chunk)) await new Promise((r) => out.once('drain', r));
  }
  await new Promise((r, j) => out.end((e) => (e ? j(e) : r())));
  return hash.digest('hex');
}

h.run(async () => {
  const mainJs = path.resolve(ROOT, process.env.BENCH_APP_MAIN || 'dist/main.js');
  const dbUrl = await h.createDatabase(DB_NAME);
  const dataDir = h.tempDir('blob-data-');
  const work = h.tempDir('blob-work-');
  const { child: app, base } = await h.startApp('app', [mainJs], {
    DATABASE_URL: dbUrl,
    SECRET_KEY,
    ROOT_PASSWORD,
    DATA_DIR: dataDir,
    NODE_ENV: 'production',
  });
  const token = await rootToken(base, ROOT_PASSWORD);
  const project = await apiClient(base)('POST', '/projects', { name: 'big' }, token);

  // the project's repository on disk (GitService.repositoryPath: hashed by project id)
  const hid = createHash('sha256').update(String(project.id)).digest('hex');
  const gitDir = path.join(dataDir, 'repositories', '@hashed', hid.slice(0, 2), hid.slice(2, 4), `${hid}.git`);
  const env = {
    PATH: process.env.PATH,
    GIT_DIR: gitDir,
    GIT_CONFIG_NOSYSTEM: '1',
    HOME: work,
    GIT_AUTHOR_NAME: 'B',
    GIT_AUTHOR_EMAIL: 'b@example.com',
    GIT_COMMITTER_NAME: 'B',
    GIT_COMMITTER_EMAIL: 'b@example.com',
  };
  const git = (args, input) => execFileSync('git', args, { env, input }).toString().trim();
  const size = MB * 1024 * 1024;
  const file = path.join(work, 'big.bin');
  log(`writing a ${MB} MB blob`);
  const expected = await writeGenerated(file, size);
  const sha = git(['-c', 'core.bigFileThreshold=1m', '-c', 'core.compression=0', 'hash-object', '-w', '--', file]);
  fs.rmSync(file);
  const tree = git(['mktree'], `100644 blob ${sha}\tbig.bin\n`);
  git(['update-ref', 'refs/heads/master', git(['commit-tree', tree, '-m', 'big'])]);

  const idle_rss_mb = Math.round(rssMb(app.pid));
  log(`reading it raw (server RSS at rest: ${idle_rss_mb} MB)`);
  const read = await peakDuring(app.pid, async () => {
    const res = await fetch(`${base}/api/v3/projects/${project.id}/repository/raw_blobs/${sha}`, { headers: { 'PRIVATE-TOKEN': token } });
    const hash = createHash('sha1');
    let bytes = 0;
    for await (const chunk of res.body) {
      bytes += chunk.length;
      hash.update(chunk);
    }
    return { status: res.status, length: res.headers.get('content-length'), bytes, sha1: hash.digest('hex') };
  });
  const { result } = read;
  const ok = result.status === 200 && result.bytes === size && result.length === String(size) && result.sha1 === expected;
  const out = {
    blob_mb: MB,
    status: result.status,
    content_length: Number(result.length),
    bytes_read: result.bytes,
    sha1_matches: result.sha1 === expected,
    seconds: read.seconds,
    mb_per_second: Math.round(MB / read.seconds),
    server_idle_rss_mb: idle_rss_mb,
    server_peak_rss_mb: read.peak_rss_mb,
    server_peak_tree_rss_mb: read.peak_tree_rss_mb,
  };
  console.log(JSON.stringify(out, null, 2));
  fs.mkdirSync(path.join(ROOT, 'bench', 'results'), { recursive: true });
  fs.writeFileSync(path.join(ROOT, 'bench', 'results', 'large-blob-latest.json'), JSON.stringify({ at: new Date().toISOString(), ...out }, null, 2) + '\n');
  if (!ok) throw new Error('the raw read did not return the blob exactly');
});
