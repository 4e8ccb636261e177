import { Column, CreateDateColumn, Entity, JoinColumn, ManyToOne, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';
import { Namespace } from '../namespaces/namespace.entity';

@Entity('projects')
export class Project {
  @PrimaryGeneratedColumn() id: number;
  @Column() name: string;
  @Column() path: string;
  @Column({ type: 'text', nullable: true }) description: string | null;
  @Column({ name: 'namespace_id' }) namespaceId: number;
  @Column({ name: 'creator_id', type: 'integer', nullable: true }) creatorId: number | null;
  @Column({ name: 'visibility_level' }) visibilityLevel: number;
  @Column({ name: 'default_branch', type: 'varchar', nullable: true }) defaultBranch: string | null;
  @Column({ name: 'issues_enabled' }) issuesEnabled: boolean;
  @Column({ name: 'merge_requests_enabled' }) mergeRequestsEnabled: boolean;
  @Column({ name: 'wiki_enabled' }) wikiEnabled: boolean;
  @Column({ name: 'builds_enabled' }) buildsEnabled: boolean;
  @Column({ name: 'snippets_enabled' }) snippetsEnabled: boolean;
  @Column({ name: 'container_registry_enabled' }) containerRegistryEnabled: boolean;
  @Column({ name: 'shared_runners_enabled' }) sharedRunnersEnabled: boolean;
  @Column({ name: 'public_builds' }) publicBuilds: boolean;
  /** Git LFS for this project; null: the instance's LFS_ENABLED (8.17's Project#lfs_enabled?). */
  @Column({ name: 'lfs_enabled', type: 'boolean', nullable: true }) lfsEnabled: boolean | null;
  @Column() archived: boolean;
  @Column({ name: 'star_count' }) starCount: number;
  @Column({ name: 'forked_from_project_id', type: 'integer', nullable: true }) forkedFromProjectId: number | null;
  @Column({ name: 'import_url', type: 'varchar', nullable: true }) importUrl: string | null;
  @Column({ name: 'import_status' }) importStatus: string;
  @Column({ name: 'import_error', type: 'text', nullable: true }) importError: string | null;
  @Column({ name: 'runners_token_digest' }) runnersTokenDigest: string;
  @Column({ name: 'runners_token_encrypted' }) runnersTokenEncrypted: string;
  @Column({ name: 'last_activity_at', type: 'timestamptz' }) lastActivityAt: Date;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' }) updatedAt: Date;

  @ManyToOne(() => Namespace)
  @JoinColumn({ name: 'namespace_id' })
  namespace: Namespace;
}
