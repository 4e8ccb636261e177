import { Inject, Injectable, StreamableFile } from '@nestjs/common';
import { ErrorWithBody, InvalidAttribute, NotFound, Rejected } from '../common/errors/domain-errors';
import { APP_CONFIG, AppConfig } from '../config/config';
import { PageParams, Paginated, paginateAll } from '../common/pagination/pagination';
import { GitService } from '../git/git.service';
import { parseObjectId, parseRef, parseRepoPath, RefName, RepoPath, repoPathProblem, Sha } from '../git/names';
import { Branch, Commit, DiffEntry, TreeEntry, ZERO_SHA } from '../git/objects';
import { ArchiveFormat, BlobStream, FileChange, FileConflict, RefUpdateRejected, Repository } from '../git/repository';
import { ArchiveDto, BlobDto, CompareDto, DeleteFileDto, GetFileDto, TreeDto, WriteFileDto } from './dto/contents.dto';
import { RepositoryLocks } from '../database/repository-locks';
import { PushService } from './push.service';
import { RepositoryAccess } from './repository-access.service';
import { ProjectRef } from '../common/params/refs';
import type { Caller } from '../common/caller/caller';

export type { ArchiveFormat };

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
const ARCHIVE_ROUTE = /^archive(?:\.(.+))?$/;

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

/**
 * A path a read names (`path`, `filepath`, `file_path`): a `.git` component is `400 "<field>" is
 * invalid`; any other unsafe path is `onUnsafe` (what these routes answered before: 404 or 400).
 */
function readPath(raw: string, field: string, onUnsafe: () => Error, opts: { dir?: boolean } = {}): RepoPath {
  const problem = repoPathProblem(raw, opts);
  if (problem === 'git-dir') throw new InvalidAttribute(field);
  const path = problem === null ? parseRepoPath(raw, opts) : null;
  if (path === null) throw onUnsafe();
  return path;
}

/**
 * Raw file bytes streamed from git (any size, constant memory, Content-Length from the object's
 * size): `text/plain` (GitLab's blob answer); never sniffed or rendered by a browser (see the
 * controller's header).
 */
function rawFile(blob: BlobStream): StreamableFile {
  return new StreamableFile(blob.stream, { type: 'text/plain; charset=utf-8', length: blob.size });
}

