import { ChildProcessWithoutNullStreams } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline, Readable, Transform } from 'node:stream';
import { CatFilePool } from './cat-file-pool';
import { GitError, GitRunner } from './git-runner';
import { ImmutableMemo } from './immutable-memo';
import { RefSnapshots } from './ref-snapshots';
import { branchRef, isSha, keepAroundRef, QualifiedRef, RefName, RepoPath, Rev, Sha, tagRef, ZERO_SHA } from './names';
import { Branch, Commit, DiffEntry, parseCommit, parseTagObject, parseTree, Tag, TreeEntry } from './objects';

/** A tag's name, the id it points at, that object's type, and for an annotated tag the object it tags and its type. */
export interface TagRef {
  name: RefName;
  sha: Sha;
  type: string;
  peeled: Sha | '';
  peeledType: string;
}

/** A branch's name and the id it points at. */
export interface BranchRef {
  name: RefName;
  sha: Sha;
}

/**
 * Snapshots of repositories' branch and tag refs (by full ref name, in git's order), kept by one
 * GitService and checked against the disk on every use (`ref-snapshots.ts`): reads of refs spawn no
 * process while the refs stay as they were.
 */
export class RefCache {
  readonly heads = new RefSnapshots<Map<string, BranchRef>>((m) => m.size);
  readonly tags = new RefSnapshots<Map<string, TagRef>>((m) => m.size);
}

export { MAX_OBJECT_BYTES, ObjectTooLarge } from './cat-file-pool';

export const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904' as Sha;

/** Commit counts of `log` by repository, SHA, window and path. */
const logCounts = new ImmutableMemo<number>(2000);
/** Pages of `log` (the commit ids) by repository, SHA, window, path, offset and limit, up to ~4 MB of ids. */
const logPages = new ImmutableMemo<readonly Sha[]>(5000, (shas) => 64 + 48 * shas.length, 4 << 20);
/** Merge bases by repository and pair of full SHAs. */
const mergeBases = new ImmutableMemo<Sha | null>(2000);
/** The last commit touching a path, by repository, full SHA and path (the files API's `last_commit_id`). */
const lastCommits = new ImmutableMemo<Sha | null>(5000);
/** Diffs by repository and pair of SHAs, up to 32 MB of diff text. */
const diffs = new ImmutableMemo<{ entries: DiffEntry[]; truncated: boolean }>(500, (d) => d.entries.reduce((n, e) => n + 200 + e.diff.length, 0), 32 << 20);
/** Commit ranges (compare, merge request commits, pushes) by repository and pair of SHAs, up to ~16 MB of messages. */
const commitRanges = new ImmutableMemo<{ commits: Commit[]; truncated: boolean }>(
  500,
  (r) => r.commits.reduce((n, c) => n + 300 + c.message.length, 0),
  16 << 20,
);

/** Blobs up to this size are served from memory, read through the shared cat-file process. */
const SMALL_BLOB_BYTES = 256 * 1024;

/** Limits on what one call returns (stated in the README). */
export const LIMITS = {
  diffFiles: 1000,
  diffBytesPerFile: 200 * 1024,
  diffLinesTotal: 50_000,
  /** Blobs over this size are not diffed at all (git's core.bigFileThreshold): `too_large`, like any diff over the limits. */
  diffBlobBytes: 50 * 1024 * 1024,
  compareCommits: 1000,
  contributorsCommits: 2000,
  readTimeoutMs: 30_000,
  writeTimeoutMs: 60_000,
  archiveTimeoutMs: 10 * 60_000,
  /** A raw blob streamed to a client (any size, at the client's pace). */
  blobStreamTimeoutMs: 60 * 60_000,
};

/** A blob opened for streaming: its full id, its size in bytes and its content. */
export interface BlobStream {
  sha: Sha;
  size: number;
  /** The exact bytes; fails (instead of ending short) if git stops early. Destroying it stops git. */
  stream: Readable;
}

export interface Identity {
  name: string;
  email: string;
}

export type FileChange = { action: 'create' | 'update'; path: RepoPath; content: Buffer } | { action: 'delete'; path: RepoPath };

/** The HEAD file's content, trimmed (a few bytes, written by git through a lock and a rename), or null. */
function readHead(gitDir: string): string | null {
  try {
    return readFileSync(join(gitDir, 'HEAD'), 'utf8').trim();
  } catch {
    return null;
  }
}

