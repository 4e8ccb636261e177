import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, existsSync } from 'node:fs';
import { mkdir, readdir, rename, rm, rmdir, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { Inject, Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import type { Request, Response } from 'express';
import { CheckedUrl } from '../common/net/outbound-url';
import { APP_CONFIG, AppConfig } from '../config/config';
import { CatFilePool } from './cat-file-pool';
import { GitRunner } from './git-runner';
import { installHooks, packObjectsCacheDir, PushRules } from './receive-hooks';
import { branchRef, parseNewRefName, Sha } from './names';
import { ArchiveFormat, RefCache, Repository } from './repository';
import { hasContentType, RefUpdate, serveSmartHttp, SmartHttpAction } from './smart-http';
import { readSmartHttpRequest, SmartHttpBody } from './smart-http-request';
import { serveGitSsh, SshGitExchange } from './ssh-transport';
import { TransferLimiter } from './transfer-limiter';

/**
 * Which repository of a project a transfer serves: its own (a bare project id) or its wiki's
 * (`<namespace>/<project>.wiki.git`, stored beside it as `<hash>.wiki.git`, as GitLab's hashed storage).
 */
export type RepositoryKey = number | { projectId: number; wiki: true };

/** An archive ready to stream: from the cache (with its length) or straight from `git archive`. */
export interface ArchiveStream {
  stream: Readable;
  length?: number;
}

/** One smart HTTP exchange, already authorised by the caller. */
export interface SmartHttpExchange {
  req: Request;
  res: Response;
  action: SmartHttpAction;
  remoteUser: string;
  /** Whom the transfer is for, the key of the transfer limit's fair shares (`transferClient`). */
  client: string;
  /** Given for pushes (receive-pack is refused without them). */
  pushRules?: PushRules;
  /** Runs once the refs moved; the lines it answers are shown to the pusher (`remote: …`). */
  onUpdates?: (updates: RefUpdate[]) => Promise<string[] | void>;
  /** The POST's request, read first (`readSmartHttpRequest`). */
  body?: SmartHttpBody;
}

/**
 * Repositories on disk. Storage is addressed by project id (`@hashed/ab/cd/<sha256(id)>.git`, as
 * GitLab 10+ does), so renaming or transferring a project never moves files: the rename is one
 * database update and cannot leave a half-moved repository behind.
 */
@Injectable()
export class GitService implements OnModuleInit, OnModuleDestroy {
  readonly runner: GitRunner;
  readonly root: string;
  private readonly pool: CatFilePool;
  /** This instance's snapshots of branch and tag refs, checked against the disk on every read. */
  private readonly refCache = new RefCache();
  /** The cap on transfer processes (smart HTTP and SSH) of this instance. */
  private readonly transfers: TransferLimiter;
  private readonly archiveCache: string;
  private hooksPath = '';

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {
    this.root = join(config.dataDir, 'repositories');
    this.runner = new GitRunner(join(config.dataDir, 'git-home'), { spawnBroker: config.gitSpawnBroker });
    this.pool = new CatFilePool(this.runner.environment);
    this.transfers = new TransferLimiter(config.gitTransfers);
    this.archiveCache = join(config.dataDir, 'archive-cache');
  }

  onModuleInit(): void {
    this.hooksPath = installHooks(this.config.dataDir);
  }

  onModuleDestroy(): void {
    this.pool.closeAll();
  }

  /**
   * Serves one smart HTTP request of a project's repository as `git http-backend` would, streaming
   * both ways (architecture rule 10); the caller has authorised it. Returns the applied ref updates.
   */
  serveSmartHttp(repo: RepositoryKey, x: SmartHttpExchange): Promise<RefUpdate[]> {
    if (!this.hooksPath) this.hooksPath = installHooks(this.config.dataDir);
    return serveSmartHttp(this.runner, this.transfers, {
      ...x,
      gitDir: this.gitDirOf(repo),
      hooksPath: this.hooksPath,
      requestTimeoutMs: this.config.gitHttpRequestTimeoutMs,
    });
  }

  /**
   * Reads a smart HTTP POST's request (an upload-pack request whole, a push's list of ref updates),
   * bounded in size and time, before any lock or transfer slot is taken (src/git/smart-http-request.ts);
   * hand it to `serveSmartHttp` as `body`. Undefined for the ref advertisement and for a POST of the
   * wrong content type (`serveSmartHttp` answers it). Throws `GitRequestRefused` (400, 408, 413) or
   * `GitRequestAborted`.
   */
  readSmartHttpRequest(req: Request, action: SmartHttpAction): Promise<SmartHttpBody | undefined> {
    if (action === 'info/refs') return Promise.resolve(undefined);
    const service = action === 'git-upload-pack' ? 'upload-pack' : 'receive-pack';
    if (!hasContentType(req, service)) return Promise.resolve(undefined);
    return readSmartHttpRequest(req, service, { timeoutMs: this.config.gitHttpRequestTimeoutMs });
  }

  /**
   * Runs one git service for an SSH channel of a project's repository (src/ssh), streaming both ways;
   * the caller has authorised it. Resolves to git's exit code once a push's reactions have run.
   */
  serveSsh(repo: RepositoryKey, x: Omit<SshGitExchange, 'gitDir' | 'hooksPath'>): Promise<number> {
    if (!this.hooksPath) this.hooksPath = installHooks(this.config.dataDir);
    return serveGitSsh(this.runner, this.transfers, { ...x, gitDir: this.gitDirOf(repo), hooksPath: this.hooksPath });
  }

  /**
   * `git archive` of `sha`, cached per project, commit and name: the first request streams from git
   * while writing the cache file (kept only when git succeeds); later ones stream the file. A reader
   * that goes away stops git.
   */
  async archive(projectId: number, sha: Sha, format: ArchiveFormat, o: { prefix: string; label: string }): Promise<ArchiveStream> {
    const dir = join(this.archiveCache, String(projectId));
    const label = o.label.replace(/[^A-Za-z0-9._-]+/g, '-');
    const cached = join(dir, `${sha}-${label}.${format}`);
    if (existsSync(cached)) {
      const size = (await stat(cached).catch(() => null))?.size;
      if (size !== undefined) return { stream: createReadStream(cached), length: size };
    }
    await mkdir(dir, { recursive: true });
    const tmp = `${cached}.${process.pid}.${Date.now()}.tmp`;
    const file = createWriteStream(tmp);
    const child = this.repository(projectId).archive(sha, format, o.prefix);
    const out = new PassThrough();
    out.on('error', () => undefined);
    child.stdout.on('data', (d: Buffer) => {
      file.write(d);
      if (out.destroyed) return;
      if (!out.write(d)) {
        child.stdout.pause();
        out.once('drain', () => child.stdout.resume());
      }
    });
    out.on('close', () => {
      if (child.exitCode === null) child.kill('SIGKILL');
    });
    child.on('close', (code) => {
      file.end(() => {
        if (code === 0) void rename(tmp, cached).catch(() => rm(tmp, { force: true }));
        else void rm(tmp, { force: true });
        out.end();
      });
    });
    return { stream: out };
  }

  /** The repository of a project, for reads and ref updates. */
  repository(projectId: number): Repository {
    return new Repository(this.repositoryPath(projectId), this.runner, this.pool, this.refCache);
  }

  repositoryPath(projectId: number): string {
    const h = createHash('sha256').update(String(projectId)).digest('hex');
    return join(this.root, '@hashed', h.slice(0, 2), h.slice(2, 4), `${h}.git`);
  }

  exists(projectId: number): boolean {
    return existsSync(join(this.repositoryPath(projectId), 'HEAD'));
  }

  /** The wiki's repository of a project (`<hash>.wiki.git` beside `<hash>.git`: in backups with it, removed with it). */
  wikiPath(projectId: number): string {
    return this.repositoryPath(projectId).replace(/\.git$/, '.wiki.git');
  }

  private gitDirOf(repo: RepositoryKey): string {
    return typeof repo === 'number' ? this.repositoryPath(repo) : this.wikiPath(repo.projectId);
  }

  wikiExists(projectId: number): boolean {
    return existsSync(join(this.wikiPath(projectId), 'HEAD'));
  }

  /**
   * The wiki's repository, created empty on its first use (a fetch or a push), as GitLab 8.17's
   * ProjectWiki#wiki did (`create_repo!`): a fetch of a wiki nobody pushed to answers an empty repository.
   * The initial branch is `master`, where 8.17's Gollum wrote its pages.
   */
  async ensureWiki(projectId: number): Promise<void> {
    if (this.wikiExists(projectId)) return;
    const path = this.wikiPath(projectId);
    const tmp = `${path}.init-${process.pid}-${Date.now()}`;
    await mkdir(dirname(path), { recursive: true });
    try {
      await this.runner.run(['init', '--bare', '--quiet', '--initial-branch=master', tmp]);
      // two first uses at once: the one that renames second finds the repository there and keeps it
      await rename(tmp, path).catch((e: unknown) => {
        if (!this.wikiExists(projectId)) throw e; // not a lost race: a real failure
      });
    } finally {
      await rm(tmp, { recursive: true, force: true });
    }
  }

  /** An empty bare repository whose HEAD points at `master`. */
  async create(projectId: number): Promise<void> {
    const path = this.repositoryPath(projectId);
    await rm(path, { recursive: true, force: true });
    await mkdir(dirname(path), { recursive: true });
    await this.runner.run(['init', '--bare', '--quiet', '--initial-branch=master', path]);
  }

  /** Removes a project's repository and its wiki's. */
  async remove(projectId: number): Promise<void> {
    this.pool.forget(this.repositoryPath(projectId));
    this.pool.forget(this.wikiPath(projectId));
    await rm(this.repositoryPath(projectId), { recursive: true, force: true });
    await rm(this.wikiPath(projectId), { recursive: true, force: true });
  }

  /** Copies a repository for a fork (objects hard-linked, refs copied, no remote left behind). */
  async fork(sourceId: number, targetId: number): Promise<void> {
    const target = this.repositoryPath(targetId);
    await rm(target, { recursive: true, force: true });
    await mkdir(dirname(target), { recursive: true });
    await this.runner.run(['clone', '--bare', '--quiet', '--local', '--', this.repositoryPath(sourceId), target], {
      timeoutMs: 10 * 60_000,
    });
    await this.runner.run(['remote', 'remove', 'origin'], { gitDir: target, okCodes: [2] });
  }

  /**
   * Clones `checked` (already vetted by checkOutboundUrl) into the project's repository: http(s) only,
   * no redirects, the connection pinned to the vetted address, into a temporary folder first.
   */
  async importFrom(projectId: number, checked: CheckedUrl, timeoutMs = 10 * 60_000): Promise<void> {
    const target = this.repositoryPath(projectId);
    const tmp = `${target}.import-${process.pid}-${Date.now()}`;
    await mkdir(dirname(target), { recursive: true });
    const pinned = checked.address.includes(':') ? `[${checked.address}]` : checked.address;
    try {
      await this.runner.run(
        [
          '-c',
          'protocol.allow=never',
          '-c',
          'protocol.http.allow=always',
          '-c',
          'protocol.https.allow=always',
          '-c',
          'http.followRedirects=false',
          '-c',
          `http.curloptResolve=${checked.host}:${checked.port}:${pinned}`,
          'clone',
          '--bare',
          '--quiet',
          '--no-local',
          '--',
          checked.url.toString(),
          tmp,
        ],
        { timeoutMs },
      );
      await this.runner.run(['remote', 'remove', 'origin'], { gitDir: tmp, okCodes: [2] });
      await rm(target, { recursive: true, force: true });
      await rename(tmp, target);
    } finally {
      await rm(tmp, { recursive: true, force: true });
    }
  }

  /**
   * Housekeeping after a push, in the background: a full repack with a reachability bitmap when the
   * repository has none (clones and fetches then reuse the pack instead of recomputing it); else a
   * geometric repack of the packs pushes added and of the loose objects (what the app itself wrote:
   * commits of the files API, merges), as every clone would otherwise deflate them again; the refs
   * packed into one file (`pack-refs`: pushed branches arrive as a file each); and a fresh
   * commit-graph with changed-path filters (history walks such as commit counts and path-limited logs
   * get several times faster). One run per repository at a time; a failure only costs speed.
   */
  async housekeeping(projectId: number): Promise<void> {
    const dir = this.repositoryPath(projectId);
    if (this.maintaining.has(dir)) return;
    this.maintaining.add(dir);
    try {
      const packs = await readdir(join(dir, 'objects', 'pack')).catch(() => [] as string[]);
      const hasBitmap = packs.some((f) => f.endsWith('.bitmap'));
      const packCount = packs.filter((f) => f.endsWith('.pack')).length;
      const loose = await this.looseObjects(dir);
      if (!hasBitmap && (packCount > 0 || loose > 0)) {
        await this.runner.run(['repack', '-a', '-d', '-q', '--write-bitmap-index'], { gitDir: dir, timeoutMs: 30 * 60_000 });
      } else if (loose > 0 || packCount > 1) {
        // Geometric: the small packs (one per push) and the loose objects are rolled into one, and a
        // pack is rewritten only once the packs after it have grown to half its size, so the cost
        // follows what was pushed, not the repository's size. A full repack of the reference load's
        // 100,000-commit repository costs 12 s of CPU; at one run a minute under 4 pushes/s, 20 %
        // of a core (issue 27). When the roll-up reaches the bitmapped pack, the next run finds no
        // bitmap and writes one with a full repack.
        await this.runner.run(['repack', '--geometric=2', '-d', '-q'], { gitDir: dir, timeoutMs: 30 * 60_000 });
      }
      // one packed-refs file rather than a file per branch (every push of a new branch adds one):
      // each advertisement and ref listing reads them all
      await this.runner.run(['pack-refs', '--all'], { gitDir: dir, timeoutMs: 10 * 60_000 });
      await this.runner.run(['commit-graph', 'write', '--reachable', '--changed-paths', '--split'], {
        gitDir: dir,
        timeoutMs: 10 * 60_000,
      });
    } catch {
      // housekeeping is an optimisation: git reads the repository without it
    } finally {
      this.maintaining.delete(dir);
    }
  }

  private readonly maintaining = new Set<string>();

  /** How many loose objects a repository holds (`git count-objects`: a directory listing, no object read). */
  private async looseObjects(dir: string): Promise<number> {
    const out = (await this.runner.run(['count-objects', '-v'], { gitDir: dir })).stdout.toString();
    return Number(/^count: (\d+)$/m.exec(out)?.[1] ?? 0);
  }

  /**
   * Removes cached archives older than `maxAgeMs` (by the time they were written: a popular archive
   * is simply made again) and temporary files left by an interrupted `git archive` (older than an
   * hour), then empty project folders. Archives are named by commit, so a cached one is never stale;
   * this only bounds the disk used. Returns how many files were removed.
   */
  async pruneArchiveCache(maxAgeMs: number, now = Date.now()): Promise<number> {
    let removed = 0;
    const projects = await readdir(this.archiveCache).catch(() => [] as string[]);
    for (const p of projects) {
      const dir = join(this.archiveCache, p);
      const r = await removeOlderThan(dir, (f) => (f.endsWith('.tmp') ? Math.min(maxAgeMs, 60 * 60_000) : maxAgeMs), now);
      removed += r.removed;
      if (r.left === 0) await rmdir(dir).catch(() => undefined); // a concurrent archive may have just made it again
    }
    return removed;
  }

  /**
   * Removes the pack-objects cache's packs older than `maxAgeMs` (by when they were made) and the
   * inputs, partial packs and lock folders of fetches that were killed (older than 10 minutes).
   */
  async prunePackCache(maxAgeMs: number, now = Date.now()): Promise<number> {
    const dir = packObjectsCacheDir(this.config.dataDir);
    return (await removeOlderThan(dir, (f) => (f.startsWith('.') ? Math.max(maxAgeMs, 10 * 60_000) : maxAgeMs), now)).removed;
  }

  async branchExists(projectId: number, branch: string): Promise<boolean> {
    const name = parseNewRefName(branch);
    if (name === null) return false;
    const r = await this.runner.run(['show-ref', '--verify', '--quiet', branchRef(name)], {
      gitDir: this.repositoryPath(projectId),
      okCodes: [1],
    });
    return r.exitCode === 0;
  }

  /** The branch HEAD points at, or null for an empty repository. */
  async defaultBranch(projectId: number): Promise<string | null> {
    const r = await this.runner.run(['symbolic-ref', '--quiet', 'HEAD'], {
      gitDir: this.repositoryPath(projectId),
      okCodes: [1, 128],
    });
    const ref = r.stdout.toString('utf8').trim();
    if (!ref.startsWith('refs/heads/')) return null;
    const name = ref.slice('refs/heads/'.length);
    return (await this.branchExists(projectId, name)) ? name : null;
  }

  async setDefaultBranch(projectId: number, branch: string): Promise<void> {
    const name = parseNewRefName(branch);
    if (name === null) throw new Error('invalid branch name');
    await this.runner.run(['symbolic-ref', 'HEAD', branchRef(name)], { gitDir: this.repositoryPath(projectId) });
  }
}

/** Removes the files of `dir` older than `limitFor(name)` ms (by mtime); counts what it removed and what is left. */
async function removeOlderThan(dir: string, limitFor: (name: string) => number, now: number): Promise<{ removed: number; left: number }> {
  const files = await readdir(dir).catch(() => [] as string[]);
  let removed = 0;
  for (const f of files) {
    const path = join(dir, f);
    const st = await stat(path).catch(() => null);
    // files, and the pack-objects hook's lock folders (`.<key>.lock`) left by a maker that was killed
    if (!st || !(st.isFile() || (st.isDirectory() && f.endsWith('.lock'))) || now - st.mtimeMs < limitFor(f)) continue;
    await rm(path, { force: true, recursive: st.isDirectory() });
    removed++;
  }
  return { removed, left: files.length - removed };
}
