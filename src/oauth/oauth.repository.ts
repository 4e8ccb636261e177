import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { Tx } from '../database/transactions';
import { User } from '../users/user.entity';
import { OauthAccessToken } from './oauth-access-token.entity';

/** Every query on `oauth_access_tokens` (tokens are looked up by their keyed digests only). */
@Injectable()
export class OauthRepository {
  constructor(@InjectRepository(OauthAccessToken) private readonly tokens: Repository<OauthAccessToken>) {}

  private repo(tx?: Tx): Repository<OauthAccessToken> {
    return tx ? tx.getRepository(OauthAccessToken) : this.tokens;
  }

  /** The access token with this digest and its owner, in one query (the authentication of bearer requests). */
  async withOwner(tokenDigest: string): Promise<{ token: OauthAccessToken; owner: User } | undefined> {
    const row = await this.tokens
      .createQueryBuilder('t')
      .innerJoinAndMapOne('t.owner', User, 'u', 'u.id = t.resource_owner_id')
      .where('t.token_digest = :d', { d: tokenDigest })
      .getOne();
    return row ? { token: row, owner: (row as OauthAccessToken & { owner: User }).owner } : undefined;
  }

  /** The token with this refresh digest, locked for update until the transaction ends. */
  lockByRefreshDigest(tx: Tx, refreshDigest: string): Promise<OauthAccessToken | null> {
    return this.repo(tx).createQueryBuilder('t').setLock('pessimistic_write').where('t.refresh_token_digest = :d', { d: refreshDigest }).getOne();
  }

  async revoke(tx: Tx, id: number): Promise<void> {
    await this.repo(tx).update({ id }, { revokedAt: new Date() });
  }

  /** Revokes the live token whose access or refresh digest this is (nothing when there is none). */
  async revokeByDigest(digest: string): Promise<void> {
    await this.tokens
      .createQueryBuilder()
      .update()
      .set({ revokedAt: () => 'now()' })
      .where('(token_digest = :d OR refresh_token_digest = :d) AND revoked_at IS NULL', { d: digest })
      .execute();
  }

  insert(values: Partial<OauthAccessToken>, tx?: Tx): Promise<OauthAccessToken> {
    const repo = this.repo(tx);
    return repo.save(repo.create(values));
  }
}
