import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

/** A CI runner: shared (any project with shared runners enabled) or specific (its projects). */
@Entity('ci_runners')
export class Runner {
  @PrimaryGeneratedColumn() id: number;
  @Column({ name: 'token_digest' }) tokenDigest: string;
  @Column({ name: 'token_encrypted' }) tokenEncrypted: string;
  @Column({ type: 'varchar', nullable: true }) description: string | null;
  @Column({ name: 'contacted_at', type: 'timestamptz', nullable: true }) contactedAt: Date | null;
  @Column() active: boolean;
  @Column({ name: 'is_shared' }) isShared: boolean;
  @Column({ type: 'varchar', nullable: true }) name: string | null;
  @Column({ type: 'varchar', nullable: true }) version: string | null;
  @Column({ type: 'varchar', nullable: true }) revision: string | null;
  @Column({ type: 'varchar', nullable: true }) platform: string | null;
  @Column({ type: 'varchar', nullable: true }) architecture: string | null;
  @Column({ name: 'run_untagged' }) runUntagged: boolean;
  @Column({ name: 'tag_list', type: 'text', array: true }) tagList: string[];
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' }) updatedAt: Date;
}

@Entity('ci_runner_projects')
export class RunnerProject {
  @PrimaryGeneratedColumn() id: number;
  @Column({ name: 'runner_id' }) runnerId: number;
  @Column({ name: 'project_id' }) projectId: number;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' }) updatedAt: Date;
}
