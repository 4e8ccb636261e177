import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

/** A project label; titles are unique per project, case-insensitively. */
@Entity('labels')
export class Label {
  @PrimaryGeneratedColumn() id: number;
  @Column({ name: 'project_id' }) projectId: number;
  @Column() title: string;
  @Column() color: string;
  @Column({ type: 'text', nullable: true }) description: string | null;
  @Column() template: boolean;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' }) updatedAt: Date;
}

/** A label attached to an issue (later: a merge request). */
@Entity('label_links')
export class LabelLink {
  @PrimaryGeneratedColumn() id: number;
  @Column({ name: 'label_id' }) labelId: number;
  @Column({ name: 'target_type' }) targetType: string;
  @Column({ name: 'target_id' }) targetId: number;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
}
