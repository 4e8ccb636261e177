import { ApiProperty } from '@nestjs/swagger';
import { AuthorResponse } from '../users/users.responses';
import { ResponseEntity } from '../openapi/response-types';

@ResponseEntity('Note')
export class NoteResponse {
  @ApiProperty({ type: 'integer' })
  id!: number;

  @ApiProperty({ type: String })
  body!: string;

  @ApiProperty({ type: String, description: 'file name of the attachment', nullable: true })
  attachment!: string | null;

  @ApiProperty({ type: () => AuthorResponse, nullable: true, description: 'null when the author no longer exists' })
  author!: AuthorResponse | null;

  @ApiProperty({ type: String, format: 'date-time' })
  created_at!: Date | string;

  @ApiProperty({ type: String, format: 'date-time' })
  updated_at!: Date | string;

  @ApiProperty({ type: Boolean })
  system!: boolean;

  @ApiProperty({ type: 'integer' })
  noteable_id!: number;

  @ApiProperty({ type: String, enum: ['Issue', 'Snippet', 'MergeRequest'] })
  noteable_type!: string;

  @ApiProperty({ type: Boolean })
  upvote!: boolean;

  @ApiProperty({ type: Boolean })
  downvote!: boolean;
}

@ResponseEntity('MergeRequestComment', "The legacy merge request comment (GitLab's MRNote entity).")
export class MergeRequestCommentResponse {
  @ApiProperty({ type: String })
  note!: string;

  @ApiProperty({ type: () => AuthorResponse, nullable: true, description: 'null when the author no longer exists' })
  author!: AuthorResponse | null;
}
