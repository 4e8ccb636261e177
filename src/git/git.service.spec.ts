import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import type { AppConfig } from '../config/config';
import { GitService } from './git.service';
import { parseNewRefName, parseRepoPath, Sha } from './names';
import { packObjectsCacheDir } from './receive-hooks';

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/** GitService.archive against a real repository: streamed from git once, then from the cache. */
describe('GitService.archive', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'glv3-git-service-spec-'));
  const git = new GitService({ dataDir, gitTransfers: { maxRunning: 4, maxQueued: 16, queueTimeoutMs: 30_000 } } as AppConfig);
  let sha: Sha;

  beforeAll(async () => {
    await git.create(1);
    const files = Array.from({ length: 200 }, (_, i) => ({
      action: 'create' as const,
      path: parseRepoPath(`dir/file-${i}.txt`)!,
      content: randomBytes(20_000),
    }));
    sha = await git.repository(1).commitFiles({
      branch: parseNewRefName('master')!,
      parent: null,
      message: 'files',
      author: { name: 'T', email: 't@example.com' },
      changes: files,
    });
  });
  afterAll(() => {
    git.onModuleDestroy();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const cacheDir = () => join(dataDir, 'archive-cache', '1');

  it('streams from git first (no length), then the cached file with its length and the same bytes', async () => {
    const first = await git.archive(1, sha, 'tar', { prefix: 'p/', label: 'master' });
    expect(first.length).toBeUndefined();
    const a = await readAll(first.stream);
    expect(a.includes('p/dir/file-0.txt')).toBe(true);
    await new Promise((r) => setTimeout(r, 50));
    const second = await git.archive(1, sha, 'tar', { prefix: 'p/', label: 'master' });
    expect(second.length).toBe(a.length);
    expect((await readAll(second.stream)).equals(a)).toBe(true);
    expect(readdirSync(cacheDir()).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('a reader that goes away stops git and leaves no cache file behind', async () => {
    const { stream } = await git.archive(1, sha, 'zip', { prefix: 'z/', label: 'other/label' });
    await new Promise<void>((resolve) => stream.once('data', () => resolve()));
    stream.destroy();
    await new Promise((r) => setTimeout(r, 300));
    const files = readdirSync(cacheDir());
    expect(files.filter((f) => f.endsWith('.zip') || f.endsWith('.tmp'))).toEqual([]);
    expect(existsSync(join(cacheDir(), `${sha}-other-label.zip`))).toBe(false);
  });

  it('pruning removes archives older than the limit and stale temporary files, then empty folders', async () => {
    await readAll((await git.archive(1, sha, 'tar', { prefix: 'p/', label: 'master' })).stream);
    const tar = join(cacheDir(), `${sha}-master.tar`);
    const tmp = join(cacheDir(), 'x.tmp');
    writeFileSync(tmp, 'partial');
    const now = Date.now();
    expect(await git.pruneArchiveCache(3600_000, now)).toBe(0); // both young: kept
    expect(await git.pruneArchiveCache(24 * 3600_000, now + 2 * 3600_000)).toBe(1); // the temporary file, older than an hour
    expect(existsSync(tmp)).toBe(false);
    expect(existsSync(tar)).toBe(true);
    expect(await git.pruneArchiveCache(24 * 3600_000, now + 25 * 3600_000)).toBe(1);
    expect(existsSync(cacheDir())).toBe(false);
  });

  it("pruning the pack-objects cache: packs after their age, a killed fetch's partial pack and lock folder after 10 minutes", async () => {
    const dir = packObjectsCacheDir(dataDir);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'k1.pack'), 'PACK');
    writeFileSync(join(dir, '.k2.1234'), 'partial');
    mkdirSync(join(dir, '.k2.lock'));
    writeFileSync(join(dir, '.k2.lock', 'pid'), '1234\n');
    const now = Date.now();
    expect(await git.prunePackCache(5 * 60_000, now)).toBe(0);
    expect(await git.prunePackCache(5 * 60_000, now + 6 * 60_000)).toBe(1); // the pack
    expect(readdirSync(dir).sort()).toEqual(['.k2.1234', '.k2.lock']);
    expect(await git.prunePackCache(5 * 60_000, now + 11 * 60_000)).toBe(2);
    expect(readdirSync(dir)).toEqual([]);
  });
});
