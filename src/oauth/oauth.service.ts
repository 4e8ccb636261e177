import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { SecretsService } from '../common/crypto/secrets.service';
import { Forbidden, OAuthError } from '../common/errors/domain-errors';
import { Params } from '../common/params/params';
import { SessionService } from '../users/session.service';
import { User } from '../users/user.entity';
import { OauthAccessToken } from './oauth-access-token.entity';

export interface IssuedToken {
  access_token: string;
  token_type: 'bearer';
  refresh_token: string;
  scope: string;
  created_at: number;
}

const invalidRequest = (d: string) => new OAuthError(400, 'invalid_request', d);
const invalidGrant = () =>
  new OAuthError(
    400,
    'invalid_grant',
    'The provided authorization grant is invalid, expired, revoked, does not match the redirection URI used in the authorization request, or was issued to another client.',
  );

/** OAuth 2.0 token endpoint (grants `password` and `refresh_token`) and revocation (RFC 7009). */
@Injectable()
export class OauthService {
  constructor(
    private readonly ds: DataSource,
    private readonly secrets: SecretsService,
    private readonly session: SessionService,
  ) {}

  async token(p: Params, ip: string): Promise<IssuedToken> {
    const grant = p.string('grant_type');
    if (!grant) throw invalidRequest('The request is missing a required parameter: grant_type.');
    if (grant === 'password') {
      const username = p.string('username');
      const password = p.string('password');
      if (!username || !password) throw invalidRequest('The request is missing a required parameter: username or password.');
      const user = await this.session.signIn(username, password, ip, invalidGrant).catch((e: unknown) => {
        if (e instanceof Forbidden) {
          throw new OAuthError(400, 'unauthorized_client', 'Password sign-in is disabled on this instance.');
        }
        throw e;
      });
      return this.issue(user.id);
    }
    if (grant === 'refresh_token') {
      const refresh = p.string('refresh_token');
      if (!refresh) throw invalidRequest('The request is missing a required parameter: refresh_token.');
      return this.ds.transaction(async (m) => {
        const row = await m
          .getRepository(OauthAccessToken)
          .createQueryBuilder('t')
          .setLock('pessimistic_write')
          .where('t.refresh_token_digest = :d', { d: this.secrets.digest(refresh) })
          .getOne();
        if (!row || row.revokedAt) throw invalidGrant();
        const owner = await m.getRepository(User).findOne({ where: { id: row.resourceOwnerId } });
        if (!owner || owner.state !== 'active') throw invalidGrant();
        await m.getRepository(OauthAccessToken).update({ id: row.id }, { revokedAt: new Date() });
        return this.issue(owner.id, m.getRepository(OauthAccessToken));
      });
    }
    throw new OAuthError(400, 'unsupported_grant_type', 'The authorization grant type is not supported by the authorization server.');
  }

  /** Revokes the access or refresh token given; answers the same whether or not it existed. */
  async revoke(p: Params): Promise<void> {
    const token = p.string('token');
    if (!token) throw invalidRequest('The request is missing a required parameter: token.');
    const d = this.secrets.digest(token);
    await this.ds
      .getRepository(OauthAccessToken)
      .createQueryBuilder()
      .update()
      .set({ revokedAt: () => 'now()' })
      .where('(token_digest = :d OR refresh_token_digest = :d) AND revoked_at IS NULL', { d })
      .execute();
  }

  private async issue(userId: number, repo = this.ds.getRepository(OauthAccessToken)): Promise<IssuedToken> {
    const access = this.secrets.generateToken(64);
    const refresh = this.secrets.generateToken(64);
    const row = await repo.save(
      repo.create({
        resourceOwnerId: userId,
        tokenDigest: this.secrets.digest(access),
        refreshTokenDigest: this.secrets.digest(refresh),
        scopes: 'api',
        expiresIn: null,
      }),
    );
    return {
      access_token: access,
      token_type: 'bearer',
      refresh_token: refresh,
      scope: row.scopes,
      created_at: Math.floor(row.createdAt.getTime() / 1000),
    };
  }
}
