import { join } from 'node:path';
import { PACK_OBJECTS_HOOK, shellQuote } from './receive-hooks';

/**
 * The git configuration of every transfer (smart HTTP's `http-backend`, SSH's `upload-pack`,
 * `receive-pack`, `upload-archive`), handed to git through `GIT_CONFIG_COUNT`/`KEY_n`/`VALUE_n`
 * (never a config file a client could influence), so that both transports serve alike:
 *  - `core.hooksPath`: our pre-receive/post-receive hooks (push rules, the push log);
 *  - `uploadpack.allowFilter`: partial clones (`--filter=blob:none`), as GitLab allows;
 *  - `uploadpack.packObjectsHook`: the pack-objects cache (receive-hooks.ts `packObjectsHookScript`;
 *    honoured only from protected configuration, which these command-scope entries are);
 *  - `receive.unpackLimit=1`: a pushed pack is kept as it arrives (indexed by `index-pack`), never
 *    exploded into loose objects. git's default (100) unpacks a push of few objects (a handful of large
 *    files, a small commit) into loose objects, which every later clone and fetch must deflate again
 *    (10 MB in two files: ~250 ms of pack-objects per clone) until housekeeping packs them; a kept pack
 *    is reused as it is. Housekeeping consolidates the packs (GitService.housekeeping);
 *  - `receive.autogc=false`, `gc.auto=0`: no `git gc --auto` after a push (git's default). With a pack
 *    per push, every push past the 50th pack (gc.autoPackLimit) started a full `gc` in the background:
 *    on the reference load's 100,000-commit repository ~12 s of CPU per run, one run every ~50
 *    pushes, i.e. a whole core at 4 pushes/s — the mixed load's collapse (issue 27). Our own
 *    housekeeping (a geometric repack, once a minute at most) does that work instead, as Gitaly's.
 * `extra` adds transport-specific entries (smart HTTP's `http.receivepack`).
 */
export function transferConfigEnv(hooksPath: string, extra: [string, string][] = []): Record<string, string> {
  const entries: [string, string][] = [
    ['core.hooksPath', hooksPath],
    ['uploadpack.allowFilter', 'true'],
    ['receive.unpackLimit', '1'],
    ['receive.autogc', 'false'],
    ['gc.auto', '0'],
    // a shell command (git appends the pack-objects command line): our own script's path, quoted
    ['uploadpack.packObjectsHook', shellQuote(join(hooksPath, PACK_OBJECTS_HOOK))],
    ...extra,
  ];
  const env: Record<string, string> = { GIT_CONFIG_COUNT: String(entries.length) };
  entries.forEach(([key, value], i) => {
    env[`GIT_CONFIG_KEY_${i}`] = key;
    env[`GIT_CONFIG_VALUE_${i}`] = value;
  });
  return env;
}
