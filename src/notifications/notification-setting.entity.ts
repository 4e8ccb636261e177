import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';
import type { CustomEvents } from './notification-levels';

export type NotificationSource = 'global' | 'Project' | 'Namespace';

/** A user's notification level for everything (global), a group or a project (GitLab 8.12). */
@Entity('notification_settings')
export class NotificationSetting {
  @PrimaryGeneratedColumn() id: number;
  @Column({ name: 'user_id' }) userId: number;
  @Column({ name: 'source_type', type: 'varchar' }) sourceType: NotificationSource;
  @Column({ name: 'source_id' }) sourceId: number;
  /** See NOTIFICATION_LEVELS. */
  @Column({ type: 'smallint' }) level: number;
  @Column({ type: 'jsonb' }) events: CustomEvents;
  /** Global row only: where notifications go instead of the account's email. */
  @Column({ name: 'notification_email', type: 'varchar', nullable: true }) notificationEmail: string | null;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' }) updatedAt: Date;
}
