import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

/** A deploy key enabled on a project (GitLab 8.17's `DeployKeysProject`). */
@Entity('deploy_keys_projects')
export class DeployKeysProject {
  @PrimaryGeneratedColumn() id: number;
  @Column({ name: 'deploy_key_id' }) deployKeyId: number;
  @Column({ name: 'project_id' }) projectId: number;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' }) updatedAt: Date;
}
