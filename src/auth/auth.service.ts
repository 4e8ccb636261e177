import { Injectable } from '@nestjs/common';
import { OauthService } from '../oauth/oauth.service';
import { User } from '../users/user.entity';
import { UserDirectory } from '../users/user-directory.service';
import { SecretsService } from '../common/crypto/secrets.service';
import { Forbidden, NotFound, OAuthError } from '../common/errors/domain-errors';
import { AuthCache } from './auth-cache';
import { lookingUpCredentials } from './credential-lookup';

/**
 * Resolves the caller from a private token or an OAuth access token, then applies sudo.
 * Blocked users never authenticate; a lookup the database could not answer is a 503, never "no user". One query per credential (lean reads of UserDirectory), reused
 * for a few seconds through AuthCache (dropped at once when the user or token changes).
 */
@Injectable()
export class AuthService {
  constructor(
    private readonly users: UserDirectory,
    private readonly tokens: OauthService,
    private readonly secrets: SecretsService,
    private readonly cache: AuthCache,
  ) {}

  /** Drops every cached credential of this instance (tests measure cold requests with it). */
  forgetAll(): void {
    this.cache.forgetAll();
  }

  async userByPrivateToken(token: string): Promise<User | undefined> {
    if (!token || token.length > 255) return undefined;
    const digest = this.secrets.digest(token);
    const user = await lookingUpCredentials(() =>
      this.cache.get(
        `p:${digest}`,
        async () => (await this.users.byPrivateTokenDigest(digest)) ?? undefined,
        (u) => u.id,
        (u) => ({ ...u }),
      ),
    );
    return user && user.state === 'active' ? user : undefined;
  }

  /** The owner of a live OAuth access token; a revoked or expired token gives the Bearer 401. */
  async userByAccessToken(token: string): Promise<User | undefined> {
    if (!token || token.length > 255) return undefined;
    const digest = this.secrets.digest(token);
    const found = await lookingUpCredentials(() =>
      this.cache.get(
        `o:${digest}`,
        () => this.tokens.tokenWithOwner(digest),
        (f) => f.owner.id,
        (f) => ({ token: f.token, owner: Object.assign(Object.create(Object.getPrototypeOf(f.owner) as object) as User, f.owner) }),
      ),
    );
    if (!found) return undefined;
    const { token: row, owner } = found;
    if (row.revokedAt) {
      throw new OAuthError(401, 'invalid_token', 'Token was revoked. You have to re-authorize from the user.');
    }
    if (row.expiresIn !== null && row.createdAt.getTime() + row.expiresIn * 1000 < Date.now()) {
      throw new OAuthError(401, 'invalid_token', 'Token is expired. You can either do re-authorization or token refresh.');
    }
    return owner.state === 'active' ? owner : undefined;
  }

  /** Applies `sudo` (id or username) for an administrator; 403 for others, 404 for an unknown user. */
  async sudo(caller: User, identifier: string): Promise<User> {
    const byId = /^\d{1,10}$/.test(identifier);
    // Naming oneself is ignored, for any caller (GitLab checks this before the admin check).
    if (byId ? Number(identifier) === caller.id : identifier.toLowerCase() === caller.username.toLowerCase()) {
      return caller;
    }
    if (!caller.admin) throw new Forbidden(undefined, '403 Forbidden: Must be admin to use sudo');
    const id = Number(identifier);
    const target = byId ? (id <= 2147483647 ? await this.users.byId(id) : null) : ((await this.users.byUsername(identifier))[0] ?? null);
    if (!target) throw new NotFound(undefined, `: No user id or username for: ${identifier}`);
    return target;
  }
}
