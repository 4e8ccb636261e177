import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { User } from '../../users/user.entity';
import { mapUserRow, USER_COLUMNS, UserRow } from '../../users/user-rows';
import { OauthAccessToken } from '../../oauth/oauth-access-token.entity';
import { SecretsService } from '../crypto/secrets.service';
import { Forbidden, NotFound, OAuthError } from '../errors/domain-errors';

/**
 * Resolves the caller from a private token or an OAuth access token, then applies sudo.
 * Blocked users never authenticate.
 */
@Injectable()
export class AuthService {
  constructor(
    private readonly ds: DataSource,
    private readonly secrets: SecretsService,
  ) {}

  async userByPrivateToken(token: string): Promise<User | undefined> {
    if (!token || token.length > 255) return undefined;
    const rows: UserRow[] = await this.ds.query(`SELECT ${USER_COLUMNS} FROM users u WHERE u.private_token_digest = $1`, [
      this.secrets.digest(token),
    ]);
    const user = rows.length ? mapUserRow(rows[0]) : undefined;
    return user && user.state === 'active' ? user : undefined;
  }

  /** The owner of a live OAuth access token; a revoked or expired token gives the Bearer 401. */
  async userByAccessToken(token: string): Promise<User | undefined> {
    if (!token || token.length > 255) return undefined;
    const row = await this.ds
      .getRepository(OauthAccessToken)
      .createQueryBuilder('t')
      .innerJoinAndMapOne('t.owner', User, 'u', 'u.id = t.resource_owner_id')
      .where('t.token_digest = :d', { d: this.secrets.digest(token) })
      .getOne();
    if (!row) return undefined;
    if (row.revokedAt) {
      throw new OAuthError(401, 'invalid_token', 'Token was revoked. You have to re-authorize from the user.');
    }
    if (row.expiresIn !== null && row.createdAt.getTime() + row.expiresIn * 1000 < Date.now()) {
      throw new OAuthError(401, 'invalid_token', 'Token is expired. You can either do re-authorization or token refresh.');
    }
    const owner = (row as OauthAccessToken & { owner: User }).owner;
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
    const qb = this.ds.getRepository(User).createQueryBuilder('u');
    if (byId) qb.where('u.id = :id', { id: Number(identifier) });
    else qb.where('lower(u.username) = lower(:u)', { u: identifier });
    const target = await qb.getOne();
    if (!target) throw new NotFound(undefined, `: No user id or username for: ${identifier}`);
    return target;
  }
}
