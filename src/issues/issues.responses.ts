import { ApiProperty, IntersectionType } from '@nestjs/swagger';
import { DeletedRowFields } from '../openapi/response-fields';
import { IssuableFields, IssuableRecordRefFields } from './issuable.responses';
import { MilestoneResponse } from '../milestones/milestones.responses';
import { AuthorResponse, UserBasicResponse } from '../users/users.responses';
import { ResponseEntity } from '../openapi/response-types';

@ResponseEntity('Issue')
export class IssueResponse extends IssuableFields {
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

/** A deleted issue record up to its references; not a schema of its own. */
class IssueRecordHead extends IssuableFields {
  @ApiProperty({ type: String, enum: ['opened', 'closed'] })
  state!: string;

  @ApiProperty({ type: Boolean })
  confidential!: boolean;
}

/** Where a deleted issue record went (moved) and stood; not a schema of its own. */
class IssueRecordPlace {
  @ApiProperty({ type: 'integer', nullable: true })
  moved_to_id!: number | null;

  @ApiProperty({ type: 'integer', nullable: true })
  position!: number | null;
}

@ResponseEntity('IssueRecord', 'The deleted issue record (DELETE answer).')
export class IssueRecordResponse extends IntersectionType(IssueRecordHead, IssuableRecordRefFields, IssueRecordPlace, DeletedRowFields) {}
