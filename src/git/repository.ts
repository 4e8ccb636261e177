import { ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CatFilePool } from './cat-file-pool';
import { GitError, GitRunner } from './git-runner';
import { Branch, Commit, DiffEntry, parseCommit, parseTagObject, parseTree, Tag, TreeEntry, ZERO_SHA } from './objects';

export const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';

const FULL_SHA = /^[0-9a-f]{40}([0-9a-f]{24})?$/;

/** Commit counts of `log` by repository, SHA, window and path (immutable), most recently used last. */
const logCounts = new Map<string, number>();
const LOG_COUNTS_MAX = 2000;

function rememberCount(key: string, n: number): void {
  logCounts.delete(key);
  logCounts.set(key, n);
  if (logCounts.size > LOG_COUNTS_MAX) logCounts.delete(logCounts.keys().next().value as string);
}

/** Merge bases by repository and pair of full SHAs (immutable), most recently used last. */
const mergeBases = new Map<string, string | null>();
const MERGE_BASES_MAX = 2000;

/** Limits on what one call returns (stated in the README). */
export const LIMITS = {
  diffFiles: 1000,
  diffBytesPerFile: 200 * 1024,
  diffLinesTotal: 50_000,
  compareCommits: 1000,
  contributorsCommits: 2000,
  readTimeoutMs: 30_000,
  writeTimeoutMs: 60_000,
  archiveTimeoutMs: 10 * 60_000,
};

