import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

/** The single row of admin-editable runtime settings. */
@Entity('application_settings')
export class ApplicationSettings {
  @PrimaryGeneratedColumn() id: number;
  @Column({ name: 'default_projects_limit' }) defaultProjectsLimit: number;
  @Column({ name: 'signup_enabled' }) signupEnabled: boolean;
  @Column({ name: 'signin_enabled' }) signinEnabled: boolean;
  @Column({ name: 'gravatar_enabled' }) gravatarEnabled: boolean;
  @Column({ name: 'sign_in_text', type: 'text', nullable: true }) signInText: string | null;
  @Column({ name: 'home_page_url', type: 'varchar', nullable: true }) homePageUrl: string | null;
  @Column({ name: 'default_branch_protection' }) defaultBranchProtection: number;
  @Column({ name: 'restricted_visibility_levels', type: 'int', array: true, nullable: true })
  restrictedVisibilityLevels: number[] | null;
  @Column({ name: 'max_attachment_size' }) maxAttachmentSize: number;
  @Column({ name: 'session_expire_delay' }) sessionExpireDelay: number;
  @Column({ name: 'default_project_visibility' }) defaultProjectVisibility: number;
  @Column({ name: 'default_snippet_visibility' }) defaultSnippetVisibility: number;
  @Column({ name: 'default_group_visibility' }) defaultGroupVisibility: number;
  @Column({ name: 'restricted_signup_domains', type: 'text', array: true, nullable: true })
  restrictedSignupDomains: string[] | null;
  @Column({ name: 'user_oauth_applications' }) userOauthApplications: boolean;
  @Column({ name: 'after_sign_out_path', type: 'varchar', nullable: true }) afterSignOutPath: string | null;
  @Column({ name: 'container_registry_token_expire_delay' }) containerRegistryTokenExpireDelay: number;
  @Column({ name: 'allow_local_requests_from_hooks_and_services' }) allowLocalRequestsFromHooksAndServices: boolean;
  /** Shared runners take builds (and new projects have them enabled); off: shared runners take nothing. */
  @Column({ name: 'shared_runners_enabled' }) sharedRunnersEnabled: boolean;
  /** MB; a larger artifacts upload is 413. */
  @Column({ name: 'max_artifacts_size' }) maxArtifactsSize: number;
  /** MB; a `pages` build whose `public/` folder is larger is not published (GitLab 8.17's setting). */
  @Column({ name: 'max_pages_size' }) maxPagesSize: number;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' }) updatedAt: Date;
}
