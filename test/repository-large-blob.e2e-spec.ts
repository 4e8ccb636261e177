import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createWriteStream, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '../src/config/config';
import { GitService } from '../src/git/git.service';
import { RepoPath, Sha } from '../src/git/names';
import { MAX_OBJECT_BYTES, ObjectTooLarge } from '../src/git/repository';
import { startTestApp, TestApp, TestUser } from './helpers/test-app';

const API = '/api/v3';
const JSON_LIMIT = 1024 * 1024;
/** Over the 256 MB the shared cat-file process reads into memory. */
const BIG = 300 * 1024 * 1024;
const MEDIUM = 2 * 1024 * 1024;
const SMALL = 512 * 1024;

/**
 * Writes `size` deterministic, non-repeating bytes to `file` (generated, never stored in the test)
 * and returns their SHA-1.
 */
async function writeGenerated(file: string, size: number, seed: number, text = false): Promise<string> {
  const block = Buffer.alloc(1024 * 1024);
  let x = seed * 2654435761 || 1;
  for (let i = 0; i < block.length; i += 4) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    block.writeInt32LE(x | 0, i);
  }
  // text: lines of 63 letters (git diffs it as text unless it is over core.bigFileThreshold)
  if (text) for (let i = 0; i < block.length; i++) block[i] = i % 64 === 63 ? 10 : 97 + (block[i] % 26);
  const hash = createHash('sha1');
  const out = createWriteStream(file);
  for (let off = 0, n = 0; off < size; off += block.length, n++) {
    if (text)
      block.write(String(n % 10_000_000).padStart(7, '0'), 0, 'latin1'); // every block differs
    else block.writeUInt32LE(n, 0);
    const chunk = block.subarray(0, Math.min(block.length, size - off));
    hash.update(chunk);
    if (!out.write(chunk)) await new Promise<void>((r) => out.once('drain', () => r()));
  }
  await new Promise<void>((resolve, reject) => out.end((e?: Error | null) => (e ? reject(e) : resolve())));
  return hash.digest('hex');
}

