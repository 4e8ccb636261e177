import { BigIntStats, statSync } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * What the refs under a prefix (`refs/heads/`, `refs/tags/`) of a files-backend repository depend on:
 * `packed-refs` and every directory under the prefix, as stat saw them. git (and every other writer)
 * updates or deletes a loose ref by creating `<ref>.lock` in the ref's directory and renaming it into
 * place or unlinking the ref, and rewrites packed-refs through `packed-refs.lock`: each changes the
 * directory's mtime or packed-refs' inode, so an unchanged signature means unchanged refs.
 */
export interface RefSignature {
  /** `ino:size:mtimeNs` of packed-refs, `-` when absent. */
  packed: string;
  /** Every directory under the prefix (the prefix first) and its `ino:size:mtimeNs` (`-` when absent). */
  dirs: { path: string; stamp: string }[];
  /**
   * Some part changed less than the racy margin before the signature was taken: a change right after
   * could carry the same timestamp (timestamps are coarse, a clock tick or worse), so the signature
   * proves nothing and the refs are read again on every use until it settles.
   */
  racy: boolean;
}

/** Changes this recent are not trusted to show in a later timestamp (clock tick, shared file systems' skew). */
export const RACY_MARGIN_NS = 1_000_000_000n;

const stampOf = (s: BigIntStats | undefined): string => (s ? `${s.ino}:${s.size}:${s.mtimeNs}` : '-');

function statNow(path: string): BigIntStats | undefined {
  return statSync(path, { bigint: true, throwIfNoEntry: false });
}

async function statAsync(path: string): Promise<BigIntStats | undefined> {
  try {
    return await stat(path, { bigint: true });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT' || (e as NodeJS.ErrnoException).code === 'ENOTDIR') return undefined;
    throw e;
  }
}

/**
 * Walks the directories under `prefix` (each stat'ed before it is listed, so an entry added while
 * walking shows in its directory's stamp). Null when the prefix is no directory (a reftable
 * repository): such refs are not snapshotted.
 */
export async function takeSignature(gitDir: string, prefix: string, racyMarginNs = RACY_MARGIN_NS): Promise<RefSignature | null> {
  const now = BigInt(Date.now()) * 1_000_000n;
  const stats: BigIntStats[] = [];
  const packed = await statAsync(join(gitDir, 'packed-refs'));
  if (packed) stats.push(packed);
  const dirs: RefSignature['dirs'] = [];
  const root = join(gitDir, prefix);
  const top = await statAsync(root);
  if (top && !top.isDirectory()) return null;
  if (!top) dirs.push({ path: root, stamp: '-' });
  const walk = async (dir: string, s: BigIntStats): Promise<void> => {
    dirs.push({ path: dir, stamp: stampOf(s) });
    stats.push(s);
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return; // removed while walking: its stamp no longer holds
      throw e;
    }
    for (const e of entries) {
      if (!e.isDirectory()) continue;
      const sub = join(dir, e.name);
      const ss = await statAsync(sub);
      if (ss?.isDirectory()) await walk(sub, ss);
    }
  };
  if (top) await walk(root, top);
  const racy = stats.some((s) => s.mtimeNs + racyMarginNs > now);
  return { packed: stampOf(packed), dirs, racy };
}

/** Whether nothing the signature covers has changed since it was taken (a few stat calls, no walk). */
export function signatureHolds(gitDir: string, sig: RefSignature): boolean {
  if (stampOf(statNow(join(gitDir, 'packed-refs'))) !== sig.packed) return false;
  return sig.dirs.every((d) => stampOf(statNow(d.path)) === d.stamp);
}

interface Entry<T> {
  sig: RefSignature;
  value: T;
  weight: number;
}

/**
 * The refs under a prefix of each repository, read once and served again while the repository's
 * signature holds (checked on every use, so a change made by any process, this instance or another
 * sharing the disk, is seen by the next read). The signature is taken before the refs are read: a
 * change in between only costs a second read later, never a stale answer. A racy signature (see
 * `RefSignature.racy`) is never served from. Bounded: least recently used first out beyond `max`
 * snapshots or `maxWeight` refs in all.
 */
export class RefSnapshots<T> {
  private readonly entries = new Map<string, Entry<T>>();
  private readonly loading = new Map<string, { sig: Promise<RefSignature | null>; value: Promise<T> }>();
  private weight = 0;

  constructor(
    private readonly weigh: (value: T) => number,
    private readonly max = 1000,
    private readonly maxWeight = 200_000,
    private readonly racyMarginNs = RACY_MARGIN_NS,
  ) {}

  /** The refs under `prefix` of `gitDir`: the snapshot if it still holds, else `read()`'s answer, remembered. */
  async get(gitDir: string, prefix: string, read: () => Promise<T>): Promise<T> {
    const key = `${gitDir}\0${prefix}`;
    const entry = this.entries.get(key);
    if (entry && signatureHolds(gitDir, entry.sig)) {
      this.entries.delete(key);
      this.entries.set(key, entry);
      return entry.value;
    }
    // a read already under way whose signature still holds answers for this request too
    const pending = this.loading.get(key);
    if (pending) {
      const sig = await pending.sig.catch(() => null);
      if (sig && !sig.racy && signatureHolds(gitDir, sig)) return pending.value;
    }
    const sig = takeSignature(gitDir, prefix, this.racyMarginNs);
    const value = sig.then(() => read());
    const load = { sig, value };
    this.loading.set(key, load);
    try {
      const [s, v] = await Promise.all([sig, value]);
      if (s && !s.racy) this.remember(key, { sig: s, value: v, weight: this.weigh(v) });
      else this.forget(key);
      return v;
    } finally {
      if (this.loading.get(key) === load) this.loading.delete(key);
    }
  }

  private remember(key: string, entry: Entry<T>): void {
    this.forget(key);
    if (entry.weight > this.maxWeight) return;
    this.entries.set(key, entry);
    this.weight += entry.weight;
    while (this.entries.size > this.max || this.weight > this.maxWeight) this.forget(this.entries.keys().next().value as string);
  }

  private forget(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.weight -= entry.weight;
  }
}
