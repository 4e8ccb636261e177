import { join } from 'node:path';
import { PACK_OBJECTS_HOOK, shellQuote } from './receive-hooks';

/** The git service a transfer runs. */
export type TransferService = 'upload-pack' | 'receive-pack' | 'upload-archive';

/** A push's connectivity check, made cheaper (see transferConfigEnv). */
const RECEIVE_PACK_ENTRIES: [string, string][] = [
  ['core.deltaBaseCacheLimit', '4m'],
  ['core.alternateRefsCommand', 'true'],
];

/**
 * The git configuration of every transfer (smart HTTP's `http-backend`, SSH's `upload-pack`,
 * `receive-pack`, `upload-archive`), handed to git through `GIT_CONFIG_COUNT`/`KEY_n`/`VALUE_n`
 * (never a config file a client could influence), so that both transports serve alike:
 *  - `core.hooksPath`: our update/post-receive hooks (push rules, the push log);
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
 *
 * A push (`receive-pack`) also gets two settings for its connectivity check, the `rev-list --objects
 * --stdin --not --all --alternate-refs` git runs on every push, which walks the whole tree of the pushed
 * commit's parent (issue 27: on the reference load's 50,000-file repository, most of a push's time):
 *  - `core.deltaBaseCacheLimit=4m` (git's default 96m): the walk reads each tree once, so caching the
 *    delta bases it inflates only costs fresh memory — on that repository 28,600 page faults and 143 MB
 *    for one check, 100 → 50 ms. `index-pack`, the push's other reader of deltas, keeps its pace
 *    (a 52 MB pack of 714,000 objects: 2.40 → 2.48 s; a 27 MB blob in a 12-deep delta chain:
 *    0.94 → 0.98 s). Fetches keep git's default: a clone's `pack-objects` is faster with it.
 *  - `core.alternateRefsCommand=true`: `--alternate-refs` lists the refs of every alternate object
 *    directory, and during a push the only one is the repository's own (receive-pack's quarantine makes
 *    it an alternate), so git started a `for-each-ref` of refs `--all` already gave. `true` answers
 *    none. Our repositories have no other alternates; if one had, fewer negative tips would only
 *    lengthen the walk, never pass a missing object.
 * Both: a small push's `receive-pack` on the reference repository 120–130 → 60–70 ms of wall time.
 * `extra` adds transport-specific entries (smart HTTP's `http.receivepack`).
 */
export function transferConfigEnv(hooksPath: string, service: TransferService, extra: [string, string][] = []): Record<string, string> {
  const entries: [string, string][] = [
    ['core.hooksPath', hooksPath],
    ['uploadpack.allowFilter', 'true'],
    ['receive.unpackLimit', '1'],
    ['receive.autogc', 'false'],
    ['gc.auto', '0'],
    // a shell command (git appends the pack-objects command line): our own script's path, quoted
    ['uploadpack.packObjectsHook', shellQuote(join(hooksPath, PACK_OBJECTS_HOOK))],
    ...(service === 'receive-pack' ? RECEIVE_PACK_ENTRIES : []),
    ...extra,
  ];
  const env: Record<string, string> = { GIT_CONFIG_COUNT: String(entries.length) };
  entries.forEach(([key, value], i) => {
    env[`GIT_CONFIG_KEY_${i}`] = key;
    env[`GIT_CONFIG_VALUE_${i}`] = value;
  });
  return env;
}
