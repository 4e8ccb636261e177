import { createReadStream, existsSync } from 'node:fs';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { Inject, Injectable } from '@nestjs/common';
import type { Response } from 'express';
import { APP_CONFIG, AppConfig } from '../config/config';
import { apiError, MissingAttribute, NotFound } from '../common/errors/domain-errors';
import { Params } from '../common/params/params';
import { Commit, DiffEntry, TreeEntry } from '../git/objects';
import { FileChange, FileConflict, isSafePath, isSafeRef, RefUpdateRejected } from '../git/repository';
import { User } from '../users/user.entity';
import { PushService } from './push.service';
import { RepositoryAccess } from './repository-access.service';

export type ArchiveFormat = 'tar' | 'tar.gz' | 'tar.bz2' | 'zip';

/** GitLab's suffix → format mapping (bz2 variants, tar, zip; everything else tar.gz). */
export function archiveFormat(suffix: string | undefined): ArchiveFormat {
  const s = (suffix ?? '').toLowerCase();
  if (['tar.bz2', 'tbz', 'tbz2', 'tb2', 'bz2'].includes(s)) return 'tar.bz2';
  if (s === 'tar') return 'tar';
  if (s === 'zip') return 'zip';
  return 'tar.gz';
}

const CONTENT_TYPES: Record<ArchiveFormat, string> = {
  tar: 'application/x-tar',
  'tar.gz': 'application/gzip',
  'tar.bz2': 'application/x-bzip2',
  zip: 'application/zip',
};

const FILE_PATH = /^[a-zA-Z0-9_\-./@]*$/;
const MAX_FILE_BYTES = 50 * 1024 * 1024;

export interface RepositoryFile {
  fileName: string;
  filePath: string;
  size: number;
  content: Buffer;
  ref: string;
  blobId: string;
  commitId: string;
  lastCommitId: string;
}

export interface CompareResult {
  commit: Commit | null;
  commits: Commit[];
  diffs: DiffEntry[];
  compareTimeout: boolean;
  compareSameRef: boolean;
}

@Injectable()
export class ContentsService {
  private readonly cacheRoot: string;

  constructor(
    private readonly access: RepositoryAccess,
    private readonly push: PushService,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.cacheRoot = join(config.dataDir, 'archive-cache');
  }

  async tree(user: User, ref: string, p: Params): Promise<TreeEntry[]> {
    const ctx = await this.access.open(user, ref);
    const refName = p.string('ref_name')?.trim() || p.string('ref')?.trim() || (await this.access.defaultRef(ctx));
    const path = p.string('path') ?? '';
    if (!isSafePath(path)) throw apiError(400, '400 (Bad request) "path" is invalid');
    const entries = await ctx.repo.tree(refName, path);
    if (!entries) throw new NotFound('Tree');
    return entries;
  }

  /** `GET .../blobs/:sha?filepath=`: the file's bytes at a commit, branch or tag. */
  async blobAt(user: User, ref: string, sha: string, p: Params): Promise<Buffer> {
    const ctx = await this.access.open(user, ref);
    const path = p.string('filepath', { required: true }) as string;
    if (!isSafePath(path)) throw new NotFound('File');
    const commit = await this.access.commitOr404(ctx, sha);
    const blob = await ctx.repo.blobAt(commit.id, path);
    if (!blob) throw new NotFound('File');
    return blob.data;
  }

  async rawBlob(user: User, ref: string, sha: string): Promise<Buffer> {
    const ctx = await this.access.open(user, ref);
    const data = await ctx.repo.blob(sha);
    if (!data) throw new NotFound('Blob');
    return data;
  }

