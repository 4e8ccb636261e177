import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

export type SubscribableType = 'Issue' | 'Label' | 'MergeRequest';

/** An explicit (un)subscription of a user to an issue or label; absence means "the default". */
@Entity('subscriptions')
export class Subscription {
  @PrimaryGeneratedColumn() id: number;
  @Column({ name: 'user_id' }) userId: number;
  @Column({ name: 'subscribable_type', type: 'varchar' }) subscribableType: SubscribableType;
  @Column({ name: 'subscribable_id' }) subscribableId: number;
  @Column() subscribed: boolean;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' }) updatedAt: Date;
}
