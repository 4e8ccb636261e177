import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';
import type { ActivityAction } from '../domain-events/domain-event-catalogue';

export type EventAction = ActivityAction;

@Entity('events')
export class Event {
  @PrimaryGeneratedColumn() id: number;
  @Column({ name: 'project_id', type: 'integer', nullable: true }) projectId: number | null;
  @Column({ name: 'author_id', type: 'integer', nullable: true }) authorId: number | null;
  @Column({ type: 'varchar' }) action: EventAction;
  @Column({ name: 'target_id', type: 'integer', nullable: true }) targetId: number | null;
  @Column({ name: 'target_type', type: 'varchar', nullable: true }) targetType: string | null;
  @Column({ name: 'target_title', type: 'text', nullable: true }) targetTitle: string | null;
  @Column({ type: 'text', nullable: true }) title: string | null;
  @Column({ type: 'jsonb', nullable: true }) data: Record<string, unknown> | null;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' }) updatedAt: Date;
}
