import { ApiProperty, IntersectionType } from '@nestjs/swagger';
import { UserResponse } from '../../users/users.responses';
import { CommitSummaryFields, RunTimeFields } from '../../openapi/response-fields';
import { RunnerResponse } from '../runners/runners.responses';
import { ResponseEntity } from '../../openapi/response-types';

@ResponseEntity('BuildCommit')
export class BuildCommitResponse extends CommitSummaryFields {}

/** A build up to its times; not a schema of its own. */
class BuildHead {
  @ApiProperty({ type: 'integer' })
  id!: number;

  @ApiProperty({ type: String, enum: ['created', 'pending', 'running', 'failed', 'success', 'canceled', 'skipped', 'manual'] })
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
}

@ResponseEntity('Build')
export class BuildResponse extends IntersectionType(BuildHead, RunTimeFields) {
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
