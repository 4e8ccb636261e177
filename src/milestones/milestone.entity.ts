import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

export type MilestoneState = 'active' | 'closed';

@Entity('milestones')
export class Milestone {
  @PrimaryGeneratedColumn() id: number;
  @Column() iid: number;
  @Column({ name: 'project_id' }) projectId: number;
  @Column() title: string;
  @Column({ type: 'text', nullable: true }) description: string | null;
  @Column({ type: 'varchar' }) state: MilestoneState;
  /** `YYYY-MM-DD` (TypeORM hydrates `date` columns as strings). */
  @Column({ name: 'due_date', type: 'date', nullable: true }) dueDate: string | null;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' }) updatedAt: Date;
}
