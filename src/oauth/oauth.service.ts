import { Injectable } from '@nestjs/common';
import { SecretsService } from '../common/crypto/secrets.service';
import { Forbidden, OAuthError } from '../common/errors/domain-errors';
import { Transactions, Tx } from '../database/transactions';
import { SessionService } from '../users/session.service';
import { UserDirectory } from '../users/user-directory.service';
import { User } from '../users/user.entity';
import { RevokeTokenDto, TokenRequestDto } from './dto/oauth.dto';
import { OauthAccessToken } from './oauth-access-token.entity';
import { OauthRepository } from './oauth.repository';

/** An issued token with the secrets in clear (the only time they are). */
export interface IssuedToken {
  token: OauthAccessToken;
  accessToken: string;
  refreshToken: string;
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
    private readonly tokens: OauthRepository,
    private readonly users: UserDirectory,
    private readonly tx: Transactions,
    private readonly secrets: SecretsService,
    private readonly session: SessionService,
  ) {}

  /** The access token with this digest and its owner, in one query (the authentication of bearer requests). */
  tokenWithOwner(tokenDigest: string): Promise<{ token: OauthAccessToken; owner: User } | undefined> {
    return this.tokens.withOwner(tokenDigest);
  }

  async token(dto: TokenRequestDto, ip: string): Promise<IssuedToken> {
    const grant = dto.grant_type;
    if (!grant) throw invalidRequest('The request is missing a required parameter: grant_type.');
    if (grant === 'password') {
      const { username, password } = dto;
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
      const refresh = dto.refresh_token;
      if (!refresh) throw invalidRequest('The request is missing a required parameter: refresh_token.');
      return this.tx.run(async (tx) => {
        const row = await this.tokens.lockByRefreshDigest(tx, this.secrets.digest(refresh));
        if (!row || row.revokedAt) throw invalidGrant();
        const owner = await this.users.byId(row.resourceOwnerId, tx);
        if (!owner || owner.state !== 'active') throw invalidGrant();
        await this.tokens.revoke(tx, row.id);
        return this.issue(owner.id, tx);
      });
    }
    throw new OAuthError(400, 'unsupported_grant_type', 'The authorization grant type is not supported by the authorization server.');
  }

  /** Revokes the access or refresh token given; answers the same whether or not it existed. */
  async revoke(dto: RevokeTokenDto): Promise<void> {
    if (!dto.token) throw invalidRequest('The request is missing a required parameter: token.');
    await this.tokens.revokeByDigest(this.secrets.digest(dto.token));
  }

  private async issue(userId: number, tx?: Tx): Promise<IssuedToken> {
    const accessToken = this.secrets.generateToken(64);
    const refreshToken = this.secrets.generateToken(64);
    const token = await this.tokens.insert(
      {
        resourceOwnerId: userId,
        tokenDigest: this.secrets.digest(accessToken),
        refreshTokenDigest: this.secrets.digest(refreshToken),
        scopes: 'api',
        expiresIn: null,
      },
      tx,
    );
    return { token, accessToken, refreshToken };
  }
}