/** A revision a user may name: a branch, tag or SHA; never an option, a rev range or a search. */
export function isSafeRef(ref: string): boolean {
  return (
    ref.length > 0 &&
    ref.length <= 255 &&
    !ref.startsWith('-') &&
    !ref.startsWith('/') &&
    !ref.includes('..') &&
    !ref.includes('@{') &&
    !/[\x00-\x20\x7f~^:?*[\\]/.test(ref)
  );
}

/** A repository path a user may name: relative, no `..` segment, no NUL or newline. */
export function isSafePath(path: string): boolean {
  if (path.length > 4096 || /[\0\n\r]/.test(path)) return false;
  return !path.split('/').some((seg) => seg === '..' || seg === '.');
}

export interface Identity {
  name: string;
  email: string;
}

export type FileChange =
  | { action: 'create' | 'update'; path: string; content: Buffer }
  | { action: 'delete'; path: string };

export class RefUpdateRejected extends Error {}
export class FileConflict extends Error {}
/** The two sides of a merge change the same lines (or files) in incompatible ways. */
export class MergeConflict extends Error {}

const SHA = /^[0-9a-f]{40}$/;

/** One bare repository: reads through the shared cat-file pool, everything else through the runner. */
export class Repository {
  constructor(
    readonly gitDir: string,
    private readonly runner: GitRunner,
    private readonly pool: CatFilePool,
  ) {}

  private git(args: string[], opts: { input?: string | Buffer; okCodes?: number[]; timeoutMs?: number; env?: Record<string, string>; maxOutputBytes?: number } = {}) {
    return this.runner.run(args, { gitDir: this.gitDir, timeoutMs: LIMITS.readTimeoutMs, ...opts });
  }

  // ------------------------------------------------------------------ objects

  async commit(ref: string): Promise<Commit | null> {
    if (!isSafeRef(ref)) return null;
    const o = await this.pool.read(this.gitDir, `${ref}^{commit}`);
    return o && o.type === 'commit' ? parseCommit(o.sha, o.data) : null;
  }

  private async commitsBySha(shas: string[]): Promise<Commit[]> {
    const objs = await Promise.all(shas.map((s) => this.pool.read(this.gitDir, s)));
    return objs.filter((o) => o && o.type === 'commit').map((o) => parseCommit(o!.sha, o!.data));
  }

  /** The tree at `path` of `ref`; null when the ref or path does not exist or is not a tree. */
  async tree(ref: string, path: string): Promise<TreeEntry[] | null> {
    if (!isSafeRef(ref) || !isSafePath(path)) return null;
    const clean = path.replace(/^\/+|\/+$/g, '');
    const o = await this.pool.read(this.gitDir, clean ? `${ref}^{commit}:${clean}` : `${ref}^{tree}`);
    return o && o.type === 'tree' ? parseTree(o.data) : null;
  }

  /** The blob at `path` of `ref`: { sha, data } or null. */
  async blobAt(ref: string, path: string): Promise<{ sha: string; data: Buffer } | null> {
    if (!isSafeRef(ref) || !isSafePath(path)) return null;
    const clean = path.replace(/^\/+/, '');
    if (!clean) return null;
    const o = await this.pool.read(this.gitDir, `${ref}^{commit}:${clean}`);
    return o && o.type === 'blob' ? { sha: o.sha, data: o.data } : null;
  }

  async blob(sha: string): Promise<Buffer | null> {
    if (!/^[0-9a-f]{4,40}$/i.test(sha)) return null;
    const o = await this.pool.read(this.gitDir, sha);
    return o && o.type === 'blob' ? o.data : null;
  }

  // ------------------------------------------------------------------ refs

  private async refs(prefix: 'refs/heads/' | 'refs/tags/'): Promise<{ name: string; sha: string; type: string; peeled: string }[]> {
    const r = await this.git(['for-each-ref', '--format=%(refname)%00%(objectname)%00%(objecttype)%00%(*objectname)', prefix]);
    return r.stdout
      .toString('utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => {
        const [ref, sha, type, peeled] = line.split('\0');
        return { name: ref.slice(prefix.length), sha, type, peeled };
      });
  }

  async branchNames(): Promise<string[]> {
    return (await this.refs('refs/heads/')).map((r) => r.name);
  }

  /** All branches with their commits, sorted by name. */
  async branches(): Promise<Branch[]> {
    const refs = await this.refs('refs/heads/');
    const commits = new Map((await this.commitsBySha([...new Set(refs.map((r) => r.sha))])).map((c) => [c.id, c]));
    return refs
      .filter((r) => commits.has(r.sha))
      .map((r) => ({ name: r.name, commit: commits.get(r.sha)! }))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  async branch(name: string): Promise<Branch | null> {
    if (!isSafeRef(name)) return null;
    const sha = await this.refSha(`refs/heads/${name}`);
    if (!sha) return null;
    const [commit] = await this.commitsBySha([sha]);
    return commit ? { name, commit } : null;
  }

  /** All tags (reverse-alphabetical), with annotations and target commits. */
  async tags(): Promise<Tag[]> {
    const refs = await this.refs('refs/tags/');
    return this.describeTags(refs);
  }

  async tag(name: string): Promise<Tag | null> {
    if (!isSafeRef(name)) return null;
    const refs = (await this.refs('refs/tags/')).filter((r) => r.name === name);
    return (await this.describeTags(refs))[0] ?? null;
  }

  private async describeTags(refs: { name: string; sha: string; type: string; peeled: string }[]): Promise<Tag[]> {
    const tagObjects = await Promise.all(
      refs.map((r) => (r.type === 'tag' ? this.pool.read(this.gitDir, r.sha) : Promise.resolve(null))),
    );
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
  async refSha(ref: string): Promise<string | null> {
    const r = await this.git(['for-each-ref', '--format=%(refname)%00%(objectname)', ref]);
    for (const line of r.stdout.toString('utf8').split('\n')) {
      const [name, sha] = line.split('\0');
      if (name === ref) return sha;
    }
    return null;
  }

  async headBranch(): Promise<string | null> {
    const r = await this.git(['symbolic-ref', '--quiet', 'HEAD'], { okCodes: [1, 128] });
    const ref = r.stdout.toString('utf8').trim();
    return ref.startsWith('refs/heads/') ? ref.slice(11) : null;
  }

  // ------------------------------------------------------------------ history

  /** Commits reachable from `sha`, newest first, with paging and an optional date window. */
  async log(sha: string, o: { offset: number; limit: number; since?: Date; until?: Date; path?: string }): Promise<{ commits: Commit[]; total: number }> {
    const window: string[] = [];
    if (o.since) window.push(`--since=${o.since.toISOString()}`);
    if (o.until) window.push(`--until=${o.until.toISOString()}`);
    const pathArgs = o.path ? ['--', o.path] : ['--'];
    // The count walks the whole history (the costly part of a page): history under a full SHA never
    // changes, so it is remembered per repository, SHA, window and path.
    const key = FULL_SHA.test(sha) ? [this.gitDir, sha, ...window, ...pathArgs].join('\0') : undefined;
    const known = key === undefined ? undefined : logCounts.get(key);
    const [list, total] = await Promise.all([
      this.git(['rev-list', `--max-count=${o.limit}`, `--skip=${o.offset}`, ...window, sha, ...pathArgs]),
      known !== undefined
        ? (rememberCount(key as string, known), known)
        : this.git(['rev-list', '--count', ...window, sha, ...pathArgs]).then((count) => {
            const n = Number(count.stdout.toString('utf8').trim()) || 0;
            if (key !== undefined) rememberCount(key, n);
            return n;
          }),
    ]);
    const shas = list.stdout.toString('utf8').split('\n').filter(Boolean);
    return { commits: await this.commitsBySha(shas), total };
  }

  async lastCommitFor(sha: string, path: string): Promise<string | null> {
    const r = await this.git(['rev-list', '--max-count=1', sha, '--', path]);
    return r.stdout.toString('utf8').trim() || null;
  }

  async isAncestor(ancestor: string, descendant: string): Promise<boolean> {
    const r = await this.git(['merge-base', '--is-ancestor', ancestor, descendant], { okCodes: [1] });
    return r.exitCode === 0;
  }

  async mergeBase(a: string, b: string): Promise<string | null> {
    // the merge base of two commits never changes: remembered for full SHAs
    const key = FULL_SHA.test(a) && FULL_SHA.test(b) ? `${this.gitDir}\0${a}\0${b}` : undefined;
    if (key !== undefined && mergeBases.has(key)) {
      const known = mergeBases.get(key) as string | null;
      mergeBases.delete(key);
      mergeBases.set(key, known);
      return known;
    }
    const r = await this.git(['merge-base', a, b], { okCodes: [1] });
    const base = r.stdout.toString('utf8').trim() || null;
    if (key !== undefined) {
      mergeBases.set(key, base);
      if (mergeBases.size > MERGE_BASES_MAX) mergeBases.delete(mergeBases.keys().next().value as string);
    }
    return base;
  }

  /** Commits in `to` and not in `from`, oldest first (at most LIMITS.compareCommits). */
  async commitsBetween(from: string, to: string): Promise<{ commits: Commit[]; truncated: boolean }> {
    const exclude = from === ZERO_SHA ? [] : [`^${from}`];
    const r = await this.git(['rev-list', '--reverse', `--max-count=${LIMITS.compareCommits + 1}`, to, ...exclude, '--']);
    let shas = r.stdout.toString('utf8').split('\n').filter(Boolean);
    const truncated = shas.length > LIMITS.compareCommits;
    if (truncated) shas = shas.slice(0, LIMITS.compareCommits);
    return { commits: await this.commitsBySha(shas), truncated };
  }

  /** Authors of the first 2000 non-merge commits, in order of first appearance. */
  async contributors(sha: string): Promise<{ name: string; email: string; commits: number }[]> {
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

  /** The diff between two trees-ish, one entry per file, with the per-file and total limits applied. */
  async diff(from: string, to: string): Promise<{ entries: DiffEntry[]; truncated: boolean }> {
    // One diff (and one rename detection) for both parts: with `--raw -p -z`, git prints the raw
    // records (NUL-terminated fields), one NUL, then the patch (which -z leaves as it is).
    const out = await this.git(
      ['-c', 'core.quotePath=false', 'diff-tree', '-r', '-M', '--raw', '-p', '-z', '--no-color', '--no-ext-diff', '--no-commit-id', '--full-index', from, to],
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
    const metas: { aMode: string; bMode: string; status: string; oldPath: string; newPath: string }[] = [];
    while (pos < out.length && out[pos] === 0x3a /* ':' */) {
      const head = field();
      const [aMode, bMode, , , status] = head.slice(1).split(' ');
      const oldPath = field();
      const newPath = status.startsWith('R') || status.startsWith('C') ? field() : oldPath;
      metas.push({ aMode, bMode, status, oldPath, newPath });
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
    return { entries, truncated };
  }

  /** A commit's own changes (against its first parent, or the empty tree for a root commit). */
  commitDiff(c: Commit) {
    return this.diff(c.parentIds[0] ?? EMPTY_TREE, c.id);
  }

  // ------------------------------------------------------------------ archive

  /** Streams `git archive` of `sha` (tar or zip; gzip/bzip2 applied by git's own tar filters). */
  archive(sha: string, format: 'tar' | 'tar.gz' | 'tar.bz2' | 'zip', prefix: string): ChildProcessWithoutNullStreams {
    const cfg = ['-c', 'tar.tar.gz.command=gzip -cn', '-c', 'tar.tar.bz2.command=bzip2 -c'];
    return this.runner.spawn([...cfg, 'archive', `--format=${format}`, `--prefix=${prefix}`, sha], {
      gitDir: this.gitDir,
      timeoutMs: LIMITS.archiveTimeoutMs,
    });
  }

  // ------------------------------------------------------------------ writes

  /** Moves `ref` from `oldSha` (ZERO_SHA: must not exist) to `newSha` (ZERO_SHA: delete), atomically. */
  async updateRef(ref: string, newSha: string, oldSha: string): Promise<void> {
    const args = newSha === ZERO_SHA ? ['update-ref', '-d', ref, oldSha] : ['update-ref', ref, newSha, oldSha];
    try {
      await this.git(args, { timeoutMs: LIMITS.writeTimeoutMs });
    } catch (e) {
      if (e instanceof GitError) throw new RefUpdateRejected(e.stderr.trim() || e.message);
      throw e;
    }
  }

  /**
   * Whether `theirs` merges cleanly into `ours` (two full SHAs), without a work tree:
   * `git merge-tree --write-tree` (exit 0 clean, 1 conflicts). The result tree, or null on conflicts.
   */
  async mergeTree(ours: string, theirs: string): Promise<string | null> {
    if (!SHA.test(ours) || !SHA.test(theirs)) throw new Error('merge-tree needs full SHAs');
    const r = await this.git(['merge-tree', '--write-tree', '--no-messages', '-z', ours, theirs], {
      okCodes: [1],
      timeoutMs: LIMITS.writeTimeoutMs,
    });
    if (r.exitCode === 1) return null;
    const tree = r.stdout.toString('utf8').split('\0')[0].trim();
    if (!SHA.test(tree)) throw new Error('merge-tree gave no tree');
    return tree;
  }

  /**
   * Merges commit `theirs` into `refs/heads/<branch>` whose tip the caller saw as `ours`, without a
   * work tree: merge-tree, then a merge commit (always two parents) by `author`, then a
   * compare-and-swap update of the branch from `ours`. A push that moved the branch meanwhile makes
   * the update fail with RefUpdateRejected (nothing is overwritten); conflicts throw MergeConflict.
   */
  async merge(o: { branch: string; ours: string; theirs: string; message: string; author: Identity }): Promise<string> {
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
    await this.updateRef(`refs/heads/${o.branch}`, commit, o.ours);
    return commit;
  }

  /**
   * Copies `refs/heads/<branch>` of another repository on this server (a fork) into `localRef` here,
   * with its objects, so that merges and diffs between the two need no shared object store.
   * Returns the fetched SHA, or null when the branch does not exist there.
   */
  async fetchBranchFrom(otherGitDir: string, branch: string, localRef: string): Promise<string | null> {
    if (!isSafeRef(branch) || !/^refs\/merge-requests\/\d+\/head$/.test(localRef)) return null;
    const r = await this.git(['fetch', '--quiet', '--no-tags', '--no-write-fetch-head', otherGitDir, `+refs/heads/${branch}:${localRef}`], {
      okCodes: [1, 128],
      timeoutMs: LIMITS.writeTimeoutMs,
    });
    if (r.exitCode !== 0) return null;
    return this.refSha(localRef);
  }

  async createAnnotatedTag(name: string, target: string, message: string, tagger: Identity): Promise<void> {
    const obj = await this.pool.read(this.gitDir, target);
    if (!obj) throw new RefUpdateRejected('target not found');
    const now = Math.floor(Date.now() / 1000);
    const text = `object ${obj.sha}\ntype ${obj.type}\ntag ${name}\ntagger ${clean(tagger.name)} <${clean(tagger.email)}> ${now} +0000\n\n${message.endsWith('\n') ? message : message + '\n'}`;
    const r = await this.git(['mktag'], { input: text, timeoutMs: LIMITS.writeTimeoutMs });
    await this.updateRef(`refs/tags/${name}`, r.stdout.toString('utf8').trim(), ZERO_SHA);
  }

  /**
   * Commits file changes on top of `parent` (null: a root commit) without a working tree, through a
   * temporary index, then moves `refs/heads/<branch>` from `parent` to the new commit
   * (compare-and-swap: a push in between makes it fail with RefUpdateRejected).
   */
  async commitFiles(o: {
    branch: string;
    parent: string | null;
    message: string;
    author: Identity;
    changes: FileChange[];
  }): Promise<string> {
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
        const exists = o.parent ? (await this.pool.read(this.gitDir, `${o.parent}:${c.path}`)) !== null : false;
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
        const parentTree = (await this.pool.read(this.gitDir, `${o.parent}^{tree}`))?.sha;
        if (parentTree === tree) throw new FileConflict('unchanged');
      }
      const commitArgs = ['commit-tree', tree, ...(o.parent ? ['-p', o.parent] : []), '-F', '-'];
      const commit = (await this.git(commitArgs, { ...opts, input: o.message })).stdout.toString('utf8').trim();
      await this.updateRef(`refs/heads/${o.branch}`, commit, o.parent ?? ZERO_SHA);
      return commit;
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
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
