import { ApiProperty } from '@nestjs/swagger';
import { ProjectItemFields } from '../openapi/response-fields';

/**
 * What the issue and merge request views and their deleted records start with (IssueResponse,
 * IssueRecordResponse, MergeRequestResponse); not a schema of its own.
 */
export abstract class IssuableFields extends ProjectItemFields {
  @ApiProperty({ type: String, nullable: true })
  description!: string | null;
}

/** Whom and what a deleted issue or merge request record points at (their DELETE answers); not a schema of its own. */
export class IssuableRecordRefFields {
  @ApiProperty({ type: 'integer', nullable: true, description: 'null when the author no longer exists' })
  author_id!: number | null;

  @ApiProperty({ type: 'integer', nullable: true })
  assignee_id!: number | null;

  @ApiProperty({ type: 'integer', nullable: true })
  milestone_id!: number | null;
}
