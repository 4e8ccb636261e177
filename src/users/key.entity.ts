import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

/** `type` of a deploy key's row (GitLab's single-table `DeployKey`); a user's key has none. */
export const DEPLOY_KEY = 'DeployKey';

/** An SSH key: a user's (`userId` set, no `type`), or a deploy key (`type` DeployKey, no owner). */
@Entity('keys')
export class SshKey {
  @PrimaryGeneratedColumn() id: number;
  @Column({ name: 'user_id', type: 'integer', nullable: true }) userId: number | null;
  @Column({ type: 'varchar', nullable: true }) type: string | null;
  /** A deploy key's write access (GitLab 8.17's `can_push`, one value for every project it is enabled on). */
  @Column({ name: 'can_push' }) canPush: boolean;
  @Column() title: string;
  @Column() key: string;
  @Column() fingerprint: string;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' }) updatedAt: Date;
}
