import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

/** A build trigger token of a project (soft-deleted). The v3 API for it is issue 13. */
@Entity('ci_triggers')
export class Trigger {
  @PrimaryGeneratedColumn() id: number;
  @Column({ name: 'project_id' }) projectId: number;
  @Column({ name: 'token_digest' }) tokenDigest: string;
  @Column({ name: 'token_encrypted' }) tokenEncrypted: string;
  @Column({ name: 'deleted_at', type: 'timestamptz', nullable: true }) deletedAt: Date | null;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' }) updatedAt: Date;
}

/** One use of a trigger; its variables reach the builds it created (public: false). */
@Entity('ci_trigger_requests')
export class TriggerRequest {
  @PrimaryGeneratedColumn() id: number;
  @Column({ name: 'trigger_id' }) triggerId: number;
  @Column({ type: 'jsonb', nullable: true }) variables: Record<string, string> | null;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' }) updatedAt: Date;
}
