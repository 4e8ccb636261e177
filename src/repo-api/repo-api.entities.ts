import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

@Entity('protected_branches')
export class ProtectedBranch {
  @PrimaryGeneratedColumn() id: number;
  @Column({ name: 'project_id' }) projectId: number;
  @Column() name: string;
  @Column({ name: 'developers_can_push' }) developersCanPush: boolean;
  @Column({ name: 'developers_can_merge' }) developersCanMerge: boolean;
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