  /**
   * Streams an archive of `sha` (default: the default branch), cached per commit and format: the
   * first request streams from git while writing the cache file; later ones stream the file.
   */
  async archive(user: User, ref: string, p: Params, suffix: string | undefined, res: Response): Promise<void> {
    const ctx = await this.access.open(user, ref);
    const format = archiveFormat(suffix ?? p.string('format'));
    const refName = p.string('sha')?.trim() || (await this.access.defaultRef(ctx));
    if (!isSafeRef(refName)) throw new NotFound('File');
    const commit = await ctx.repo.commit(refName);
    if (!commit) throw new NotFound('File');
    const label = refName.replace(/[^A-Za-z0-9._-]+/g, '-');
    const base = `${ctx.project.path}-${label}-${commit.id}`;
    const fileName = `${base}.${format}`;
    res.status(200);
    res.setHeader('Content-Type', CONTENT_TYPES[format]);
    res.setHeader('Content-Disposition', `attachment; filename="${fileName}"`);
    res.setHeader('Content-Transfer-Encoding', 'binary');
    const dir = join(this.cacheRoot, String(ctx.project.id));
    const cached = join(dir, `${commit.id}-${label}.${format}`);
    if (existsSync(cached)) {
      res.setHeader('Content-Length', (await stat(cached)).size);
      await new Promise<void>((resolve, reject) => {
        createReadStream(cached).on('error', reject).pipe(res).on('finish', resolve).on('close', resolve);
      });
      return;
    }
    await mkdir(dir, { recursive: true });
    const tmp = `${cached}.${process.pid}.${Date.now()}.tmp`;
    const file = createWriteStream(tmp);
    const child = ctx.repo.archive(commit.id, format, `${base}/`);
    child.stdout.on('data', (d: Buffer) => {
      file.write(d);
      if (!res.write(d)) {
        child.stdout.pause();
        res.once('drain', () => child.stdout.resume());
      }
    });
    res.on('close', () => {
      if (!res.writableFinished) child.kill('SIGKILL');
    });
    const code: number | null = await new Promise((resolve) => child.on('close', resolve));
    await new Promise<void>((resolve) => file.end(resolve));
    if (code === 0) await rename(tmp, cached).catch(() => rm(tmp, { force: true }));
    else await rm(tmp, { force: true });
    res.end();
  }

  /** `GET .../compare?from=&to=`: commits in `to` not in `from` (oldest first) and the diff from their merge base. */
  async compare(user: User, ref: string, p: Params): Promise<CompareResult> {
    const ctx = await this.access.open(user, ref);
    const from = p.requireString('from').trim();
    const to = p.requireString('to').trim();
    const [a, b] = await Promise.all([ctx.repo.commit(from), ctx.repo.commit(to)]);
    if (!a || !b) throw new NotFound(!a ? 'Commit' : 'Commit');
    if (from === to || a.id === b.id) {
      return { commit: null, commits: [], diffs: [], compareTimeout: false, compareSameRef: true };
    }
    const base = (await ctx.repo.mergeBase(a.id, b.id)) ?? a.id;
    const [{ commits, truncated }, diff] = await Promise.all([ctx.repo.commitsBetween(a.id, b.id), ctx.repo.diff(base, b.id)]);
    return {
      commit: commits.length ? commits[commits.length - 1] : null,
      commits,
      diffs: commits.length ? diff.entries : [],
      compareTimeout: truncated || diff.truncated,
      compareSameRef: false,
    };
  }

  async contributors(user: User, ref: string) {
    const ctx = await this.access.open(user, ref);
    const tip = await ctx.repo.commit(await this.access.defaultRef(ctx));
    if (!tip) return [];
    return ctx.repo.contributors(tip.id);
  }

  // ------------------------------------------------------------------ files API

  async getFile(user: User, ref: string, p: Params): Promise<RepositoryFile> {
    const ctx = await this.access.open(user, ref);
    const filePath = p.requireString('file_path').replace(/^\/+/, '');
    const refName = p.requireString('ref').trim();
    if (!isSafePath(filePath)) throw new NotFound('File');
    const commit = await this.access.commitOr404(ctx, refName);
    const blob = await ctx.repo.blobAt(commit.id, filePath);
    if (!blob) throw new NotFound('File');
    return {
      fileName: filePath.split('/').pop() as string,
      filePath,
      size: blob.data.length,
      content: blob.data,
      ref: refName,
      blobId: blob.sha,
      commitId: commit.id,
      lastCommitId: (await ctx.repo.lastCommitFor(commit.id, filePath)) ?? commit.id,
    };
  }