/** Streams a GET and hashes the body as it arrives (never holding it): status, headers, byte count, SHA-1. */
function streamGet(port: number, path: string, token: string): Promise<{ status: number; headers: Record<string, unknown>; bytes: number; sha1: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, headers: { 'PRIVATE-TOKEN': token } }, (res) => {
      const hash = createHash('sha1');
      let bytes = 0;
      res.on('data', (d: Buffer) => {
        bytes += d.length;
        hash.update(d);
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, bytes, sha1: hash.digest('hex') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * Blobs of any size: raw routes stream them (exact bytes, Content-Length from the object, constant
 * memory), the JSON files API answers 413 above FILES_API_JSON_MAX_BYTES, and nothing reads a blob
 * over the cat-file limit into memory (which used to kill the shared cat-file process: 500).
 */
describe('repository: large blobs', () => {
  let t: TestApp;
  let port: number;
  let alice: TestUser;
  let tmp: string;
  let R: string;
  let projectId: number;
  const blobs: Record<string, { sha: string; sha1: string; size: number }> = {};
  let commit: string;
  let textCommit: string;

  beforeAll(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'glv3-large-blob-'));
    t = await startTestApp({ FILES_API_JSON_MAX_BYTES: String(JSON_LIMIT) });
    await t.app.app.listen(0, '127.0.0.1');
    port = (t.app.app.getHttpServer().address() as AddressInfo).port;
    alice = await t.createUser({ username: 'alice' });
    const project = (await t.http.post(`${API}/projects`).set('PRIVATE-TOKEN', alice.token).send({ name: 'big' }).expect(201)).body;
    projectId = project.id;
    R = `${API}/projects/${projectId}/repository`;
    const gitDir = t.app.app.get(GitService).repositoryPath(projectId);
    const git = (args: string[], input?: string) =>
      execFileSync('git', args, { env: { PATH: process.env.PATH, GIT_DIR: gitDir, GIT_CONFIG_NOSYSTEM: '1', HOME: tmp }, input })
        .toString()
        .trim();
    const entries: string[] = [];
    for (const [name, size, seed] of [
      ['big.bin', BIG, 1],
      ['medium.bin', MEDIUM, 2],
      ['small.bin', SMALL, 3],
    ] as const) {
      const file = join(tmp, name);
      const sha1 = await writeGenerated(file, size, seed);
      // a file over core.bigFileThreshold is streamed into a pack (no copy of it in git's memory); stored, not deflated, to stay fast
      const sha = git(['-c', 'core.bigFileThreshold=1m', '-c', 'core.compression=0', 'hash-object', '-w', '--', file]);
      rmSync(file);
      blobs[name] = { sha, sha1, size };
      entries.push(`100644 blob ${sha}\t${name}`);
    }
    const tree = git(['mktree'], entries.join('\n') + '\n');
    const who = { GIT_AUTHOR_NAME: 'A', GIT_AUTHOR_EMAIL: 'a@example.com', GIT_COMMITTER_NAME: 'A', GIT_COMMITTER_EMAIL: 'a@example.com' };
    commit = execFileSync('git', ['commit-tree', tree, '-m', 'large files'], {
      env: { PATH: process.env.PATH, GIT_DIR: gitDir, GIT_CONFIG_NOSYSTEM: '1', HOME: tmp, ...who },
    })
      .toString()
      .trim();
    git(['update-ref', 'refs/heads/master', commit]);
    // branch `text`: a commit adding a text file over 256 MB (its patch alone is over git-runner's output limit)
    const textFile = join(tmp, 'big.txt');
    await writeGenerated(textFile, BIG, 4, true);
    const textSha = git(['-c', 'core.bigFileThreshold=1m', '-c', 'core.compression=0', 'hash-object', '-w', '--', textFile]);
    rmSync(textFile);
    const textTree = git(['mktree'], [...entries, `100644 blob ${textSha}\tbig.txt`].join('\n') + '\n');
    textCommit = execFileSync('git', ['commit-tree', textTree, '-p', commit, '-m', 'a large text file'], {
      env: { PATH: process.env.PATH, GIT_DIR: gitDir, GIT_CONFIG_NOSYSTEM: '1', HOME: tmp, ...who },
    })
      .toString()
      .trim();
    git(['update-ref', 'refs/heads/text', textCommit]);
  }, 120_000);

  afterAll(async () => {
    await t?.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  it('the big blob is over the in-memory read limit', () => {
    expect(BIG).toBeGreaterThan(MAX_OBJECT_BYTES);
  });

  it('GET raw_blobs/:sha streams a blob over 256 MB: exact bytes, Content-Length from the object', async () => {
    const b = blobs['big.bin'];
    const res = await streamGet(port, `${R}/raw_blobs/${b.sha}`, alice.token);
    expect(res.status).toBe(200);
    expect(res.headers['content-length']).toBe(String(BIG));
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.bytes).toBe(BIG);
    expect(res.sha1).toBe(b.sha1);
  }, 60_000);

  it('GET blobs/:ref?filepath= streams it too (by branch and by commit)', async () => {
    const b = blobs['big.bin'];
    const byBranch = await streamGet(port, `${R}/blobs/master?filepath=big.bin`, alice.token);
    expect([byBranch.status, byBranch.headers['content-length'], byBranch.bytes, byBranch.sha1]).toEqual([200, String(BIG), BIG, b.sha1]);
    const small = await streamGet(port, `${R}/commits/${commit}/blob?filepath=small.bin`, alice.token);
    expect([small.status, small.headers['content-length'], small.bytes, small.sha1]).toEqual([200, String(SMALL), SMALL, blobs['small.bin'].sha1]);
  }, 60_000);

  it('GET files answers 413 above the JSON limit, pointing at the raw route', async () => {
    for (const name of ['big.bin', 'medium.bin']) {
      const b = blobs[name];
      const res = await t.http.get(`${R}/files?file_path=${name}&ref=master`).set('PRIVATE-TOKEN', alice.token);
      expect(res.status).toBe(413);
      expect(res.body).toEqual({
        message: `413 File too large to return as JSON (${b.size} bytes, limit ${JSON_LIMIT}); read it raw from GET /api/v3/projects/${projectId}/repository/raw_blobs/${b.sha}`,
      });
    }
  });

  it('GET files still returns a file under the limit as base64 JSON', async () => {
    const res = await t.http.get(`${R}/files?file_path=small.bin&ref=master`).set('PRIVATE-TOKEN', alice.token).expect(200);
    expect(res.body).toMatchObject({ file_name: 'small.bin', size: SMALL, encoding: 'base64', blob_id: blobs['small.bin'].sha, commit_id: commit });
    expect(createHash('sha1').update(Buffer.from(res.body.content, 'base64')).digest('hex')).toBe(blobs['small.bin'].sha1);
  });

  it('the JSON limit is FILES_API_JSON_MAX_BYTES, 50 MB by default, checked at boot', () => {
    const base = { DATA_DIR: join(tmp, 'cfg'), SECRET_KEY: 'x'.repeat(32) };
    expect(loadConfig(base).filesApiJsonMaxBytes).toBe(50 * 1024 * 1024);
    expect(loadConfig({ ...base, FILES_API_JSON_MAX_BYTES: '1048576' }).filesApiJsonMaxBytes).toBe(JSON_LIMIT);
    expect(() => loadConfig({ ...base, FILES_API_JSON_MAX_BYTES: '10MB' })).toThrow(ConfigError);
  });

  it('a client that goes away mid-stream stops git', async () => {
    const b = blobs['big.bin'];
    const pattern = `cat-file blob ${b.sha}`;
    const running = () => {
      try {
        return execFileSync('pgrep', ['-f', pattern]).toString().trim().split('\n').filter(Boolean).length;
      } catch {
        return 0;
      }
    };
    await new Promise<void>((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port, path: `${R}/raw_blobs/${b.sha}`, headers: { 'PRIVATE-TOKEN': alice.token } }, (res) => {
        expect(res.statusCode).toBe(200);
        let got = 0;
        res.on('data', (d: Buffer) => {
          got += d.length;
          if (got > 1024 * 1024 && !req.destroyed) {
            res.pause();
            expect(running()).toBe(1); // the stream is open: git is still there
            // and git streams too (it would inflate the whole 300 MB blob into its memory by default)
            const pid = execFileSync('pgrep', ['-f', pattern]).toString().trim();
            const rss = Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
            expect(rss).toBeLessThan(100 * 1024);
            req.destroy();
            resolve();
          }
        });
      });
      req.on('error', (e) => (req.destroyed ? undefined : reject(e)));
      req.end();
    });
    for (let i = 0; i < 50 && running() > 0; i++) await new Promise((r) => setTimeout(r, 100));
    expect(running()).toBe(0);
  });

  it('the shared cat-file reader refuses an object over its limit without buffering it, and keeps serving', async () => {
    const repo = t.app.app.get(GitService).repository(projectId);
    await expect(repo.blob(blobs['big.bin'].sha as Sha)).rejects.toBeInstanceOf(ObjectTooLarge);
    const small = await repo.blob(blobs['small.bin'].sha as Sha);
    expect(
      createHash('sha1')
        .update(small as Buffer)
        .digest('hex'),
    ).toBe(blobs['small.bin'].sha1);
    expect((await repo.blobInfoAt(commit as Sha, 'big.bin' as RepoPath))?.size).toBe(BIG);
  }, 60_000);

  it('a diff with a text file over 256 MB answers 200: the file is too_large, not diffed (GET commits/:sha/diff, compare)', async () => {
    const diff = await t.http.get(`${R}/commits/${textCommit}/diff`).set('PRIVATE-TOKEN', alice.token).expect(200);
    expect(diff.body).toEqual([expect.objectContaining({ new_path: 'big.txt', new_file: true, diff: '', too_large: true })]);
    const cmp = await t.http.get(`${R}/compare?from=master&to=text`).set('PRIVATE-TOKEN', alice.token).expect(200);
    expect(cmp.body.diffs).toEqual([expect.objectContaining({ new_path: 'big.txt', diff: '', too_large: true })]);
    // a real binary file stays an ordinary binary diff
    const first = await t.http.get(`${R}/commits/${commit}/diff`).set('PRIVATE-TOKEN', alice.token).expect(200);
    const small = first.body.find((d: { new_path: string }) => d.new_path === 'small.bin');
    expect(small).toMatchObject({ too_large: false, diff: expect.stringMatching(/^Binary files/) });
  }, 60_000);

  it('the files API writes next to a blob over the read limit, and deletes it (no read of its content)', async () => {
    const as = (req: ReturnType<typeof t.http.put>) => req.set('PRIVATE-TOKEN', alice.token);
    await as(t.http.put(`${R}/files`))
      .send({ file_path: 'small.bin', branch_name: 'master', content: 'now small', commit_message: 'edit small' })
      .expect(200);
    await as(t.http.delete(`${R}/files`))
      .send({ file_path: 'big.bin', branch_name: 'master', commit_message: 'drop big' })
      .expect(200);
    const tree = await t.http.get(`${R}/tree`).set('PRIVATE-TOKEN', alice.token).expect(200);
    expect(tree.body.map((e: { name: string }) => e.name).sort()).toEqual(['medium.bin', 'small.bin']);
    // the shared reader is still there for ordinary reads
    const raw = await t.http.get(`${R}/blobs/master?filepath=small.bin`).set('PRIVATE-TOKEN', alice.token).expect(200);
    expect(raw.text).toBe('now small');
  }, 60_000);
});
