import { Injectable, OnModuleInit } from '@nestjs/common';
import { DbNotifications } from '../database/notifications';
import { NotifiedCache } from '../database/notified-cache';

/** How long a credential's lookup is reused (the notifications make it exact; this is the safety net). */
export const AUTH_CACHE_MS = 5000;
/** At most this many credentials are held (least recently used first out). */
export const AUTH_CACHE_MAX = 10_000;

/**
 * Credential → user lookups (private tokens, OAuth tokens), so that a request does not pay a
 * statement to authenticate. Every update or deletion of a user row, an OAuth access token or an SSH
 * key fires a trigger notifying `auth_changed` with the user's id (migrations AuthChangedNotify,
 * KeysAuthChangedNotify; the SSH server listens too), and every instance drops that user's entries (on the embedded database the notifications arrive on the
 * pool's own connection: DbNotifications).
 */
@Injectable()
export class AuthCache extends NotifiedCache implements OnModuleInit {
  constructor(private readonly notifications: DbNotifications) {
    super({ channel: 'auth_changed', ttlMs: AUTH_CACHE_MS, max: AUTH_CACHE_MAX, enabled: true });
  }

  onModuleInit(): Promise<void> {
    return this.listen(this.notifications);
  }
}