@Injectable()
export class ContentsService {
  constructor(
    private readonly access: RepositoryAccess,
    private readonly push: PushService,
    private readonly git: GitService,
    private readonly locks: RepositoryLocks,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** Whole on the first page unless `per_page` says otherwise (GitLab 8 answered it unpaginated). */
  async tree(user: Caller, ref: ProjectRef, q: TreeDto): Promise<Paginated<TreeEntry>> {
    const ctx = await this.access.open(user, ref);
    const given = q.ref_name || q.ref;
    const refName = given ? parseRef(given) : await this.access.defaultRef(ctx);
    const path = readPath(q.path ?? '', 'path', () => new InvalidAttribute('path'), { dir: true });
    const entries = refName === null ? null : await ctx.repo.tree(refName, path);
    if (!entries) throw new NotFound('Tree');
    return paginateAll(entries, q, { whole: true });
  }

  /** `GET .../blobs/:sha?filepath=`: the file's bytes at a commit, branch or tag. */
  async blobAt(user: Caller, ref: ProjectRef, sha: string, q: BlobDto): Promise<StreamableFile> {
    const ctx = await this.access.open(user, ref);
    const path = readPath(q.filepath, 'filepath', () => new NotFound('File'));
    const commit = await this.access.commitOr404(ctx, sha);
    const blob = await ctx.repo.openBlobAt(commit.id, path);
    if (!blob) throw new NotFound('File');
    return rawFile(blob);
  }

  async rawBlob(user: Caller, ref: ProjectRef, sha: string): Promise<StreamableFile> {
    const ctx = await this.access.open(user, ref);
    const id = parseObjectId(sha);
    const blob = id === null ? null : await ctx.repo.openBlob(id);
    if (!blob) throw new NotFound('Blob');
    return rawFile(blob);
  }

  /**
   * `GET .../archive` or `.../archive.<format>` (the route's last segment): an archive of `sha`
   * (default: the default branch), cached per commit and format by GitService.
   */
  async archive(user: Caller, ref: ProjectRef, route: string, q: ArchiveDto): Promise<StreamableFile> {
    const m = ARCHIVE_ROUTE.exec(route);
    if (!m) throw new NotFound();
    const ctx = await this.access.open(user, ref);
    const format = archiveFormat(m[1] ?? q.format);
    const refName: RefName | null = q.sha ? parseRef(q.sha) : await this.access.defaultRef(ctx);
    const commit = refName === null ? null : await ctx.repo.commit(refName);
    if (!commit || refName === null) throw new NotFound('File');
    const label = refName.replace(/[^A-Za-z0-9._-]+/g, '-');
    const base = `${ctx.project.path}-${label}-${commit.id}`;
    const { stream, length } = await this.git.archive(ctx.project.id, commit.id, format, { prefix: `${base}/`, label });
    return new StreamableFile(stream, {
      type: CONTENT_TYPES[format],
      disposition: `attachment; filename="${base}.${format}"`,
      length,
    });
  }

  /** `GET .../compare?from=&to=`: commits in `to` not in `from` (oldest first) and the diff from their merge base. */
  async compare(user: Caller, ref: ProjectRef, q: CompareDto): Promise<CompareResult> {
    const ctx = await this.access.open(user, ref);
    const [a, b] = await Promise.all([this.access.commitOr404(ctx, q.from), this.access.commitOr404(ctx, q.to)]);
    if (q.from === q.to || a.id === b.id) {
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

  async contributors(user: Caller, ref: ProjectRef, q: PageParams) {
    const ctx = await this.access.open(user, ref);
    const tip = await ctx.repo.commit(await this.access.defaultRef(ctx));
    return paginateAll(tip ? await ctx.repo.contributors(tip.id) : [], q, { whole: true });
  }

  // ------------------------------------------------------------------ files API

  async getFile(user: Caller, ref: ProjectRef, q: GetFileDto): Promise<RepositoryFile> {
    const ctx = await this.access.open(user, ref);
    const filePath = readPath(q.file_path, 'file_path', () => new NotFound('File'));
    const commit = await this.access.commitOr404(ctx, q.ref);
    const info = await ctx.repo.blobInfoAt(commit.id, filePath);
    if (!info) throw new NotFound('File');
    // the JSON answer holds the whole file (base64): above the limit, point at the raw route instead
    const limit = this.config.filesApiJsonMaxBytes;
    if (info.size > limit) {
      throw new ErrorWithBody(413, {
        message: `413 File too large to return as JSON (${info.size} bytes, limit ${limit}); read it raw from GET /api/v3/projects/${ctx.project.id}/repository/raw_blobs/${info.sha}`,
      });
    }
    const data = await ctx.repo.blob(info.sha);
    if (!data) throw new NotFound('File');
    return {
      fileName: filePath.split('/').pop() as string,
      filePath,
      size: data.length,
      content: data,
      ref: q.ref,
      blobId: info.sha,
      commitId: commit.id,
      lastCommitId: (await ctx.repo.lastCommitFor(commit.id, filePath)) ?? commit.id,
    };
  }

  createFile(user: Caller, ref: ProjectRef, dto: WriteFileDto) {
    return this.writeFile(user, ref, dto, 'create');
  }

  updateFile(user: Caller, ref: ProjectRef, dto: WriteFileDto) {
    return this.writeFile(user, ref, dto, 'update');
  }

  deleteFile(user: Caller, ref: ProjectRef, dto: DeleteFileDto) {
    return this.writeFile(user, ref, dto, 'delete');
  }

  /**
   * Creates, updates or deletes one file with a commit by the API user, without a working tree; the
   * branch moves compare-and-swap, so a push in between fails the write (400). Any failure is 400.
   */
  private async writeFile(
    user: Caller,
    ref: ProjectRef,
    dto: DeleteFileDto & Partial<WriteFileDto>,
    action: FileChange['action'],
  ): Promise<{ path: RepoPath; branch: RefName }> {
    const ctx = await this.access.open(user, ref, 'push_code');
    let content: Buffer | undefined;
    if (action !== 'delete') {
      const text = dto.content ?? '';
      const encoding = (dto.encoding ?? 'text').toLowerCase();
      if (encoding !== 'text' && encoding !== 'base64') throw new Rejected('Encoding must be text or base64');
      if (encoding === 'base64' && !/^[A-Za-z0-9+/\s]*={0,2}\s*$/.test(text)) throw new Rejected('Content is not valid base64');
      content = encoding === 'base64' ? Buffer.from(text, 'base64') : Buffer.from(text, 'utf8');
      if (content.length > MAX_FILE_BYTES) throw new Rejected('File is too large');
    }
    const path = writePath(dto.file_path);
    const branch = parseRef(dto.branch_name);
    if (branch === null) throw new Rejected('You can only create or edit files when you are on a branch');
    if (!(await this.push.canWriteBranch(ctx.project.id, branch, ctx.abilities))) {
      throw new Rejected('You are not allowed to push into this branch');
    }
    const change: FileChange = action === 'delete' ? { action, path } : { action, path, content: content as Buffer };
    // Repository writes are serialised per repository (RepositoryLocks, across instances). The tip
    // the change is based on is read before waiting: when writes landed meanwhile without touching
    // this file, the change is applied on the new tip; one that touched it is a conflict (400). The
    // branch update stays compare-and-swap.
    const base = await ctx.repo.branch(branch);
    const empty = !base && (await ctx.repo.branchNames()).length === 0;
    if (!base && !(empty && action === 'create')) {
      throw new Rejected('You can only create or edit files when you are on a branch');
    }
    const { head, newSha } = await this.locks.run(ctx.project.id, () => this.commitChange(ctx.repo, user, branch, base, change, dto.commit_message));
    await this.push.afterPush(ctx.project, user, [{ oldSha: head?.commit.id ?? ZERO_SHA, newSha, ref: `refs/heads/${branch}` }], 'api');
    return { path, branch };
  }

  private async commitChange(repo: Repository, user: Caller, branch: RefName, base: Branch | null, change: FileChange, message: string) {
    const path = change.path;
    let head = base;
    const tip = await repo.branch(branch);
    if (head && tip && tip.commit.id !== head.commit.id && (await this.sameFileAt(repo, head.commit.id, tip.commit.id, path))) head = tip;
    let newSha: Sha | undefined;
    for (let attempt = 0; newSha === undefined; attempt++) {
      try {
        newSha = await repo.commitFiles({
          branch,
          parent: head?.commit.id ?? null,
          message,
          author: { name: user.name, email: user.email },
          changes: [change],
        });
      } catch (e) {
        if (e instanceof FileConflict) {
          if (e.message === 'exists') throw new Rejected('Your changes could not be committed because a file with the same name already exists');
          if (e.message === 'missing') throw new Rejected('Your changes could not be committed because the file does not exist');
          throw new Rejected('Your changes could not be committed because the content is unchanged');
        }
        if (!(e instanceof RefUpdateRejected)) throw e;
        const moved = await repo.branch(branch);
        if (attempt >= MAX_REBASES || !moved || !head || !(await this.sameFileAt(repo, head.commit.id, moved.commit.id, path))) {
          throw new Rejected('Your changes could not be committed because the branch was updated in the meantime');
        }
        head = moved;
      }
    }
    return { head, newSha };
  }

  /** Whether `path` is the same (same blob, or absent in both) at two commits (ids only: contents are not read). */
  private async sameFileAt(repo: Repository, a: Sha, b: Sha, path: RepoPath): Promise<boolean> {
    const [x, y] = await Promise.all([repo.blobInfoAt(a, path), repo.blobInfoAt(b, path)]);
    return (x?.sha ?? null) === (y?.sha ?? null);
  }
}

/** How many times a file write is re-applied on a branch that moved under it. */
const MAX_REBASES = 20;

/**
 * The path a write names, with GitLab's messages: traversal, then the allowed characters; a `.git`
 * component (which git refuses to write) is `400 "file_path" is invalid`. A leading `/` is dropped.
 */
function writePath(raw: string): RepoPath {
  const stripped = raw.replace(/^\/+/, '');
  if (stripped.split('/').includes('..') || raw.includes('/../')) {
    throw new Rejected('Your changes could not be committed, because the file name cannot include directory traversal. ');
  }
  const problem = repoPathProblem(raw);
  if (problem === 'git-dir') throw new InvalidAttribute('file_path');
  const path = problem === null && FILE_PATH.test(stripped) ? parseRepoPath(raw) : null;
  if (path === null) {
    throw new Rejected(
      "Your changes could not be committed, because the file name can contain only letters, digits, '_', '-', '@' and '.'. Separate directories with a '/'. ",
    );
  }
  return path;
}
