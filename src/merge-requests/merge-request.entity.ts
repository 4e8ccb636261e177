import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

/** `locked` only while a merge is being written (GitLab's transient state). */
export type MergeRequestState = 'opened' | 'reopened' | 'closed' | 'merged' | 'locked';
export type MergeStatus = 'unchecked' | 'can_be_merged' | 'cannot_be_merged';

/** What the merging user asked for, kept while the merge waits for the build. */
export interface MergeParams {
  merge_commit_message?: string;
  should_remove_source_branch?: boolean;
}

/**
 * A merge request from `source_branch` of `source_project_id` (the same project, or a fork) into
 * `target_branch` of `project_id`. `iid` is unique per target project. Deleting is soft.
 */
@Entity('merge_requests')
export class MergeRequest {
  @PrimaryGeneratedColumn() id: number;
  @Column() iid: number;
  @Column({ name: 'project_id' }) projectId: number;
  @Column({ name: 'source_project_id', type: 'integer', nullable: true }) sourceProjectId: number | null;
  @Column({ name: 'source_branch', type: 'varchar' }) sourceBranch: string;
  @Column({ name: 'target_branch', type: 'varchar' }) targetBranch: string;
  @Column() title: string;
  @Column({ type: 'text', nullable: true }) description: string | null;
  @Column({ type: 'varchar' }) state: MergeRequestState;
  @Column({ name: 'merge_status', type: 'varchar' }) mergeStatus: MergeStatus;
  @Column({ name: 'author_id', type: 'integer', nullable: true }) authorId: number | null;
  @Column({ name: 'assignee_id', type: 'integer', nullable: true }) assigneeId: number | null;
  @Column({ name: 'milestone_id', type: 'integer', nullable: true }) milestoneId: number | null;
  @Column({ name: 'merge_when_build_succeeds' }) mergeWhenBuildSucceeds: boolean;
  @Column({ name: 'merge_user_id', type: 'integer', nullable: true }) mergeUserId: number | null;
  @Column({ name: 'merge_params', type: 'jsonb', nullable: true }) mergeParams: MergeParams | null;
  /** The source head the merging user approved: the automatic merge merges exactly this commit, only while it is the head. */
  @Column({ name: 'merge_when_build_succeeds_sha', type: 'varchar', nullable: true }) mergeWhenBuildSucceedsSha: string | null;
  @Column({ name: 'merge_commit_sha', type: 'varchar', nullable: true }) mergeCommitSha: string | null;
  @Column({ name: 'merged_at', type: 'timestamptz', nullable: true }) mergedAt: Date | null;
  @Column({ name: 'deleted_at', type: 'timestamptz', nullable: true }) deletedAt: Date | null;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' }) updatedAt: Date;
}

const WIP = /^\s*(\[WIP\]\s*|WIP:\s*|WIP\s+)+/i;

/** GitLab's work-in-progress rule on the title. */
export function isWorkInProgress(title: string): boolean {
  return WIP.test(title);
}

export function isOpen(mr: Pick<MergeRequest, 'state'>): boolean {
  return mr.state === 'opened' || mr.state === 'reopened';
}