/** Exact epoch seconds for `--since`/`--until` (git's own date parser gives up on years from 2100). */
function gitDate(d: Date, round: 'ceil' | 'floor'): string {
  return `@${Math[round](d.getTime() / 1000)} +0000`;
}

export type ArchiveFormat = 'tar' | 'tar.gz' | 'tar.bz2' | 'zip';

export class RefUpdateRejected extends Error {}
export class FileConflict extends Error {}
/** The two sides of a merge change the same lines (or files) in incompatible ways. */
export class MergeConflict extends Error {}

/** One bare repository: reads through the shared cat-file pool, everything else through the runner. */
export class Repository {
  constructor(
    readonly gitDir: string,
    private readonly runner: GitRunner,
    private readonly pool: CatFilePool,
    private readonly refCache: RefCache = new RefCache(),
  ) {}

  private git(
    args: string[],
    opts: { input?: string | Buffer; okCodes?: number[]; timeoutMs?: number; env?: Record<string, string>; maxOutputBytes?: number } = {},
  ) {
    return this.runner.run(args, { gitDir: this.gitDir, timeoutMs: LIMITS.readTimeoutMs, ...opts });
  }

  // ------------------------------------------------------------------ objects

  async commit(ref: Rev): Promise<Commit | null> {
    const o = await this.pool.read(this.gitDir, `${ref}^{commit}`);
    return o && o.type === 'commit' ? parseCommit(o.sha, o.data) : null;
  }

  private async commitsBySha(shas: Sha[]): Promise<Commit[]> {
    const objs = await Promise.all(shas.map((s) => this.pool.read(this.gitDir, s)));
    return objs.filter((o) => o && o.type === 'commit').map((o) => parseCommit(o!.sha, o!.data));
  }

  /** The tree at `path` of `ref`; null when the ref or path does not exist or is not a tree. */
  async tree(ref: Rev, path: RepoPath): Promise<TreeEntry[] | null> {
    const o = await this.pool.read(this.gitDir, path ? `${ref}^{commit}:${path}` : `${ref}^{tree}`);
    return o && o.type === 'tree' ? parseTree(o.data) : null;
  }

  /** The blob at `path` of `ref`: { sha, data } or null. */
  async blobAt(ref: Rev, path: RepoPath): Promise<{ sha: Sha; data: Buffer } | null> {
    if (!path) return null;
    const o = await this.pool.read(this.gitDir, `${ref}^{commit}:${path}`);
    return o && o.type === 'blob' ? { sha: o.sha as Sha, data: o.data } : null;
  }

  /** A blob by its (possibly abbreviated) id: see `parseObjectId`. */
  async blob(id: Rev): Promise<Buffer | null> {
    const o = await this.pool.read(this.gitDir, id);
    return o && o.type === 'blob' ? o.data : null;
  }

  /** The id and size of the blob at `path` of `ref`, without reading it; null when absent or not a blob. */
  async blobInfoAt(ref: Rev, path: RepoPath): Promise<{ sha: Sha; size: number } | null> {
    if (!path) return null;
    const o = await this.pool.info(this.gitDir, `${ref}^{commit}:${path}`);
    // the id as git printed it: a full SHA by construction
    return o && o.type === 'blob' ? { sha: o.sha as Sha, size: o.size } : null;
  }

  /** Opens a blob by its (possibly abbreviated) id for streaming, whatever its size; null when it is no blob. */
  async openBlob(id: Rev): Promise<BlobStream | null> {
    const o = await this.pool.info(this.gitDir, id);
    return o && o.type === 'blob' ? this.openSized(o.sha as Sha, o.size) : null;
  }

  /** Opens the blob at `path` of `ref` for streaming, whatever its size; null when absent or not a blob. */
  async openBlobAt(ref: Rev, path: RepoPath): Promise<BlobStream | null> {
    const o = await this.blobInfoAt(ref, path);
    return o ? this.openSized(o.sha, o.size) : null;
  }

  /**
   * A small blob (most source files) is read whole through the shared cat-file process, sparing a
   * process of its own (its start cost more git CPU than the read: 1.9 ms per raw file at 200/s on
   * the reference load); a larger one is streamed from a process of its own.
   */
  private async openSized(sha: Sha, size: number): Promise<BlobStream> {
    if (size <= SMALL_BLOB_BYTES) {
      const o = await this.pool.read(this.gitDir, sha);
      if (o && o.type === 'blob') return { sha, size: o.data.length, stream: Readable.from([o.data], { objectMode: false }) };
    }
    return this.streamBlob(sha, size);
  }

