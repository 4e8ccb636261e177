import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

export type UserState = 'active' | 'blocked' | 'ldap_blocked';

/** An external sign-in as the full view shows it (rows of `identities`, the Identity entity). */
export interface UserIdentity {
  provider: string;
  externUid: string;
}

@Entity('users')
export class User {
  @PrimaryGeneratedColumn() id: number;
  @Column() username: string;
  @Column() email: string;
  @Column() name: string;
  @Column({ name: 'encrypted_password', select: true }) encryptedPassword: string;
  @Column() state: UserState;
  @Column() admin: boolean;
  @Column({ name: 'projects_limit' }) projectsLimit: number;
  @Column({ name: 'can_create_group' }) canCreateGroup: boolean;
  @Column() external: boolean;
  @Column({ type: 'varchar', nullable: true }) bio: string | null;
  @Column({ type: 'varchar', nullable: true }) location: string | null;
  @Column() skype: string;
  @Column() linkedin: string;
  @Column() twitter: string;
  @Column({ name: 'website_url' }) websiteUrl: string;
  @Column({ name: 'theme_id' }) themeId: number;
  @Column({ name: 'color_scheme_id' }) colorSchemeId: number;
  @Column({ name: 'two_factor_enabled' }) twoFactorEnabled: boolean;
  @Column({ name: 'confirmed_at', type: 'timestamptz', nullable: true }) confirmedAt: Date | null;
  @Column({ name: 'last_sign_in_at', type: 'timestamptz', nullable: true }) lastSignInAt: Date | null;
  @Column({ name: 'current_sign_in_at', type: 'timestamptz', nullable: true }) currentSignInAt: Date | null;
  @Column({ name: 'sign_in_count' }) signInCount: number;
  @Column({ name: 'private_token_digest' }) privateTokenDigest: string;
  @Column({ name: 'private_token_encrypted' }) privateTokenEncrypted: string;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' }) updatedAt: Date;

  /** Not columns: what the full view needs, loaded by `UsersRepository.loadFullView` (or the list query). */
  identities?: UserIdentity[];
  /** The number of projects in the user's namespace. */
  personalProjectCount?: number;
}
