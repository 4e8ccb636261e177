import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import { CheckedUrl } from '../common/net/outbound-url';
import { APP_CONFIG, AppConfig } from '../config/config';
import { CatFilePool } from './cat-file-pool';
import { GitRunner } from './git-runner';
import { Repository } from './repository';

/** A branch name git accepts and that can never be read as an option or a path escape. */
export function isValidBranchName(name: string): boolean {
  return (
    name.length > 0 &&
    name.length <= 255 &&
    !name.startsWith('-') &&
    !name.startsWith('/') &&
    !name.endsWith('/') &&
    !name.endsWith('.') &&
    !name.endsWith('.lock') &&
    !name.includes('..') &&
    !name.includes('//') &&
    !name.includes('@{') &&
    name !== '@' &&
    !/[\x00-\x20\x7f~^:?*[\\]/.test(name)
  );
}

/**
 * Repositories on disk. Storage is addressed by project id (`@hashed/ab/cd/<sha256(id)>.git`, as
 * GitLab 10+ does), so renaming or transferring a project never moves files: the rename is one
 * database update and cannot leave a half-moved repository behind.
 */
@Injectable()
export class GitService implements OnModuleDestroy {
  readonly runner: GitRunner;
  readonly root: string;
  private readonly pool: CatFilePool;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.root = join(config.dataDir, 'repositories');
    this.runner = new GitRunner(join(config.dataDir, 'git-home'));
    this.pool = new CatFilePool(this.runner.environment);
  }

  onModuleDestroy(): void {
    this.pool.closeAll();
  }

  /** The repository of a project, for reads and ref updates. */
  repository(projectId: number): Repository {
    return new Repository(this.repositoryPath(projectId), this.runner, this.pool);
  }

  repositoryPath(projectId: number): string {
    const h = createHash('sha256').update(String(projectId)).digest('hex');
    return join(this.root, '@hashed', h.slice(0, 2), h.slice(2, 4), `${h}.git`);
  }

  exists(projectId: number): boolean {
    return existsSync(join(this.repositoryPath(projectId), 'HEAD'));
  }

  /** An empty bare repository whose HEAD points at `master`. */
  async create(projectId: number): Promise<void> {
    const path = this.repositoryPath(projectId);
    await rm(path, { recursive: true, force: true });
    await mkdir(dirname(path), { recursive: true });
    await this.runner.run(['init', '--bare', '--quiet', '--initial-branch=master', path]);
  }

  async remove(projectId: number): Promise<void> {
    this.pool.forget(this.repositoryPath(projectId));
    await rm(this.repositoryPath(projectId), { recursive: true, force: true });
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
          '-c', 'protocol.allow=never',
          '-c', 'protocol.http.allow=always',
          '-c', 'protocol.https.allow=always',
          '-c', 'http.followRedirects=false',
          '-c', `http.curloptResolve=${checked.host}:${checked.port}:${pinned}`,
          'clone', '--bare', '--quiet', '--no-local', '--', checked.url.toString(), tmp,
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
   * repository has none or has gathered many packs (clones and fetches then reuse the pack instead
   * of recomputing it), and a fresh commit-graph with changed-path filters (history walks such as
   * commit counts and path-limited logs get several times faster). One run per repository at a
   * time; a failure only costs speed.
   */
  async housekeeping(projectId: number): Promise<void> {
    const dir = this.repositoryPath(projectId);
    if (this.maintaining.has(dir)) return;
    this.maintaining.add(dir);
    try {
      const packs = await readdir(join(dir, 'objects', 'pack')).catch(() => [] as string[]);
      const hasBitmap = packs.some((f) => f.endsWith('.bitmap'));
      const packCount = packs.filter((f) => f.endsWith('.pack')).length;
      if (packCount > 0 && (!hasBitmap || packCount > 20)) {
        await this.runner.run(['repack', '-a', '-d', '-q', '--write-bitmap-index'], { gitDir: dir, timeoutMs: 30 * 60_000 });
      }
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

  async branchExists(projectId: number, branch: string): Promise<boolean> {
    if (!isValidBranchName(branch)) return false;
    const r = await this.runner.run(['show-ref', '--verify', '--quiet', `refs/heads/${branch}`], {
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
    if (!isValidBranchName(branch)) throw new Error('invalid branch name');
    await this.runner.run(['symbolic-ref', 'HEAD', `refs/heads/${branch}`], { gitDir: this.repositoryPath(projectId) });
  }
}
