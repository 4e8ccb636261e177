import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Server-side git hooks for pushes over smart HTTP and SSH. `pre-receive` runs after the objects arrive and
 * before any ref moves (the objects sit in git's quarantine), so a refused push changes nothing.
 * The rules come from the server in GLV3_PUSH_RULES; the hook only evaluates them.
 * `post-receive` appends the applied updates to GLV3_PUSH_LOG for the server to process.
 */
const PRE_RECEIVE_JS = String.raw`'use strict';
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const rules = JSON.parse(process.env.GLV3_PUSH_RULES || 'null');
const deny = (msg) => { process.stderr.write('GitLab: ' + msg + '\n'); process.exit(1); };
if (!rules) deny('push rules missing');
const ZERO = /^0{40}$/;
const matches = (pattern, name) => {
  if (!pattern.includes('*')) return pattern === name;
  const re = new RegExp('^' + pattern.split('*').map((s) => s.replace(/[.*+?^$()|[\]{}\\]/g, '\\$&')).join('.*') + '$');
  return re.test(name);
};
const isAncestor = (a, b) => spawnSync('git', ['merge-base', '--is-ancestor', a, b], { stdio: 'ignore' }).status === 0;
const lines = fs.readFileSync(0, 'utf8').split('\n').filter(Boolean);
for (const line of lines) {
  const [oldSha, newSha, ref] = line.split(' ');
  if (ref.startsWith('refs/tags/')) {
    if (!rules.canPush) deny('You are not allowed to push code to this project.');
    continue;
  }
  if (!ref.startsWith('refs/heads/')) deny('You are not allowed to push to ' + ref);
  if (!rules.canPush) deny('You are not allowed to push code to this project.');
  const branch = ref.slice('refs/heads/'.length);
  const pb = rules.protected.find((p) => matches(p.name, branch));
  if (!pb) continue;
  if (ZERO.test(newSha)) deny('You are not allowed to delete protected branch ' + branch + '.');
  if (!ZERO.test(oldSha) && !isAncestor(oldSha, newSha)) deny('You are not allowed to force push code to a protected branch on this project.');
  if (!rules.canPushProtected && !pb.developersCanPush) deny('You are not allowed to push code to protected branches on this project.');
}
`;

const POST_RECEIVE_JS = String.raw`'use strict';
const fs = require('node:fs');
const log = process.env.GLV3_PUSH_LOG;
const input = fs.readFileSync(0, 'utf8');
if (log) fs.appendFileSync(log, input);
`;

/** One ref a push moved, as git's post-receive hook reports it. */
export interface RefUpdate {
  oldSha: string;
  newSha: string;
  ref: string;
}

/**
 * The hooks' side channel of one push, whatever the transport: the environment that hands the rules to
 * pre-receive and a log file to post-receive, and the applied updates read back once git is done.
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
    return { GLV3_PUSH_RULES: JSON.stringify(this.rules), GLV3_PUSH_LOG: join(this.dir, 'updates') };
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
  protected: { name: string; developersCanPush: boolean }[];
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
  return `#!/bin/sh
cache=${shellQuote(cacheDir)}
command -v sha256sum >/dev/null 2>&1 || exec "$@"
in=$(mktemp "$cache/.in.XXXXXX" 2>/dev/null) || exec "$@"
trap 'rm -f "$in" "$in.pack" "$in.status"' EXIT
cat > "$in" || exit 1
key=$( { printf '%s\\0' "$(pwd -P)" "$@"; cat "$in"; } | sha256sum | cut -c1-64)
pack="$cache/$key.pack"
if [ -f "$pack" ]; then
  cat "$pack"
  exit $?
fi
{ "$@" < "$in"; echo $? > "$in.status"; } | tee "$in.pack"
status=$(cat "$in.status" 2>/dev/null || echo 1)
[ "$status" = 0 ] && mv -f "$in.pack" "$pack"
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
  const node = process.execPath;
  for (const [name, js] of [
    ['pre-receive', PRE_RECEIVE_JS],
    ['post-receive', POST_RECEIVE_JS],
  ]) {
    writeFileSync(join(dir, `${name}.js`), js, { mode: 0o600 });
    const script = `#!/bin/sh\nexec "${node}" "${join(dir, `${name}.js`)}"\n`;
    writeFileSync(join(dir, name), script, { mode: 0o700 });
    chmodSync(join(dir, name), 0o700);
  }
  return dir;
}
