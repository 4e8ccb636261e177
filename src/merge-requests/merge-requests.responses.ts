import { ApiProperty, IntersectionType } from '@nestjs/swagger';
import { IssuableFields, IssuableRecordRefFields } from '../issues/issuable.responses';
import { DeletedRowFields } from '../openapi/response-fields';
import { MilestoneResponse } from '../milestones/milestones.responses';
import { DiffEntryResponse } from '../repo-api/repo-api.responses';
import { AuthorResponse, UserBasicResponse } from '../users/users.responses';
import { ResponseEntity } from '../openapi/response-types';

@ResponseEntity('MergeRequest')
export class MergeRequestResponse extends IssuableFields {
  @ApiProperty({ type: String, enum: ['opened', 'closed', 'merged'], description: 'a reopened or locked (merging) request reads opened' })
  state!: string;

  @ApiProperty({ type: String, format: 'date-time' })
  created_at!: Date | string;

  @ApiProperty({ type: String, format: 'date-time' })
  updated_at!: Date | string;

  @ApiProperty({ type: String })
  target_branch!: string;

  @ApiProperty({ type: String })
  source_branch!: string;

  @ApiProperty({ type: 'integer' })
  upvotes!: number;

  @ApiProperty({ type: 'integer' })
  downvotes!: number;

  @ApiProperty({ type: () => AuthorResponse, nullable: true, description: 'null when the author no longer exists' })
  author!: AuthorResponse | null;

  @ApiProperty({ type: () => UserBasicResponse, nullable: true })
  assignee!: UserBasicResponse | null;

  @ApiProperty({ type: 'integer', nullable: true, description: 'null when the source project no longer exists' })
  source_project_id!: number | null;

  @ApiProperty({ type: 'integer' })
  target_project_id!: number;

  @ApiProperty({ type: [String] })
  labels!: string[];

  @ApiProperty({ type: Boolean })
  work_in_progress!: boolean;

  @ApiProperty({ type: () => MilestoneResponse, nullable: true })
  milestone!: MilestoneResponse | null;

  @ApiProperty({ type: Boolean })
  merge_when_build_succeeds!: boolean;

  @ApiProperty({ type: String, enum: ['unchecked', 'can_be_merged', 'cannot_be_merged'] })
  merge_status!: string;

  @ApiProperty({ type: Boolean })
  subscribed!: boolean;

  @ApiProperty({ type: 'integer' })
  user_notes_count!: number;
}

@ResponseEntity('MergeRequestChanges')
export class MergeRequestChangesResponse extends MergeRequestResponse {
  @ApiProperty({ type: () => [DiffEntryResponse] })
  changes!: DiffEntryResponse[];

  @ApiProperty({ type: Boolean, description: 'true when the diff was cut at the compare limits', required: false })
  changes_truncated?: boolean;
}

/** A deleted merge request record up to its references; not a schema of its own. */
class MergeRequestRecordHead {
  @ApiProperty({ type: 'integer' })
  id!: number;

  @ApiProperty({ type: 'integer' })
  iid!: number;

  @ApiProperty({ type: 'integer' })
  target_project_id!: number;

  @ApiProperty({ type: 'integer', nullable: true, description: 'null when the source project no longer exists' })
  source_project_id!: number | null;

  @ApiProperty({ type: String })
  target_branch!: string;

  @ApiProperty({ type: String })
  source_branch!: string;

  @ApiProperty({ type: String })
  title!: string;

  @ApiProperty({ type: String, nullable: true })
  description!: string | null;

  @ApiProperty({ type: String })
  state!: string;

  @ApiProperty({ type: String })
  merge_status!: string;
}

/** How a deleted merge request record was (to be) merged; not a schema of its own. */
class MergeRequestRecordMerge {
  @ApiProperty({ type: Boolean })
  merge_when_build_succeeds!: boolean;

  @ApiProperty({ type: 'integer', nullable: true })
  merge_user_id!: number | null;

  @ApiProperty({ type: String, nullable: true })
  merge_commit_sha!: string | null;
}

@ResponseEntity('MergeRequestRecord', 'The deleted merge request record (DELETE answer).')
export class MergeRequestRecordResponse extends IntersectionType(MergeRequestRecordHead, IssuableRecordRefFields, MergeRequestRecordMerge, DeletedRowFields) {}
