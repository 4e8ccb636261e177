import { ApiProperty } from '@nestjs/swagger';
import { NoteResponse } from '../notes/notes.responses';
import { AuthorResponse } from '../users/users.responses';
import { ResponseEntity } from '../openapi/response-types';

@ResponseEntity('Event')
export class EventResponse {
  @ApiProperty({ type: String, nullable: true })
  title!: string | null;

  @ApiProperty({ type: 'integer', nullable: true })
  project_id!: number | null;

  @ApiProperty({
    type: String,
    enum: ['pushed new', 'pushed to', 'deleted', 'closed', 'accepted', 'joined', 'left', 'destroyed', 'commented on', 'created', 'imported', 'opened'],
  })
  action_name!: string;

  @ApiProperty({ type: 'integer', nullable: true })
  target_id!: number | null;

  @ApiProperty({ type: String, enum: ['Issue', 'MergeRequest', 'Note', 'Milestone'], nullable: true })
  target_type!: string | null;

  @ApiProperty({ type: 'integer', nullable: true, description: 'null when the author no longer exists' })
  author_id!: number | null;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description: 'push data: before, after, ref, user_id, user_name, repository, commits, total_commits_count, ...',
    nullable: true,
  })
  data!: Record<string, unknown> | null;

  @ApiProperty({ type: String, nullable: true })
  target_title!: string | null;

  @ApiProperty({ type: String, format: 'date-time' })
  created_at!: Date | string;

  @ApiProperty({ type: () => NoteResponse, description: 'comment events only', required: false })
  note?: NoteResponse;

  @ApiProperty({ type: () => AuthorResponse, required: false })
  author?: AuthorResponse;

  @ApiProperty({ type: String, required: false })
  author_username?: string;
}
