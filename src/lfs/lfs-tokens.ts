import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../config/config';

/** 8.17's Gitlab::LfsToken::EXPIRY_TIME: half an hour. */
export const LFS_TOKEN_TTL_SECONDS = 1800;
/** The login of a deploy key's token (8.17's LfsToken#actor_name). */
const DEPLOY_KEY_LOGIN = /^lfs\+deploy-key-(\d{1,10})$/;

export type LfsActor = { userId: number } | { deployKeyId: number };

/**
 * The short-lived credentials `git-lfs-authenticate` hands out over SSH (8.17's Gitlab::LfsToken): the
 * login is the user's username, or `lfs+deploy-key-<id>` for a deploy key; the password is signed with
 * a key derived from SECRET_KEY and carries its expiry, so every instance accepts it and none stores it.
 */
@Injectable()
export class LfsTokens {
  private readonly key: Buffer;

  constructor(@Inject(APP_CONFIG) config: Pick<AppConfig, 'secretKey'>) {
    this.key = Buffer.from(hkdfSync('sha256', config.secretKey, Buffer.alloc(0), 'lfs-token', 32));
  }

  private mac(subject: string, expires: number): string {
    return createHmac('sha256', this.key).update(`${subject}:${expires}`).digest('base64url');
  }

  /** A token for `actor`, valid for LFS_TOKEN_TTL_SECONDS from `now`. */
  issue(actor: LfsActor, username: string | undefined, now = Date.now()): { login: string; token: string; expiresIn: number } {
    const expires = Math.floor(now / 1000) + LFS_TOKEN_TTL_SECONDS;
    if ('deployKeyId' in actor) {
      return {
        login: `lfs+deploy-key-${actor.deployKeyId}`,
        token: `${expires}.${this.mac(`k${actor.deployKeyId}`, expires)}`,
        expiresIn: LFS_TOKEN_TTL_SECONDS,
      };
    }
    return { login: username ?? '', token: `${actor.userId}.${expires}.${this.mac(`u${actor.userId}`, expires)}`, expiresIn: LFS_TOKEN_TTL_SECONDS };
  }

  /** Who a Basic login and password name when the password is a live LFS token; the caller checks the user's name. */
  verify(login: string, password: string, now = Date.now()): LfsActor | undefined {
    const key = DEPLOY_KEY_LOGIN.exec(login);
    const parts = password.split('.');
    const [subject, expiresText, mac] = key
      ? parts.length === 2
        ? [`k${key[1]}`, parts[0], parts[1]]
        : []
      : parts.length === 3 && /^\d{1,10}$/.test(parts[0])
        ? [`u${parts[0]}`, parts[1], parts[2]]
        : [];
    if (!subject || !expiresText || !mac || !/^\d{1,12}$/.test(expiresText)) return undefined;
    const expires = Number(expiresText);
    if (expires * 1000 <= now) return undefined;
    const want = Buffer.from(this.mac(subject, expires));
    const got = Buffer.from(mac);
    if (want.length !== got.length || !timingSafeEqual(want, got)) return undefined;
    return key ? { deployKeyId: Number(key[1]) } : { userId: Number(parts[0]) };
  }
}
