import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

/** A project snippet. */
@Entity('snippets')
export class Snippet {
  @PrimaryGeneratedColumn() id: number;
  @Column({ name: 'project_id' }) projectId: number;
  @Column({ name: 'author_id', type: 'integer', nullable: true }) authorId: number | null;
  @Column() title: string;
  @Column({ name: 'file_name' }) fileName: string;
  @Column({ type: 'text' }) content: string;
  @Column({ name: 'visibility_level' }) visibilityLevel: number;
  @Column({ name: 'expires_at', type: 'timestamptz', nullable: true }) expiresAt: Date | null;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' }) updatedAt: Date;
}
