import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

/**
 * An external sign-in (LDAP, OAuth provider) linked to a user: `provider` + `extern_uid`. No ORM
 * relation to User (the foreign key, ON DELETE CASCADE, is in the migration), so the two entities do
 * not import each other.
 */
@Entity('identities')
export class Identity {
  @PrimaryGeneratedColumn() id: number;
  @Column({ name: 'user_id' }) userId: number;
  @Column() provider: string;
  @Column({ name: 'extern_uid' }) externUid: string;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' }) updatedAt: Date;
}
