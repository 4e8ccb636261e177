import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

export type NamespaceKind = 'user' | 'group';

/** A user's personal namespace or a group: the first segment of every project path. */
@Entity('namespaces')
export class Namespace {
  @PrimaryGeneratedColumn() id: number;
  @Column() name: string;
  @Column() path: string;
  @Column() kind: NamespaceKind;
  @Column({ name: 'owner_id', type: 'integer', nullable: true }) ownerId: number | null;
  @Column() description: string;
  @Column({ name: 'visibility_level' }) visibilityLevel: number;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' }) updatedAt: Date;
}
