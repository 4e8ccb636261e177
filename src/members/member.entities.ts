import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

@Entity('project_members')
export class ProjectMember {
  @PrimaryGeneratedColumn() id: number;
  @Column({ name: 'project_id' }) projectId: number;
  @Column({ name: 'user_id' }) userId: number;
  @Column({ name: 'access_level' }) accessLevel: number;
  @Column({ name: 'notification_level' }) notificationLevel: number;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' }) updatedAt: Date;
}

@Entity('group_members')
export class GroupMember {
  @PrimaryGeneratedColumn() id: number;
  @Column({ name: 'namespace_id' }) namespaceId: number;
  @Column({ name: 'user_id' }) userId: number;
  @Column({ name: 'access_level' }) accessLevel: number;
  @Column({ name: 'notification_level' }) notificationLevel: number;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' }) updatedAt: Date;
}
