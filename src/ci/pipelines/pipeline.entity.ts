import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

export type PipelineStatus = 'created' | 'pending' | 'running' | 'success' | 'failed' | 'canceled' | 'skipped' | 'manual';

/** A pipeline (GitLab 8.8's `ci_commits`): one push of one ref at one sha. */
@Entity('ci_pipelines')
export class Pipeline {
  @PrimaryGeneratedColumn() id: number;
  @Column({ name: 'project_id' }) projectId: number;
  @Column({ type: 'varchar', nullable: true }) ref: string | null;
  @Column() sha: string;
  @Column({ name: 'before_sha', type: 'varchar', nullable: true }) beforeSha: string | null;
  @Column() tag: boolean;
  @Column({ name: 'yaml_errors', type: 'text', nullable: true }) yamlErrors: string | null;
  @Column({ type: 'varchar', nullable: true }) status: PipelineStatus | null;
  @Column({ name: 'user_id', type: 'integer', nullable: true }) userId: number | null;
  /** Made before 8.17's processing, with only the stages reached so far: the rest is created when a build ends. */
  @Column({ name: 'legacy_stages', default: false }) legacyStages: boolean;
  @Column({ name: 'started_at', type: 'timestamptz', nullable: true }) startedAt: Date | null;
  @Column({ name: 'finished_at', type: 'timestamptz', nullable: true }) finishedAt: Date | null;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' }) updatedAt: Date;
}
