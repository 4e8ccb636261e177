import { DbNotifications } from './notifications';

interface Entry<T> {
  value: T;
  ownerId: number;
  at: number;
}

export interface NotifiedCacheOptions {
  /** Notified by database triggers on every change to what the cache holds (payload: the owner's id). */
  channel: string;
  /** How long an entry is reused (the notifications make it exact; this is the safety net). */
  ttlMs: number;
  /** At most this many entries are held (least recently used first out). */
  max: number;
  /** Off: every get() loads. */
  enabled: boolean;
}

/**
 * A short, bounded cache of lookups by credential (token digest → row), so that a hot request does
 * not pay a statement for it, which never serves a row that changed: database triggers notify
 * `channel` with the owner's id (a user, a runner) on every update or deletion, made through any
 * instance or by hand, and every instance drops that owner's entries; if the listener connection
 * drops, everything is forgotten. A lookup that started before an invalidation is not stored (the
 * epoch check), so a read racing a change cannot re-insert the old row. A notification travels
 * asynchronously, so a hit is served only after DbNotifications.sync() (one round trip on the
 * listener connection, shared by concurrent requests, no statement on the pool) has handled every
 * notification committed before the request: a change is seen by the very next request, on the
 * instance that made it and on every other.
 */
export class NotifiedCache {
  private readonly entries = new Map<string, Entry<unknown>>();
  private readonly byOwner = new Map<number, Set<string>>();
  private epoch = 0;
  private listener?: DbNotifications;

  constructor(readonly options: NotifiedCacheOptions) {}

  get enabled(): boolean {
    return this.options.enabled;
  }

  /** Subscribes to the channel (call once, at module init). */
  async listen(notifications: DbNotifications): Promise<void> {
    if (!this.enabled) return;
    this.listener = notifications;
    await notifications.listen(this.options.channel, (payload) => {
      const id = Number(payload);
      if (payload !== '' && Number.isSafeInteger(id)) this.forgetOwner(id);
      else this.forgetAll();
    });
  }

  /**
   * The cached value of `key`, else `load()`'s (stored when defined). `copy` gives each caller its
   * own object, so a request decorating its row cannot change the cached one.
   */
  async get<T>(key: string, load: () => Promise<T | undefined>, ownerOf: (v: T) => number, copy: (v: T) => T): Promise<T | undefined> {
    if (!this.enabled) return load();
    let hit = this.entries.get(key) as Entry<T> | undefined;
    // a hit is served only once the notifications committed before this call have been handled (their
    // handlers may drop it meanwhile): the next request after a change, on any instance, never gets
    // the old row. Without a listener, no hit is trusted.
    if (hit) hit = ((await this.listener?.sync()) ?? true) ? (this.entries.get(key) as Entry<T> | undefined) : undefined;
    if (hit && Date.now() - hit.at < this.options.ttlMs) {
      this.entries.delete(key);
      this.entries.set(key, hit); // most recently used last
      return copy(hit.value);
    }
    if (hit) this.forget(key);
    const epoch = this.epoch;
    const value = await load();
    if (value === undefined || epoch !== this.epoch) return value;
    const ownerId = ownerOf(value);
    this.entries.set(key, { value: copy(value), ownerId, at: Date.now() });
    let keys = this.byOwner.get(ownerId);
    if (!keys) this.byOwner.set(ownerId, (keys = new Set()));
    keys.add(key);
    while (this.entries.size > this.options.max) this.forget(this.entries.keys().next().value as string);
    return value;
  }

  forgetOwner(ownerId: number): void {
    this.epoch++;
    for (const key of this.byOwner.get(ownerId) ?? []) this.entries.delete(key);
    this.byOwner.delete(ownerId);
  }

  forgetAll(): void {
    this.epoch++;
    this.entries.clear();
    this.byOwner.clear();
  }

  private forget(key: string): void {
    const e = this.entries.get(key);
    if (!e) return;
    this.entries.delete(key);
    const keys = this.byOwner.get(e.ownerId);
    keys?.delete(key);
    if (keys && keys.size === 0) this.byOwner.delete(e.ownerId);
  }
}
