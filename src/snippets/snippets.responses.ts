import { ApiProperty } from '@nestjs/swagger';
import { AuthorResponse } from '../users/users.responses';
import { ResponseEntity } from '../openapi/response-types';

@ResponseEntity('Snippet')
export class SnippetResponse {
  @ApiProperty({ type: 'integer' })
  id!: number;

  @ApiProperty({ type: String })
  title!: string;

  @ApiProperty({ type: String })
  file_name!: string;

  @ApiProperty({ type: () => AuthorResponse, nullable: true, description: 'null when the author no longer exists' })
  author!: AuthorResponse | null;

  @ApiProperty({ type: String, format: 'date-time' })
  updated_at!: Date | string;

  @ApiProperty({ type: String, format: 'date-time' })
  created_at!: Date | string;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  expires_at!: Date | string | null;
}

@ResponseEntity('SnippetRecord', 'The deleted snippet record (DELETE answer).')
export class SnippetRecordResponse {
  @ApiProperty({ type: 'integer' })
  id!: number;

  @ApiProperty({ type: String })
  title!: string;

  @ApiProperty({ type: String })
  content!: string;

  @ApiProperty({ type: 'integer', nullable: true, description: 'null when the author no longer exists' })
  author_id!: number | null;

  @ApiProperty({ type: 'integer' })
  project_id!: number;

  @ApiProperty({ type: String, format: 'date-time' })
  created_at!: Date | string;

  @ApiProperty({ type: String, format: 'date-time' })
  updated_at!: Date | string;

  @ApiProperty({ type: String })
  file_name!: string;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  expires_at!: Date | string | null;

  @ApiProperty({ type: String, enum: ['ProjectSnippet'] })
  type!: string;

  @ApiProperty({ type: 'integer' })
  visibility_level!: number;
}
