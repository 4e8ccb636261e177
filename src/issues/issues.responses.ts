import { ApiProperty } from '@nestjs/swagger';
import { MilestoneResponse } from '../milestones/milestones.responses';
import { AuthorResponse, UserBasicResponse } from '../users/users.responses';
import { ResponseEntity } from '../openapi/response-types';

@ResponseEntity('Issue')
export class IssueResponse {
  @ApiProperty({ type: 'integer' })
  id!: number;

  @ApiProperty({ type: 'integer' })
  iid!: number;

  @ApiProperty({ type: 'integer' })
  project_id!: number;

  @ApiProperty({ type: String })
  title!: string;

  @ApiProperty({ type: String, nullable: true })
  description!: string | null;

  @ApiProperty({ type: String, enum: ['opened', 'closed'] })
  state!: string;

  @ApiProperty({ type: String, format: 'date-time' })
  created_at!: Date | string;

  @ApiProperty({ type: String, format: 'date-time' })
  updated_at!: Date | string;

  @ApiProperty({ type: [String] })
  labels!: string[];

  @ApiProperty({ type: () => MilestoneResponse, nullable: true })
  milestone!: MilestoneResponse | null;

  @ApiProperty({ type: () => UserBasicResponse, nullable: true })
  assignee!: UserBasicResponse | null;

  @ApiProperty({ type: () => AuthorResponse, nullable: true, description: 'null when the author no longer exists' })
  author!: AuthorResponse | null;

  @ApiProperty({ type: Boolean })
  subscribed!: boolean;

  @ApiProperty({ type: 'integer' })
  user_notes_count!: number;
}

@ResponseEntity('IssueRecord', 'The deleted issue record (DELETE answer).')
export class IssueRecordResponse {
  @ApiProperty({ type: 'integer' })
  id!: number;

  @ApiProperty({ type: 'integer' })
  iid!: number;

  @ApiProperty({ type: 'integer' })
  project_id!: number;

  @ApiProperty({ type: String })
  title!: string;

  @ApiProperty({ type: String, nullable: true })
  description!: string | null;

  @ApiProperty({ type: String, enum: ['opened', 'closed'] })
  state!: string;

  @ApiProperty({ type: Boolean })
  confidential!: boolean;

  @ApiProperty({ type: 'integer', nullable: true, description: 'null when the author no longer exists' })
  author_id!: number | null;

  @ApiProperty({ type: 'integer', nullable: true })
  assignee_id!: number | null;

  @ApiProperty({ type: 'integer', nullable: true })
  milestone_id!: number | null;

  @ApiProperty({ type: 'integer', nullable: true })
  moved_to_id!: number | null;

  @ApiProperty({ type: 'integer', nullable: true })
  position!: number | null;

  @ApiProperty({ type: String, format: 'date-time' })
  created_at!: Date | string;

  @ApiProperty({ type: String, format: 'date-time' })
  updated_at!: Date | string;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  deleted_at!: Date | string | null;
}