  /**
   * `git cat-file blob <full sha>` in a process of its own (a slow reader never holds up the shared
   * cat-file process), piped with backpressure: memory stays constant whatever the size. git itself
   * streams only blobs over core.bigFileThreshold (else it inflates the whole blob first: 300 MB of
   * its memory for a 300 MB blob) and maps packs in 1 GB windows: both are lowered here (measured on
   * a 300 MB packed blob: peak RSS of git 618 MB by default, 70 MB with these settings). A blob
   * stored as a delta is still inflated whole by git (never by this process).
   */
  private streamBlob(sha: Sha, size: number): BlobStream {
    const streaming = ['-c', 'core.bigFileThreshold=1m', '-c', 'core.packedGitWindowSize=16m', '-c', 'core.packedGitLimit=64m'];
    const child = this.runner.spawn([...streaming, 'cat-file', 'blob', sha], { gitDir: this.gitDir, timeoutMs: LIMITS.blobStreamTimeoutMs });
    child.stdin.end();
    child.stderr.resume();
    let bytes = 0;
    const exited = () => child.exitCode !== null || child.signalCode !== null;
    const check = new Transform({
      transform(chunk: Buffer, _enc, done) {
        bytes += chunk.length;
        done(null, chunk);
      },
      flush(done) {
        const finish = () =>
          done(child.exitCode === 0 && bytes === size ? null : new GitError(`git cat-file blob stopped after ${bytes} of ${size} bytes`, child.exitCode, ''));
        if (exited()) finish();
        else child.once('exit', finish);
      },
    });
    pipeline(child.stdout, check, () => undefined);
    check.once('close', () => {
      if (!exited()) child.kill('SIGKILL');
    });
    return { sha, size, stream: check };
  }

  // ------------------------------------------------------------------ refs

