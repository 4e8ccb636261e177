import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

@Entity('protected_branches')
export class ProtectedBranch {
  @PrimaryGeneratedColumn() id: number;
  @Column({ name: 'project_id' }) projectId: number;
  @Column() name: string;
  @Column({ name: 'developers_can_push' }) developersCanPush: boolean;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' }) updatedAt: Date;
}

@Entity('releases')
export class Release {
  @PrimaryGeneratedColumn() id: number;
  @Column({ name: 'project_id' }) projectId: number;
  @Column() tag: string;
  @Column() description: string;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' }) updatedAt: Date;
}

@Entity('commit_comments')
export class CommitComment {
  @PrimaryGeneratedColumn() id: number;
  @Column({ name: 'project_id' }) projectId: number;
  @Column({ name: 'commit_sha' }) commitSha: string;
  @Column({ name: 'author_id', type: 'integer', nullable: true }) authorId: number | null;
  @Column() note: string;
  @Column({ type: 'text', nullable: true }) path: string | null;
  @Column({ type: 'integer', nullable: true }) line: number | null;
  @Column({ name: 'line_type', type: 'varchar', nullable: true }) lineType: string | null;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' }) updatedAt: Date;
}

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
