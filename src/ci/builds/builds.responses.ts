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

@ResponseEntity('BuildPipeline')
export class BuildPipelineResponse {
  @ApiProperty({ type: 'integer' })
  id!: number;

  @ApiProperty({ type: String })
  sha!: string;

  @ApiProperty({ type: String })
  ref!: string;

  @ApiProperty({ type: String, nullable: true, enum: ['created', 'pending', 'running', 'success', 'failed', 'canceled', 'skipped', 'manual'] })
  status!: string | null;
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

  @ApiProperty({ type: () => BuildPipelineResponse, description: "the build's pipeline (GitLab 8.17's PipelineBasic)" })
  pipeline!: BuildPipelineResponse;
}

@ResponseEntity('BuildArtifactsFile')
export class BuildArtifactsFileResponse {
  @ApiProperty({ type: String })
  filename!: string;

  @ApiProperty({ type: 'integer' })
  size!: number;
}