  /** `git for-each-ref` of `pattern`: one row per ref, `%(refname)` then `atoms`, as git printed them. */
  private async forEachRef(pattern: string, atoms: string[]): Promise<string[][]> {
    const r = await this.git(['for-each-ref', `--format=${['%(refname)', ...atoms].join('%00')}`, pattern]);
    return r.stdout
      .toString('utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => line.split('\0'));
  }

  // names and ids as git printed them: valid refs and full SHAs by construction
  private tagTable(): Promise<Map<string, TagRef>> {
    const prefix = 'refs/tags/';
    return this.refCache.tags.get(this.gitDir, prefix, async () => {
      const rows = await this.forEachRef(prefix, ['%(objectname)', '%(objecttype)', '%(*objectname)', '%(*objecttype)']);
      return new Map(
        rows.map(([ref, sha, type, peeled, peeledType]) => [
          ref,
          Object.freeze({ name: ref.slice(prefix.length) as RefName, sha: sha as Sha, type, peeled: peeled as Sha | '', peeledType }),
        ]),
      );
    });
  }

  /**
   * Names and ids of the branches, without touching their objects: the format of `tagTable`
   * (object type, peeled id) makes git read every object, ~4× the CPU for 2,000 branches.
   */
  private branchTable(): Promise<Map<string, BranchRef>> {
    const prefix = 'refs/heads/';
    return this.refCache.heads.get(this.gitDir, prefix, async () => {
      const rows = await this.forEachRef(prefix, ['%(objectname)']);
      return new Map(rows.map(([ref, sha]) => [ref, Object.freeze({ name: ref.slice(prefix.length) as RefName, sha: sha as Sha })]));
    });
  }

  private async refs(): Promise<TagRef[]> {
    return [...(await this.tagTable()).values()];
  }

  private async refIds(): Promise<BranchRef[]> {
    return [...(await this.branchTable()).values()];
  }

  async branchNames(): Promise<RefName[]> {
    return (await this.refIds()).map((r) => r.name);
  }

  /** All branches with their commits, sorted by name. */
  async branches(): Promise<Branch[]> {
    return this.branchCommits(await this.branchRefs());
  }

  /** All branch refs (name and commit id), sorted by name, without reading their commits. */
  async branchRefs(): Promise<BranchRef[]> {
    return (await this.refIds()).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** The branches of `refs` with their commits, in the same order (a ref whose object is no commit is left out). */
  async branchCommits(refs: BranchRef[]): Promise<Branch[]> {
    const commits = new Map((await this.commitsBySha([...new Set(refs.map((r) => r.sha))])).map((c) => [c.id, c]));
    return refs.filter((r) => commits.has(r.sha)).map((r) => ({ name: r.name, commit: commits.get(r.sha)! }));
  }

  async branch(name: RefName): Promise<Branch | null> {
    const sha = await this.refSha(branchRef(name));
    if (!sha) return null;
    const [commit] = await this.commitsBySha([sha]);
    return commit ? { name, commit } : null;
  }

  /** All tags (reverse-alphabetical), with annotations and target commits. */
  async tags(): Promise<Tag[]> {
    return this.describeTags(await this.tagRefs());
  }

  /**
   * The tags that name a commit (directly, or through one annotated tag), reverse-alphabetical,
   * without reading their objects in Node: a page of them is then described (`describeTags`).
   */
  async tagRefs(): Promise<TagRef[]> {
    return (await this.refs())
      .filter((r) => (r.type === 'tag' ? r.peeledType === 'commit' : r.type === 'commit'))
      .sort((a, b) => (a.name < b.name ? 1 : a.name > b.name ? -1 : 0));
  }

  async tag(name: RefName): Promise<Tag | null> {
    const ref = (await this.tagTable()).get(tagRef(name));
    return ref ? ((await this.describeTags([ref]))[0] ?? null) : null;
  }

  /** The tags of `refs` with their annotations and target commits, in the order given. */
  async describeTags(refs: TagRef[]): Promise<Tag[]> {
    const tagObjects = await Promise.all(refs.map((r) => (r.type === 'tag' ? this.pool.read(this.gitDir, r.sha) : Promise.resolve(null))));
    const targets = refs.map((r) => (r.type === 'tag' ? r.peeled || r.sha : r.sha));
    const commits = new Map((await this.commitsBySha([...new Set(targets)])).map((c) => [c.id, c]));
    const out: Tag[] = [];
    refs.forEach((r, i) => {
      const commit = commits.get(targets[i]);
      if (!commit) return;
      const obj = tagObjects[i];
      out.push({ name: r.name, message: obj ? parseTagObject(obj.data).message : null, commit });
    });
    return out.sort((a, b) => (a.name < b.name ? 1 : a.name > b.name ? -1 : 0));
  }

  /** The object a full ref name points at, or null. */
  async refSha(ref: QualifiedRef): Promise<Sha | null> {
    if (ref.startsWith('refs/heads/')) return (await this.branchTable()).get(ref)?.sha ?? null;
    if (ref.startsWith('refs/tags/')) return (await this.tagTable()).get(ref)?.sha ?? null;
    const row = (await this.forEachRef(ref, ['%(objectname)'])).find(([name]) => name === ref);
    return row ? (row[1] as Sha) : null;
  }

  /** The branch HEAD names (even unborn), or null when HEAD is detached: from the HEAD file when it names a branch, else from git. */
  async headBranch(): Promise<RefName | null> {
    const head = readHead(this.gitDir);
    // (a reftable repository's HEAD names `.invalid`; a detached or symlinked HEAD is left to git)
    if (head?.startsWith('ref: refs/heads/') && head !== 'ref: refs/heads/.invalid') return head.slice(16) as RefName;
    const r = await this.git(['symbolic-ref', '--quiet', 'HEAD'], { okCodes: [1, 128] });
    const ref = r.stdout.toString('utf8').trim();
    return ref.startsWith('refs/heads/') ? (ref.slice(11) as RefName) : null;
  }

  // ------------------------------------------------------------------ history

  /**
   * Commits reachable from `sha`, newest first, with paging and an optional date window (inclusive,
   * by committer date, to the second; any year from 0001 to 9999).
   */
  async log(sha: Sha, o: { offset: number; limit: number; since?: Date; until?: Date; path?: RepoPath }): Promise<{ commits: Commit[]; total: number }> {
    // git stores unsigned timestamps: nothing is older than the epoch
    if (o.until && o.until.getTime() < 0) return { commits: [], total: 0 };
    const window: string[] = [];
    if (o.since && o.since.getTime() > 0) window.push(`--since=${gitDate(o.since, 'ceil')}`);
    if (o.until) window.push(`--until=${gitDate(o.until, 'floor')}`);
    const pathArgs = o.path ? ['--', o.path] : ['--'];
    // The count walks the whole history (the costly part of a page), and each page is a walk of its
    // own: history under a full SHA never changes, so both are remembered per repository, SHA,
    // window and path (and the page's offset and limit).
    const key = isSha(sha) ? [this.gitDir, sha, ...window, ...pathArgs].join('\0') : undefined;
    const count = async () => Number((await this.git(['rev-list', '--count', ...window, sha, ...pathArgs])).stdout.toString('utf8').trim()) || 0;
    const page = async (): Promise<readonly Sha[]> =>
      shaLines((await this.git(['rev-list', `--max-count=${o.limit}`, `--skip=${o.offset}`, ...window, sha, ...pathArgs])).stdout);
    const [shas, total] = await Promise.all([
      key === undefined ? page() : logPages.through(`${key}\0${o.offset}\0${o.limit}`, page),
      key === undefined ? count() : logCounts.through(key, count),
    ]);
    return { commits: await this.commitsBySha([...shas]), total };
  }

  async lastCommitFor(sha: Sha, path: RepoPath): Promise<Sha | null> {
    const walk = async () => shaLines((await this.git(['rev-list', '--max-count=1', sha, '--', path])).stdout)[0] ?? null;
    // the walk can go far back in a long history; under a full SHA its answer never changes
    return isSha(sha) ? lastCommits.through(`${this.gitDir}\0${sha}\0${path}`, walk) : walk();
  }

  async isAncestor(ancestor: Sha, descendant: Sha): Promise<boolean> {
    const r = await this.git(['merge-base', '--is-ancestor', ancestor, descendant], { okCodes: [1] });
    return r.exitCode === 0;
  }

  async mergeBase(a: Sha, b: Sha): Promise<Sha | null> {
    // the merge base of two commits never changes: remembered per repository and pair
    return mergeBases.through(`${this.gitDir}\0${a}\0${b}`, async () => shaLines((await this.git(['merge-base', a, b], { okCodes: [1] })).stdout)[0] ?? null);
  }

  /** Commits in `to` and not in `from`, oldest first (at most LIMITS.compareCommits); remembered per pair of SHAs. */
  async commitsBetween(from: Sha, to: Sha): Promise<{ commits: Commit[]; truncated: boolean }> {
    const r = await commitRanges.through(`${this.gitDir}\0${from}\0${to}`, () => this.computeCommitsBetween(from, to));
    return { commits: [...r.commits], truncated: r.truncated };
  }

  private async computeCommitsBetween(from: Sha, to: Sha): Promise<{ commits: Commit[]; truncated: boolean }> {
    const exclude = from === ZERO_SHA ? [] : [`^${from}`];
    const r = await this.git(['rev-list', '--reverse', `--max-count=${LIMITS.compareCommits + 1}`, to, ...exclude, '--']);
    let shas = shaLines(r.stdout);
    const truncated = shas.length > LIMITS.compareCommits;
    if (truncated) shas = shas.slice(0, LIMITS.compareCommits);
    return { commits: await this.commitsBySha(shas), truncated };
  }

  /** Authors of the first 2000 non-merge commits, in order of first appearance. */
  async contributors(sha: Sha): Promise<{ name: string; email: string; commits: number }[]> {
    const r = await this.git(['log', '--no-merges', `--max-count=${LIMITS.contributorsCommits}`, '--format=%aN%x00%aE', sha, '--']);
    const byEmail = new Map<string, { name: string; email: string; commits: number }>();
    for (const line of r.stdout.toString('utf8').split('\n')) {
      if (!line) continue;
      const [name, email] = line.split('\0');
      const key = email.toLowerCase();
      const c = byEmail.get(key);
      if (c) c.commits++;
      else byEmail.set(key, { name, email, commits: 1 });
    }
    return [...byEmail.values()];
  }

  // ------------------------------------------------------------------ diffs

  /**
   * The diff between two trees-ish, one entry per file, with the per-file and total limits applied.
   * Remembered per repository and pair of SHAs (compare, a merge request's changes and a commit's
   * diff ask for the same pairs again and again); each caller gets its own entries.
   */
  async diff(from: Sha, to: Sha): Promise<{ entries: DiffEntry[]; truncated: boolean }> {
    const d = await diffs.through(`${this.gitDir}\0${from}\0${to}`, () => this.computeDiff(from, to));
    return { entries: d.entries.map((e) => ({ ...e })), truncated: d.truncated };
  }

  private async computeDiff(from: Sha, to: Sha): Promise<{ entries: DiffEntry[]; truncated: boolean }> {
    // One diff (and one rename detection) for both parts: with `--raw -p -z`, git prints the raw
    // records (NUL-terminated fields), one NUL, then the patch (which -z leaves as it is).
    const out = await this.git(
      [
        '-c',
        'core.quotePath=false',
        '-c',
        `core.bigFileThreshold=${LIMITS.diffBlobBytes}`,
        'diff-tree',
        '-r',
        '-M',
        '--raw',
        '-p',
        '-z',
        '--no-color',
        '--no-ext-diff',
        '--no-commit-id',
        '--full-index',
        from,
        to,
      ],
      { maxOutputBytes: 256 * 1024 * 1024 },
    ).then((r) => r.stdout);
    let pos = 0;
    const field = (): string => {
      const end = out.indexOf(0, pos);
      const stop = end === -1 ? out.length : end;
      const text = out.toString('utf8', pos, stop);
      pos = stop + 1;
      return text;
    };
    const metas: { aMode: string; bMode: string; aSha: string; bSha: string; status: string; oldPath: string; newPath: string }[] = [];
    while (pos < out.length && out[pos] === 0x3a /* ':' */) {
      const head = field();
      const [aMode, bMode, aSha, bSha, status] = head.slice(1).split(' ');
      const oldPath = field();
      const newPath = status.startsWith('R') || status.startsWith('C') ? field() : oldPath;
      metas.push({ aMode, bMode, aSha, bSha, status, oldPath, newPath });
    }
    if (pos < out.length && out[pos] === 0) pos++;
    const truncated = metas.length > LIMITS.diffFiles;
    const shown = metas.slice(0, LIMITS.diffFiles);
    const chunks = splitPatch(out.toString('utf8', Math.min(pos, out.length)));
    let lines = 0;
    // Patch sections follow the raw records in order; a type change (file <-> symlink, status T)
    // is printed as two sections (delete, then add) and takes both.
    let cursor = 0;
    const entries = shown.map((m) => {
      const take = m.status.startsWith('T') ? 2 : 1;
      let diff = chunks.slice(cursor, cursor + take).join('\n');
      cursor += take;
      let tooLarge = false;
      const n = diff.split('\n').length;
      if (Buffer.byteLength(diff) > LIMITS.diffBytesPerFile || lines + n > LIMITS.diffLinesTotal) {
        diff = '';
        tooLarge = true;
      } else lines += n;
      return {
        oldPath: m.oldPath,
        newPath: m.newPath,
        aMode: m.aMode === '000000' ? '0' : m.aMode,
        bMode: m.bMode === '000000' ? '0' : m.bMode,
        diff,
        newFile: m.status === 'A',
        renamedFile: m.status.startsWith('R'),
        deletedFile: m.status === 'D',
        tooLarge,
      };
    });
    // git printed "Binary files ... differ" for blobs over diffBlobBytes too: those are too large, not binary
    await Promise.all(
      entries.map(async (e, i) => {
        if (e.tooLarge || !e.diff.startsWith('Binary files ')) return;
        const ids = [shown[i].aSha, shown[i].bSha].filter((id) => isSha(id) && id !== ZERO_SHA);
        const infos = await Promise.all(ids.map((id) => this.pool.info(this.gitDir, id)));
        if (infos.some((o) => o !== null && o.size > LIMITS.diffBlobBytes)) {
          e.diff = '';
          e.tooLarge = true;
        }
      }),
    );
    return { entries, truncated };
  }

  /** A commit's own changes (against its first parent, or the empty tree for a root commit). */
  commitDiff(c: Commit) {
    return this.diff(c.parentIds[0] ?? EMPTY_TREE, c.id);
  }

  // ------------------------------------------------------------------ archive

  /** Streams `git archive` of `sha` (tar or zip; gzip/bzip2 applied by git's own tar filters). */
  archive(sha: Sha, format: ArchiveFormat, prefix: string): ChildProcessWithoutNullStreams {
    const cfg = ['-c', 'tar.tar.gz.command=gzip -cn', '-c', 'tar.tar.bz2.command=bzip2 -c'];
    return this.runner.spawn([...cfg, 'archive', `--format=${format}`, `--prefix=${prefix}`, sha], {
      gitDir: this.gitDir,
      timeoutMs: LIMITS.archiveTimeoutMs,
    });
  }

  // ------------------------------------------------------------------ writes

  /** Moves `ref` from `oldSha` (ZERO_SHA: must not exist) to `newSha` (ZERO_SHA: delete), atomically. */
  async updateRef(ref: QualifiedRef, newSha: Sha, oldSha: Sha): Promise<void> {
    const args = newSha === ZERO_SHA ? ['update-ref', '-d', ref, oldSha] : ['update-ref', ref, newSha, oldSha];
    try {
      await this.git(args, { timeoutMs: LIMITS.writeTimeoutMs });
    } catch (e) {
      if (e instanceof GitError) throw new RefUpdateRejected(e.stderr.trim() || e.message);
      throw e;
    }
  }

  /** Points a server-managed ref (a merge request's head) at `sha`, whatever it pointed at before. */
  async setRef(ref: QualifiedRef, sha: Sha): Promise<void> {
    await this.git(['update-ref', ref, sha], { timeoutMs: LIMITS.writeTimeoutMs });
  }

  /**
   * Keeps `shas` reachable (8.17's Repository#keep_around): `refs/keep-around/<sha>` for each commit that
   * exists here and has no such ref yet, so that housekeeping (gc) never prunes a commit a pipeline or a
   * merge request points at, even after a force push. Unknown shas are skipped.
   */
  async keepAround(shas: readonly Sha[]): Promise<void> {
    for (const sha of new Set(shas)) {
      if (sha === ZERO_SHA || !isSha(sha)) continue;
      if ((await this.refSha(keepAroundRef(sha))) !== null) continue;
      if ((await this.commit(sha)) === null) continue;
      // created only when missing (old value zero): a concurrent keep-around of the same sha changes nothing
      await this.git(['update-ref', keepAroundRef(sha), sha, ZERO_SHA], { okCodes: [128], timeoutMs: LIMITS.writeTimeoutMs });
    }
  }

  /**
   * Whether `theirs` merges cleanly into `ours` (two full SHAs), without a work tree:
   * `git merge-tree --write-tree` (exit 0 clean, 1 conflicts). The result tree, or null on conflicts.
   */
  async mergeTree(ours: Sha, theirs: Sha): Promise<Sha | null> {
    const r = await this.git(['merge-tree', '--write-tree', '--no-messages', '-z', ours, theirs], {
      okCodes: [1],
      timeoutMs: LIMITS.writeTimeoutMs,
    });
    if (r.exitCode === 1) return null;
    const tree = r.stdout.toString('utf8').split('\0')[0].trim();
    if (!isSha(tree)) throw new Error('merge-tree gave no tree');
    return tree;
  }

  /**
   * Merges commit `theirs` into `refs/heads/<branch>` whose tip the caller saw as `ours`, without a
   * work tree: merge-tree, then a merge commit (always two parents) by `author`, then a
   * compare-and-swap update of the branch from `ours`. A push that moved the branch meanwhile makes
   * the update fail with RefUpdateRejected (nothing is overwritten); conflicts throw MergeConflict.
   */
  async merge(o: { branch: RefName; ours: Sha; theirs: Sha; message: string; author: Identity }): Promise<Sha> {
    const tree = await this.mergeTree(o.ours, o.theirs);
    if (tree === null) throw new MergeConflict('conflicts');
    const env = {
      GIT_AUTHOR_NAME: clean(o.author.name),
      GIT_AUTHOR_EMAIL: clean(o.author.email),
      GIT_COMMITTER_NAME: clean(o.author.name),
      GIT_COMMITTER_EMAIL: clean(o.author.email),
    };
    const commit = (
      await this.git(['commit-tree', tree, '-p', o.ours, '-p', o.theirs, '-F', '-'], {
        env,
        input: o.message,
        timeoutMs: LIMITS.writeTimeoutMs,
      })
    ).stdout
      .toString('utf8')
      .trim();
    if (!isSha(commit)) throw new Error('commit-tree gave no commit');
    await this.updateRef(branchRef(o.branch), commit, o.ours);
    return commit;
  }

  /**
   * Copies `refs/heads/<branch>` of another repository on this server (a fork; `otherGitDir` is a
   * storage path, never user input) into `localRef` here, with its objects, so that merges and diffs
   * between the two need no shared object store. The fetched SHA, or null when there is no such branch.
   */
  async fetchBranchFrom(otherGitDir: string, branch: RefName, localRef: QualifiedRef): Promise<Sha | null> {
    const r = await this.git(['fetch', '--quiet', '--no-tags', '--no-write-fetch-head', otherGitDir, `+refs/heads/${branch}:${localRef}`], {
      okCodes: [1, 128],
      timeoutMs: LIMITS.writeTimeoutMs,
    });
    if (r.exitCode !== 0) return null;
    return this.refSha(localRef);
  }

  async createAnnotatedTag(name: RefName, target: Sha, message: string, tagger: Identity): Promise<void> {
    const obj = await this.pool.info(this.gitDir, target);
    if (!obj) throw new RefUpdateRejected('target not found');
    const now = Math.floor(Date.now() / 1000);
    const text = `object ${obj.sha}\ntype ${obj.type}\ntag ${name}\ntagger ${clean(tagger.name)} <${clean(tagger.email)}> ${now} +0000\n\n${message.endsWith('\n') ? message : message + '\n'}`;
    const r = await this.git(['mktag'], { input: text, timeoutMs: LIMITS.writeTimeoutMs });
    await this.updateRef(tagRef(name), r.stdout.toString('utf8').trim() as Sha, ZERO_SHA);
  }

  /**
   * Commits file changes on top of `parent` (null: a root commit) without a working tree, through a
   * temporary index, then moves `refs/heads/<branch>` from `parent` to the new commit
   * (compare-and-swap: a push in between makes it fail with RefUpdateRejected).
   */
  async commitFiles(o: { branch: RefName; parent: Sha | null; message: string; author: Identity; changes: FileChange[] }): Promise<Sha> {
    const dir = await mkdtemp(join(tmpdir(), 'glv3-index-'));
    const env = {
      GIT_INDEX_FILE: join(dir, 'index'),
      GIT_AUTHOR_NAME: clean(o.author.name),
      GIT_AUTHOR_EMAIL: clean(o.author.email),
      GIT_COMMITTER_NAME: clean(o.author.name),
      GIT_COMMITTER_EMAIL: clean(o.author.email),
    };
    const opts = { env, timeoutMs: LIMITS.writeTimeoutMs };
    try {
      if (o.parent) await this.git(['read-tree', o.parent], opts);
      for (const c of o.changes) {
        const exists = o.parent ? (await this.pool.info(this.gitDir, `${o.parent}:${c.path}`)) !== null : false;
        if (c.action === 'create' && exists) throw new FileConflict('exists');
        if ((c.action === 'update' || c.action === 'delete') && !exists) throw new FileConflict('missing');
        if (c.action === 'delete') {
          // `--force-remove` needs a work tree; a mode-0 index-info entry removes the path in a bare repository
          await this.git(['update-index', '-z', '--index-info'], { ...opts, input: `0 ${ZERO_SHA}\t${c.path}\0` });
        } else {
          const blob = await this.git(['hash-object', '-w', '--stdin'], { ...opts, input: c.content });
          await this.git(['update-index', '--add', '--cacheinfo', `100644,${blob.stdout.toString('utf8').trim()},${c.path}`], opts);
        }
      }
      const tree = (await this.git(['write-tree'], opts)).stdout.toString('utf8').trim();
      if (o.parent) {
        const parentTree = (await this.pool.info(this.gitDir, `${o.parent}^{tree}`))?.sha;
        if (parentTree === tree) throw new FileConflict('unchanged');
      }
      const commitArgs = ['commit-tree', tree, ...(o.parent ? ['-p', o.parent] : []), '-F', '-'];
      const commit = (await this.git(commitArgs, { ...opts, input: o.message })).stdout.toString('utf8').trim() as Sha;
      await this.updateRef(branchRef(o.branch), commit, o.parent ?? ZERO_SHA);
      return commit;
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
}

/** The full SHAs git printed one per line. */
function shaLines(out: Buffer): Sha[] {
  return out
    .toString('utf8')
    .split('\n')
    .filter((l) => isSha(l));
}

/** Identity text for commit headers: no newlines or angle brackets. */
function clean(s: string): string {
  return s.replace(/[\n\r<>\0]/g, ' ').trim() || 'unknown';
}

/** Splits `git diff -p` output into per-file chunks (without the `diff --git` header block). */
function splitPatch(text: string): string[] {
  const out: string[] = [];
  const parts = text.split(/^diff --git .*$/m).slice(1);
  for (const part of parts) {
    const lines = part.split('\n');
    let i = 1;
    while (i < lines.length && !/^(--- |@@|Binary files)/.test(lines[i])) i++;
    out.push(lines.slice(i).join('\n'));
  }
  return out;
}