  /**
   * Creates, updates or deletes one file with a commit by the API user, without a working tree; the
   * branch moves compare-and-swap, so a push in between fails the write (400). Any failure is 400.
   */
  async writeFile(user: User, ref: string, p: Params, action: FileChange['action']): Promise<{ file_name: string; file_path: string; branch_name: string }> {
    const ctx = await this.access.open(user, ref, 'push_code');
    const rawPath = p.requireString('file_path');
    const branch = p.requireString('branch_name').trim();
    let content: Buffer | undefined;
    if (action !== 'delete') {
      if (p.string('content') === undefined) throw new MissingAttribute('content');
      const text = p.string('content') as string;
      const encoding = (p.string('encoding') ?? 'text').toLowerCase();
      if (encoding !== 'text' && encoding !== 'base64') throw apiError(400, 'Encoding must be text or base64');
      if (encoding === 'base64' && !/^[A-Za-z0-9+/\s]*={0,2}\s*$/.test(text)) throw apiError(400, 'Content is not valid base64');
      content = encoding === 'base64' ? Buffer.from(text, 'base64') : Buffer.from(text, 'utf8');
      if (content.length > MAX_FILE_BYTES) throw apiError(400, 'File is too large');
    }
    const message = p.requireString('commit_message');
    const filePath = rawPath.replace(/^\/+/, '');
    if (filePath.split('/').includes('..') || rawPath.includes('/../')) {
      throw apiError(400, 'Your changes could not be committed, because the file name cannot include directory traversal. ');
    }
    if (!filePath || !FILE_PATH.test(filePath) || !isSafePath(filePath) || filePath.endsWith('/') || filePath.includes('//')) {
      throw apiError(
        400,
        "Your changes could not be committed, because the file name can contain only letters, digits, '_', '-', '@' and '.'. Separate directories with a '/'. ",
      );
    }
    if (!isSafeRef(branch)) throw apiError(400, 'You can only create or edit files when you are on a branch');
    if (!(await this.push.canWriteBranch(ctx.project.id, branch, ctx.abilities))) {
      throw apiError(400, 'You are not allowed to push into this branch');
    }
    const head = await ctx.repo.branch(branch);
    const empty = (await ctx.repo.branchNames()).length === 0;
    if (!head && !(empty && action === 'create')) {
      throw apiError(400, 'You can only create or edit files when you are on a branch');
    }
    const change: FileChange = action === 'delete' ? { action, path: filePath } : { action, path: filePath, content: content as Buffer };
    let newSha: string;
    try {
      newSha = await ctx.repo.commitFiles({
        branch,
        parent: head?.commit.id ?? null,
        message,
        author: { name: user.name, email: user.email },
        changes: [change],
      });
    } catch (e) {
      if (e instanceof FileConflict) {
        if (e.message === 'exists') throw apiError(400, 'Your changes could not be committed because a file with the same name already exists');
        if (e.message === 'missing') throw apiError(400, 'Your changes could not be committed because the file does not exist');
        throw apiError(400, 'Your changes could not be committed because the content is unchanged');
      }
      if (e instanceof RefUpdateRejected) {
        throw apiError(400, 'Your changes could not be committed because the branch was updated in the meantime');
      }
      throw e;
    }
    await this.push.afterPush(
      ctx.project,
      user,
      [{ oldSha: head?.commit.id ?? '0'.repeat(40), newSha, ref: `refs/heads/${branch}` }],
      'api',
    );
    return { file_name: filePath, file_path: filePath, branch_name: branch };
  }
}
