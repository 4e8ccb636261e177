import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

export type WebHookType = 'SystemHook' | 'ProjectHook';

/** A system hook (`project_id` null) or a project webhook. `url` never holds userinfo (kept encrypted apart). */
@Entity('web_hooks')
export class WebHook {
  @PrimaryGeneratedColumn() id: number;
  @Column({ type: 'varchar' }) type: WebHookType;
  @Column({ name: 'project_id', type: 'integer', nullable: true }) projectId: number | null;
  @Column() url: string;
  @Column({ name: 'url_userinfo_encrypted', type: 'text', nullable: true }) urlUserinfoEncrypted: string | null;
  @Column({ name: 'token_encrypted', type: 'text', nullable: true }) tokenEncrypted: string | null;
  @Column({ name: 'push_events' }) pushEvents: boolean;
  @Column({ name: 'tag_push_events' }) tagPushEvents: boolean;
  @Column({ name: 'issues_events' }) issuesEvents: boolean;
  @Column({ name: 'merge_requests_events' }) mergeRequestsEvents: boolean;
  @Column({ name: 'note_events' }) noteEvents: boolean;
  @Column({ name: 'build_events' }) buildEvents: boolean;
  @Column({ name: 'wiki_page_events' }) wikiPageEvents: boolean;
  @Column({ name: 'enable_ssl_verification' }) enableSslVerification: boolean;
  @Column({ name: 'recent_failures' }) recentFailures: number;
  @Column({ name: 'last_status', type: 'integer', nullable: true }) lastStatus: number | null;
  @Column({ name: 'last_error', type: 'text', nullable: true }) lastError: string | null;
  @Column({ name: 'last_failure_at', type: 'timestamptz', nullable: true }) lastFailureAt: Date | null;
  @Column({ name: 'disabled_at', type: 'timestamptz', nullable: true }) disabledAt: Date | null;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' }) updatedAt: Date;
}

/** One delivery attempt of a hook (the last 100 per hook are kept). */
@Entity('web_hook_logs')
export class WebHookLog {
  @PrimaryGeneratedColumn({ type: 'bigint' }) id: string;
  @Column({ name: 'web_hook_id' }) webHookId: number;
  /** The event that caused it (`push`, `issue`, `project_create` ...). */
  @Column() trigger: string;
  /** The `X-Gitlab-Event` sent. */
  @Column() event: string;
  @Column() attempt: number;
  @Column({ name: 'response_status', type: 'integer', nullable: true }) responseStatus: number | null;
  /** Seconds. */
  @Column({ name: 'execution_duration', type: 'real' }) executionDuration: number;
  @Column({ name: 'response_body', type: 'text', nullable: true }) responseBody: string | null;
  @Column({ type: 'text', nullable: true }) error: string | null;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
}

/** Which switch of a hook selects an event. */
export type HookSwitch = 'pushEvents' | 'tagPushEvents' | 'issuesEvents' | 'mergeRequestsEvents' | 'noteEvents' | 'buildEvents';
