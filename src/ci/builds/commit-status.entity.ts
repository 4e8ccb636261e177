import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

/**
 * A commit status: an external one (`stage` external, posted through the statuses API: GitLab's
 * GenericCommitStatus) or the base row of a CI build (GitLab's STI `Ci::Build < CommitStatus`,
 * class-table here: `ci_builds` shares its id). The builds area owns `commit_statuses`.
 */
@Entity('commit_statuses')
export class CommitStatus {
  @PrimaryGeneratedColumn() id: number;
  @Column({ name: 'project_id' }) projectId: number;
  @Column() sha: string;
  @Column({ type: 'varchar', nullable: true }) ref: string | null;
  @Column() name: string;
  @Column() stage: string;
  @Column() status: string;
  @Column({ name: 'target_url', type: 'text', nullable: true }) targetUrl: string | null;
  @Column({ type: 'text', nullable: true }) description: string | null;
  @Column({ name: 'allow_failure' }) allowFailure: boolean;
  @Column({ name: 'author_id', type: 'integer', nullable: true }) authorId: number | null;
  @Column({ name: 'started_at', type: 'timestamptz', nullable: true }) startedAt: Date | null;
  @Column({ name: 'finished_at', type: 'timestamptz', nullable: true }) finishedAt: Date | null;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' }) updatedAt: Date;
}
