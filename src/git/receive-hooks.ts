import { chmodSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Server-side git hooks for pushes over smart HTTP and SSH. `update` runs once for each ref a push
 * updates, after the objects arrive and before that ref moves: refusing (exit 1) rejects that ref
 * alone — git reports it `! [remote rejected] <ref> (hook declined)` and applies the push's other refs
 * (issue 39: `git push --mirror` of a clone of a GitLab repository lands its branches and tags while the
 * refs the server keeps itself are refused one by one). `post-receive` appends the applied updates to
 * GLV3_PUSH_LOG for the server to process.
 * Both are POSIX sh scripts (dash runs them; builtins plus `git merge-base`): a Node hook cost
 * ~90 ms of CPU to start, most of a push's cost. The rules come from the server in the environment
 * (`PushLog.env`); the hook only evaluates them:
 *  - GLV3_CAN_PUSH, GLV3_CAN_PUSH_PROTECTED, GLV3_CAN_CHANGE_TAGS: `0` or `1`;
 *  - only refs/heads/* and refs/tags/* are pushed: any other ref is refused — among them the
 *    namespaces the server writes itself (refs/merge-requests/, refs/keep-around/, refs/environments/,
 *    refs/pipelines/: SERVER_MANAGED_REF_PREFIXES);
 *  - a tag that exists (the update's old value is not zero: it is moved or deleted) needs GLV3_CAN_CHANGE_TAGS
 *    (master and above, GitLab 8.17's `tag_checks` in lib/gitlab/checks/change_access.rb); creating a tag
 *    needs only GLV3_CAN_PUSH;
 *  - GLV3_PROTECTED_BRANCHES: one protected-branch pattern a line, `<developers can push: 0|1><developers
 *    can merge: 0|1> <pattern>`. As GitLab 8.17 (`protected_branches.matching(ref)` and `any?` of their
 *    access levels), a branch is protected when any pattern matches it, and developers may push to it
 *    when any matching pattern lets them (`branchProtection`, the same rule for the API). Besides masters
 *    (GLV3_CAN_PUSH_PROTECTED), a pusher with GLV3_CAN_PUSH may update it when developers may push, and
 *    create it when developers may merge (8.17's `can_push_to_branch?`: `!branch_exists && can_merge_to_branch?`).
 *    A pattern that does not fit on a line (a newline or a NUL, which no ref name has) is written as `x`:
 *    the hook treats every branch it reaches as protected, granting developers nothing.
 * In a pattern `*` matches any string and every other character only itself. The script never evaluates
 * a value nor uses one as a glob: the pattern is cut at each `*` and its segments are compared as quoted
 * expansions (`case $s in "$seg"*)`, `${s#*"$seg"}`): the first as a prefix, the middle ones leftmost,
 * the last as a suffix.
 */
const UPDATE_SH = `#!/bin/sh
# update REF OLD NEW (git runs it once for each ref a push updates)
deny() {
  printf 'GitLab: %s\\n' "$1" >&2
  exit 1
}
# matches PATTERN NAME
matches() {
  p=$1 s=$2
  case $p in
  *'*'*) ;;
  *) [ "x$p" = "x$s" ]; return ;;
  esac
  seg=\${p%%'*'*}
  case $s in "$seg"*) s=\${s#"$seg"} ;; *) return 1 ;; esac
  p=\${p#*'*'}
  while :; do
    case $p in
    *'*'*)
      seg=\${p%%'*'*}
      p=\${p#*'*'}
      case $s in *"$seg"*) s=\${s#*"$seg"} ;; *) return 1 ;; esac
      ;;
    *)
      case $s in *"$p") return 0 ;; *) return 1 ;; esac
      ;;
    esac
  done
}
# protection BRANCH: pb=1 when any pattern matches it ('' when none); dp=1 when a matching pattern lets
# developers push, dm=1 when one lets them merge
protection() {
  pb= dp=0 dm=0
  while IFS= read -r line; do
    case $line in
    '') ;;
    [01][01]' '*)
      if matches "\${line#???}" "$1"; then
        pb=1
        case $line in 1*) dp=1 ;; esac
        case $line in ?1*) dm=1 ;; esac
      fi
      ;;
    *) pb=1 ;;
    esac
  done <<RULES
$GLV3_PROTECTED_BRANCHES
RULES
}
case $GLV3_CAN_PUSH$GLV3_CAN_PUSH_PROTECTED$GLV3_CAN_CHANGE_TAGS in
[01][01][01]) ;;
*) deny 'push rules missing' ;;
esac
zero=0000000000000000000000000000000000000000
ref=$1 old=$2 new=$3
case $ref in
refs/tags/*)
  [ "$GLV3_CAN_PUSH" = 1 ] || deny 'You are not allowed to push code to this project.'
  [ "$old" = $zero ] || [ "$GLV3_CAN_CHANGE_TAGS" = 1 ] || deny 'You are not allowed to change existing tags on this project.'
  exit 0
  ;;
refs/heads/*) ;;
*) deny "You are not allowed to push to $ref" ;;
esac
[ "$GLV3_CAN_PUSH" = 1 ] || deny 'You are not allowed to push code to this project.'
branch=\${ref#refs/heads/}
protection "$branch"
[ -n "$pb" ] || exit 0
[ "$new" != $zero ] || deny "You are not allowed to delete protected branch $branch."
if [ "$old" != $zero ] && ! git merge-base --is-ancestor "$old" "$new" </dev/null >/dev/null 2>&1; then
  deny 'You are not allowed to force push code to a protected branch on this project.'
fi
[ "$GLV3_CAN_PUSH_PROTECTED" = 1 ] || [ "$dp" = 1 ] || { [ "$old" = $zero ] && [ "$dm" = 1 ]; } ||
  deny 'You are not allowed to push code to protected branches on this project.'
exit 0
`;

const POST_RECEIVE_SH = `#!/bin/sh
[ -n "$GLV3_PUSH_LOG" ] || GLV3_PUSH_LOG=/dev/null
while IFS= read -r line || [ -n "$line" ]; do printf '%s\\n' "$line"; done >>"$GLV3_PUSH_LOG"
`;

/**
 * Whether a protected-branch name protects `branch`: the name literally, apart from `*` (any run of
 * characters). The same rule as the hook's `matches` in UPDATE_SH; both are tested against
 * PROTECTED_BRANCH_CASES (protected-branch-cases.ts).
 */
export function protectedBranchMatches(pattern: string, branch: string): boolean {
  if (!pattern.includes('*')) return pattern === branch;
  const [first, ...rest] = pattern.split('*');
  const last = rest.pop() as string;
  if (!branch.startsWith(first) || !branch.endsWith(last) || branch.length < first.length + last.length) return false;
  let at = first.length;
  const end = branch.length - last.length;
  for (const seg of rest) {
    const found = branch.indexOf(seg, at);
    if (found < 0 || found + seg.length > end) return false;
    at = found + seg.length;
  }
  return true;
}

/** A protected-branch line of GLV3_PROTECTED_BRANCHES (see UPDATE_SH). */
const protectedLine = (p: ProtectedBranchRule) => (/[\n\0]/.test(p.name) ? 'x' : `${p.developersCanPush ? 1 : 0}${p.developersCanMerge ? 1 : 0} ${p.name}`);

/** One protected-branch rule of a project: its name or `*` pattern and what it leaves to developers. */
export interface ProtectedBranchRule {
  name: string;
  developersCanPush: boolean;
  developersCanMerge?: boolean;
}

/** How a branch is protected under a project's rules. */
export interface BranchProtection {
  protected: boolean;
  developersCanPush: boolean;
  developersCanMerge: boolean;
}

/**
 * The protection of `branch`, as GitLab 8.17: protected when any rule's name matches it
 * (`protectedBranchMatches`), and developers may push (merge) when any matching rule lets them — the
 * rule the update hook applies to pushes (UPDATE_SH's `protection`), and the API to its own
 * writes, merges and the branch JSON.
 */
export function branchProtection(rules: readonly ProtectedBranchRule[], branch: string): BranchProtection {
  const out: BranchProtection = { protected: false, developersCanPush: false, developersCanMerge: false };
  for (const r of rules) {
    if (!protectedBranchMatches(r.name, branch)) continue;
    out.protected = true;
    out.developersCanPush ||= r.developersCanPush;
    out.developersCanMerge ||= !!r.developersCanMerge;
  }
  return out;
}

/**
 * May a pusher write `branch` (its protection `p`)? Not protected: push access. Protected: masters
 * (`canPushProtected`), or a developer when developers may push — or create it (`creating`) when they may
 * merge, as 8.17's `can_push_to_branch?`. The hook applies the same rule to each pushed ref.
 */
export function mayWriteBranch(p: BranchProtection, who: { canPush: boolean; canPushProtected: boolean }, creating = false): boolean {
  if (!who.canPush) return false;
  return !p.protected || who.canPushProtected || p.developersCanPush || (creating && p.developersCanMerge);
}

/** May a user merge into `branch`? 8.17's `can_be_merged_by?`: push access to it, or merge access (developers may merge). */
export function mayMergeIntoBranch(p: BranchProtection, who: { canPush: boolean; canPushProtected: boolean }): boolean {
  return mayWriteBranch(p, who) || (who.canPush && p.protected && p.developersCanMerge);
}

/**
 * The ref namespaces the server writes itself and a push never may (issue 39): merge requests' heads
 * (`refs/merge-requests/<iid>/head`, MergeRequest#ref_path in 8.17), kept shas (`refs/keep-around/<sha>`,
 * Repository#keep_around), environments' and pipelines' refs. The update hook refuses every ref outside
 * refs/heads/ and refs/tags/, these among them.
 */
export const SERVER_MANAGED_REF_PREFIXES = ['refs/merge-requests/', 'refs/keep-around/', 'refs/environments/', 'refs/pipelines/'] as const;

/** One ref a push moved, as git's post-receive hook reports it. */
export interface RefUpdate {
  oldSha: string;
  newSha: string;
  ref: string;
}

/**
 * The hooks' side channel of one push, whatever the transport: the environment that hands the rules to
 * the update hook and a log file to post-receive, and the applied updates read back once git is done.
 */
export class PushLog {
  private constructor(
    private readonly dir: string,
    private readonly rules: PushRules,
  ) {}

  static async open(rules: PushRules | undefined): Promise<PushLog | undefined> {
    return rules ? new PushLog(await mkdtemp(join(tmpdir(), 'glv3-push-')), rules) : undefined;
  }

  get env(): Record<string, string> {
    return {
      GLV3_CAN_PUSH: this.rules.canPush ? '1' : '0',
      GLV3_CAN_PUSH_PROTECTED: this.rules.canPushProtected ? '1' : '0',
      GLV3_CAN_CHANGE_TAGS: this.rules.canChangeTags ? '1' : '0',
      GLV3_PROTECTED_BRANCHES: this.rules.protected.map(protectedLine).join('\n'),
      GLV3_PUSH_LOG: join(this.dir, 'updates'),
    };
  }

  /** The updates git applied (none unless it succeeded); the log is removed. */
  async close(succeeded: boolean): Promise<RefUpdate[]> {
    try {
      if (!succeeded) return [];
      const text = await readFile(join(this.dir, 'updates'), 'utf8').catch(() => '');
      return text
        .split('\n')
        .filter(Boolean)
        .map((l) => {
          const [oldSha, newSha, ref] = l.split(' ');
          return { oldSha, newSha, ref };
        });
    } finally {
      await rm(this.dir, { recursive: true, force: true });
    }
  }
}

export interface PushRules {
  canPush: boolean;
  canPushProtected: boolean;
  /** May move and delete existing tags (GitLab 8: `admin_project`, master and above); creating one needs `canPush` only. */
  canChangeTags: boolean;
  protected: ProtectedBranchRule[];
}

/** The file of the pack-objects hook (`uploadpack.packObjectsHook`) in the hooks folder. */
export const PACK_OBJECTS_HOOK = 'pack-objects-cache';
/** Where the pack-objects hook keeps packs (`<dataDir>/pack-objects-cache`). */
export const packObjectsCacheDir = (dataDir: string) => join(dataDir, 'pack-objects-cache');

export const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * The pack-objects cache, as Gitaly's: git's `upload-pack` runs this instead of `git pack-objects`
 * (`"$@"` is the command it would have run, stdin its input: the wants, haves and shallow lines).
 * The pack is a function of that input, the arguments and the repository — a fetch changes nothing,
 * and upload-pack has already refused wants that are not advertised tips — so an identical fetch
 * (CI jobs and clones of the same tip, the reference load's pulls) is answered with the bytes of the
 * first one while they are fresh (GitService.prunePackCache removes them after a few minutes). The
 * key names the repository's own folder: no pack is ever served from another repository. Any
 * failure of the cache's own machinery falls back to running pack-objects as git would have; a pack
 * is kept only when pack-objects succeeded.
 */
function packObjectsHookScript(cacheDir: string): string {
  // Each process started costs ~2-6 ms of CPU on the reference machine, and 20 pulls a second run this
  // script 20 times a second: a hit starts three (cat, sha256sum, cat), no temporary file. The input
  // (want, have and shallow lines, then an empty line: text) is kept in a variable; $(...) drops its
  // trailing newlines and printf gives them back (an empty line ends pack-objects' list, as its end does).
  // A miss is made once: the first fetch takes the key's lock (`mkdir`, atomic) and records its pid; an
  // identical fetch meanwhile waits for the pack (polling every 0.1 s) instead of running a pack-objects
  // of its own — under the reference load's 20 identical pulls a second, every expiry of the pack
  // started ~10 of them at once. A lock whose maker is gone (killed with its fetch: no trap runs) is
  // taken over; after ~6 s of waiting a fetch makes its pack uncached rather than wait longer. The lock's
  // taker looks for the pack again: it may have landed between the last look and the lock.
  return `#!/bin/sh
cache=${shellQuote(cacheDir)}
command -v sha256sum >/dev/null 2>&1 || exec "$@"
input=$(cat) || exit 1
key=$(printf '%s\\0' "$(pwd -P)" "$@" "$input" | sha256sum) || exit 1
key=\${key%% *}
pack="$cache/$key.pack"
[ -f "$pack" ] && exec cat "$pack"
lock="$cache/.$key.lock"
polls=0
until mkdir "$lock" 2>/dev/null; do
  [ -f "$pack" ] && exec cat "$pack"
  pid=
  { read -r pid <"$lock/pid"; } 2>/dev/null
  if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then
    rm -rf "$lock"
    continue
  fi
  polls=$((polls + 1))
  if [ $polls -gt 60 ]; then
    printf '%s\\n\\n' "$input" | "$@"
    exit
  fi
  sleep 0.1
done
echo $$ >"$lock/pid"
tmp="$cache/.$key.$$"
trap 'rm -f "$tmp" "$tmp.status"; rm -rf "$lock"' EXIT
if [ -f "$pack" ]; then
  cat "$pack"
  exit
fi
{ printf '%s\\n\\n' "$input" | "$@"; echo $? > "$tmp.status"; } | tee "$tmp"
status=$(cat "$tmp.status" 2>/dev/null || echo 1)
[ "$status" = 0 ] && mv -f "$tmp" "$pack"
exit "$status"
`;
}

/** Writes the hook scripts under `<dataDir>/git-hooks` and returns that folder (for core.hooksPath). */
export function installHooks(dataDir: string): string {
  const dir = join(dataDir, 'git-hooks');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  mkdirSync(packObjectsCacheDir(dataDir), { recursive: true, mode: 0o700 });
  writeFileSync(join(dir, PACK_OBJECTS_HOOK), packObjectsHookScript(packObjectsCacheDir(dataDir)), { mode: 0o700 });
  chmodSync(join(dir, PACK_OBJECTS_HOOK), 0o700);
  // the per-push hook of earlier versions (one refusal failed the whole push), and its Node form before that
  for (const stale of ['pre-receive', 'pre-receive.js']) rmSync(join(dir, stale), { force: true });
  for (const [name, script] of [
    ['update', UPDATE_SH],
    ['post-receive', POST_RECEIVE_SH],
  ]) {
    writeFileSync(join(dir, name), script, { mode: 0o700 });
    chmodSync(join(dir, name), 0o700);
    rmSync(join(dir, `${name}.js`), { force: true }); // the Node hooks of earlier versions
  }
  return dir;
}
