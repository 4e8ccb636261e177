import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

export type EnvironmentState = 'available' | 'stopped';

/** A project's environment (GitLab 8.17's `environments`): where its builds deploy. */
@Entity('environments')
export class Environment {
  @PrimaryGeneratedColumn() id: number;
  @Column({ name: 'project_id' }) projectId: number;
  @Column() name: string;
  @Column() slug: string;
  @Column({ name: 'external_url', type: 'varchar', nullable: true }) externalUrl: string | null;
  @Column({ name: 'environment_type', type: 'varchar', nullable: true }) environmentType: string | null;
  @Column({ type: 'varchar' }) state: EnvironmentState;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' }) updatedAt: Date;
}

/** A build's deployment to an environment (GitLab 8.17's `deployments`), numbered per project. */
@Entity('deployments')
export class Deployment {
  @PrimaryGeneratedColumn() id: number;
  @Column() iid: number;
  @Column({ name: 'project_id' }) projectId: number;
  @Column({ name: 'environment_id' }) environmentId: number;
  @Column() ref: string;
  @Column() tag: boolean;
  @Column() sha: string;
  @Column({ name: 'user_id', type: 'integer', nullable: true }) userId: number | null;
  @Column({ name: 'deployable_type', type: 'varchar', nullable: true }) deployableType: string | null;
  @Column({ name: 'deployable_id', type: 'integer', nullable: true }) deployableId: number | null;
  @Column({ name: 'on_stop', type: 'varchar', nullable: true }) onStop: string | null;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' }) updatedAt: Date;
}
