import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

export type NoteableType = 'Issue' | 'Snippet' | 'MergeRequest';

/** A comment on an issue, snippet or (later) merge request; `system` notes record changes. */
@Entity('notes')
export class Note {
  @PrimaryGeneratedColumn() id: number;
  @Column({ name: 'project_id' }) projectId: number;
  @Column({ name: 'noteable_type', type: 'varchar' }) noteableType: NoteableType;
  @Column({ name: 'noteable_id' }) noteableId: number;
  @Column({ name: 'author_id', type: 'integer', nullable: true }) authorId: number | null;
  @Column({ type: 'text' }) body: string;
  @Column() system: boolean;
  @Column({ type: 'varchar', nullable: true }) attachment: string | null;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' }) updatedAt: Date;
}
