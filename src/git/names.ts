/**
 * The names a caller may hand to git, as branded types. Only the parsers of this file (and the
 * parsers of git's own output in src/git) create them, so a `Repository` method that takes a
 * `RefName`, `Sha` or `RepoPath` can never receive an option (`--upload-pack=...`), a rev range
 * (`a..b`), a NUL byte or a path into `.git`: services parse user input once and get `null` for
 * anything unsafe, instead of calling a checker by convention (Gitea's AddDynamicArguments, in types).
 */

declare const brand: unique symbol;
type Brand<T, B extends string> = T & { readonly [brand]: B };

/** A full object id: 40 (SHA-1) or 64 (SHA-256) lowercase hex digits. */
export type Sha = Brand<string, 'Sha'>;
/** A revision a user may name: a branch, a tag, or a (possibly abbreviated) SHA. Never an option or a range. */
export type RefName = Brand<string, 'RefName'>;
/** A fully qualified ref (`refs/heads/<branch>`, `refs/tags/<tag>`), built from a RefName. */
export type QualifiedRef = Brand<string, 'QualifiedRef'>;
/** A path inside a tree: relative, `/`-separated, no empty, `.`, `..` or `.git` component; `''` is the root. */
export type RepoPath = Brand<string, 'RepoPath'>;

/** Whatever names a commit (or another object) for a read: a parsed revision or a known SHA. */
export type Rev = RefName | Sha | QualifiedRef;

export const ZERO_SHA = '0000000000000000000000000000000000000000' as Sha;

const FULL_SHA = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;
const ABBREV_SHA = /^[0-9a-f]{4,64}$/;
// eslint-disable-next-line no-control-regex -- matching control characters is this pattern's purpose
const CONTROL = /[\x00-\x1f\x7f]/;
// eslint-disable-next-line no-control-regex -- git's check-ref-format forbids control characters in ref names
const REF_FORBIDDEN = /[\x00-\x20\x7f~^:?*[\\]/;

/** A full object id (any case) → `Sha`; anything else → null. */
export function parseSha(raw: unknown): Sha | null {
  if (typeof raw !== 'string') return null;
  const s = raw.toLowerCase();
  return FULL_SHA.test(s) ? (s as Sha) : null;
}

/** Whether `s` is a full, lowercase object id (for values that come from git itself). */
export function isSha(s: string): s is Sha {
  return FULL_SHA.test(s);
}

/**
 * A revision as a user names it (branch, tag, SHA or SHA prefix) → `RefName`, or null when it could
 * be read as anything else: a leading `-` (an option), `..` (a range), `@{` (a reflog), a leading `/`,
 * NUL, control characters, spaces and git's revision operators (`~ ^ : ? * [ \`), over 255 characters.
 */
export function parseRef(raw: unknown): RefName | null {
  if (typeof raw !== 'string') return null;
  if (
    raw.length === 0 ||
    raw.length > 255 ||
    raw.startsWith('-') ||
    raw.startsWith('/') ||
    raw.includes('..') ||
    raw.includes('@{') ||
    REF_FORBIDDEN.test(raw)
  ) {
    return null;
  }
  return raw as RefName;
}

/**
 * A name for a new branch or tag → `RefName`: what `parseRef` takes, and also what git refuses in a
 * ref name (`//`, a trailing `/` or `.`, `.lock`, the name `@`, a component starting with `.`).
 */
export function parseNewRefName(raw: unknown): RefName | null {
  const ref = parseRef(raw);
  if (ref === null) return null;
  if (ref.endsWith('/') || ref.endsWith('.') || ref.endsWith('.lock') || ref.includes('//') || ref === '@') return null;
  if (ref.split('/').some((c) => c.startsWith('.') || c.endsWith('.lock'))) return null;
  return ref;
}

/** An abbreviated or full object id (4–64 hex digits, any case) → a `RefName` naming it; else null. */
export function parseObjectId(raw: unknown): RefName | null {
  if (typeof raw !== 'string') return null;
  const s = raw.toLowerCase();
  return ABBREV_SHA.test(s) ? (s as RefName) : null;
}

/** `refs/heads/<name>`. */
export function branchRef(name: RefName): QualifiedRef {
  return `refs/heads/${name}` as QualifiedRef;
}

/**
 * `refs/merge-requests/<iid>/head`: a merge request's source tip in the target repository (8.17's
 * MergeRequest#ref_path), written when it is created and whenever its source branch moves; from a fork,
 * the fork's commits are fetched there.
 */
export function mergeRequestHeadRef(iid: number): QualifiedRef {
  if (!Number.isSafeInteger(iid) || iid < 1) throw new Error('invalid merge request iid');
  return `refs/merge-requests/${iid}/head` as QualifiedRef;
}

/** `refs/keep-around/<sha>` (8.17's Repository#keep_around): keeps a commit reachable whatever happens to the branches. */
export function keepAroundRef(sha: Sha): QualifiedRef {
  if (!isSha(sha)) throw new Error('invalid sha');
  return `refs/keep-around/${sha}` as QualifiedRef;
}

/** `refs/tags/<name>`. */
export function tagRef(name: RefName): QualifiedRef {
  return `refs/tags/${name}` as QualifiedRef;
}

export type RepoPathProblem = 'invalid' | 'traversal' | 'git-dir';

export interface RepoPathOptions {
  /** A directory (the tree API): trailing slashes are dropped and `''` (the root) is allowed. */
  dir?: boolean;
}

/**
 * What is wrong with a path a user names inside a repository, or null when nothing is. Leading
 * slashes are ignored (GitLab strips them). `traversal`: a `..` or `.` component; `git-dir`: a `.git`
 * component in any case (git refuses to write one, and no tree should carry one); `invalid`: empty
 * (unless `dir`), an empty component (`a//b`, a trailing `/`), NUL or another control character,
 * over 4096 bytes.
 */
export function repoPathProblem(raw: string, opts: RepoPathOptions = {}): RepoPathProblem | null {
  let s = raw.replace(/^\/+/, '');
  if (opts.dir) s = s.replace(/\/+$/, '');
  if (s.length > 4096 || CONTROL.test(s)) return 'invalid';
  if (s === '') return opts.dir ? null : 'invalid';
  const parts = s.split('/');
  if (parts.some((p) => p === '..' || p === '.')) return 'traversal';
  if (parts.some((p) => p.toLowerCase() === '.git')) return 'git-dir';
  if (parts.some((p) => p === '')) return 'invalid';
  return null;
}

/** A path inside a repository → `RepoPath` (leading slashes dropped), or null (see repoPathProblem). */
export function parseRepoPath(raw: unknown, opts: RepoPathOptions = {}): RepoPath | null {
  if (typeof raw !== 'string' || repoPathProblem(raw, opts) !== null) return null;
  let s = raw.replace(/^\/+/, '');
  if (opts.dir) s = s.replace(/\/+$/, '');
  return s as RepoPath;
}

/** The root of a tree. */
export const ROOT_PATH = '' as RepoPath;
