import { ApiProperty } from '@nestjs/swagger';
import { UserResponse } from '../../users/users.responses';
import { RunnerResponse } from '../runners/runners.responses';
import { ResponseEntity } from '../../openapi/response-types';

@ResponseEntity('BuildCommit')
export class BuildCommitResponse {
  @ApiProperty({ type: String })
  id!: string;

  @ApiProperty({ type: String })
  short_id!: string;

  @ApiProperty({ type: String })
  title!: string;

  @ApiProperty({ type: String })
  author_name!: string;

  @ApiProperty({ type: String })
  author_email!: string;

  @ApiProperty({ type: String, format: 'date-time' })
  created_at!: Date | string;

  @ApiProperty({ type: String })
  message!: string;
}

@ResponseEntity('Build')
export class BuildResponse {
  @ApiProperty({ type: 'integer' })
  id!: number;

  @ApiProperty({ type: String, enum: ['pending', 'running', 'failed', 'success', 'canceled', 'skipped'] })
  status!: string;

  @ApiProperty({ type: String })
  stage!: string;

  @ApiProperty({ type: String })
  name!: string;

  @ApiProperty({ type: String })
  ref!: string;

  @ApiProperty({ type: Boolean })
  tag!: boolean;

  @ApiProperty({ type: Number, nullable: true })
  coverage!: number | null;

  @ApiProperty({ type: String, format: 'date-time' })
  created_at!: Date | string;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  started_at!: Date | string | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  finished_at!: Date | string | null;

  @ApiProperty({ type: () => UserResponse, nullable: true })
  user!: UserResponse | null;

  @ApiProperty({
    type: () => BuildArtifactsFileResponse,
    description: 'null when the build has no artifacts; absent from the erase answer',
    nullable: true,
    required: false,
  })
  artifacts_file?: BuildArtifactsFileResponse | null;

  @ApiProperty({ type: String, description: 'erase answer only, always null', nullable: true, required: false })
  download_url?: string | null;

  @ApiProperty({ type: () => BuildCommitResponse, nullable: true, description: 'null when the commit is not in the repository' })
  commit!: BuildCommitResponse | null;

  @ApiProperty({ type: () => RunnerResponse, nullable: true })
  runner!: RunnerResponse | null;
}

@ResponseEntity('BuildArtifactsFile')
export class BuildArtifactsFileResponse {
  @ApiProperty({ type: String })
  filename!: string;

  @ApiProperty({ type: 'integer' })
  size!: number;
}
