import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** An OAuth 2.0 access token; only keyed digests of the token and its refresh token are stored. */
@Entity('oauth_access_tokens')
export class OauthAccessToken {
  @PrimaryGeneratedColumn() id: number;
  @Column({ name: 'resource_owner_id' }) resourceOwnerId: number;
  @Column({ name: 'token_digest' }) tokenDigest: string;
  @Column({ name: 'refresh_token_digest', type: 'varchar', nullable: true }) refreshTokenDigest: string | null;
  @Column() scopes: string;
  @Column({ name: 'expires_in', type: 'integer', nullable: true }) expiresIn: number | null;
  @Column({ name: 'revoked_at', type: 'timestamptz', nullable: true }) revokedAt: Date | null;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
}
