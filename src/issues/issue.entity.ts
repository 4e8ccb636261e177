import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

export type IssueState = 'opened' | 'reopened' | 'closed';

/** An issue; `iid` is unique per project. Deleting is soft (`deleted_at`): every read filters it out. */
@Entity('issues')
export class Issue {
  @PrimaryGeneratedColumn() id: number;
  @Column() iid: number;
  @Column({ name: 'project_id' }) projectId: number;
  @Column() title: string;
  @Column({ type: 'text', nullable: true }) description: string | null;
  @Column({ type: 'varchar' }) state: IssueState;
  @Column() confidential: boolean;
  @Column({ name: 'author_id', type: 'integer', nullable: true }) authorId: number | null;
  @Column({ name: 'assignee_id', type: 'integer', nullable: true }) assigneeId: number | null;
  @Column({ name: 'milestone_id', type: 'integer', nullable: true }) milestoneId: number | null;
  @Column({ name: 'moved_to_id', type: 'integer', nullable: true }) movedToId: number | null;
  @Column() position: number;
  @Column({ name: 'deleted_at', type: 'timestamptz', nullable: true }) deletedAt: Date | null;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' }) updatedAt: Date;
}
