import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../../config/config';
import { DbNotifications } from '../../database/notifications';

/** How long a credential's lookup is reused (the notifications below make it exact; this is the safety net). */
export const AUTH_CACHE_MS = 5000;
/** At most this many credentials are held (least recently used first out). */
export const AUTH_CACHE_MAX = 10_000;
/** Notified by database triggers on every change to a user row or an OAuth token (payload: the user id). */
const CHANNEL = 'auth_changed';

interface Entry<T> {
  value: T;
  userId: number;
  at: number;
}

/**
 * A short, bounded cache of credential → user lookups, so that a request does not pay a statement
 * to authenticate. It never serves a user that changed: every update or deletion of a user row or
 * an OAuth access token, made through any instance or by hand, fires a trigger notifying
 * `auth_changed` (migration AuthChangedNotify), and every instance drops that user's entries; if
 * the listener connection drops, everything is forgotten. A lookup that started before an
 * invalidation is not stored (the epoch check), so a read racing a change cannot re-insert the old
 * row. On the embedded database (one instance, no listener connection) the cache is off.
 */
@Injectable()
export class AuthCache implements OnModuleInit {
  private readonly entries = new Map<string, Entry<unknown>>();
  private readonly byUser = new Map<number, Set<string>>();
  private epoch = 0;
  readonly enabled: boolean;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly notifications: DbNotifications,
  ) {
    this.enabled = !!config.databaseUrl;
  }

  async onModuleInit(): Promise<void> {
    if (!this.enabled) return;
    await this.notifications.listen(CHANNEL, (payload) => {
      const id = Number(payload);
      if (payload !== '' && Number.isSafeInteger(id)) this.forgetUser(id);
      else this.forgetAll();
    });
  }

  /**
   * The cached value of `key`, else `load()`'s (stored when it names a user). `copy` gives each
   * caller its own object, so a request decorating its user cannot change the cached one.
   */
  async get<T>(key: string, load: () => Promise<T | undefined>, userOf: (v: T) => number, copy: (v: T) => T): Promise<T | undefined> {
    if (!this.enabled) return load();
    const hit = this.entries.get(key) as Entry<T> | undefined;
    if (hit && Date.now() - hit.at < AUTH_CACHE_MS) {
      this.entries.delete(key);
      this.entries.set(key, hit); // most recently used last
      return copy(hit.value);
    }
    if (hit) this.forget(key);
    const epoch = this.epoch;
    const value = await load();
    if (value === undefined || epoch !== this.epoch) return value;
    const userId = userOf(value);
    this.entries.set(key, { value: copy(value), userId, at: Date.now() });
    let keys = this.byUser.get(userId);
    if (!keys) this.byUser.set(userId, (keys = new Set()));
    keys.add(key);
    while (this.entries.size > AUTH_CACHE_MAX) this.forget(this.entries.keys().next().value as string);
    return value;
  }

  forgetUser(userId: number): void {
    this.epoch++;
    for (const key of this.byUser.get(userId) ?? []) this.entries.delete(key);
    this.byUser.delete(userId);
  }

  forgetAll(): void {
    this.epoch++;
    this.entries.clear();
    this.byUser.clear();
  }

  private forget(key: string): void {
    const e = this.entries.get(key);
    if (!e) return;
    this.entries.delete(key);
    const keys = this.byUser.get(e.userId);
    keys?.delete(key);
    if (keys && keys.size === 0) this.byUser.delete(e.userId);
  }
}
