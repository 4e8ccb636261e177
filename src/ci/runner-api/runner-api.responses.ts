import { ApiProperty, IntersectionType } from '@nestjs/swagger';
import { ResponseEntity } from '../../openapi/response-types';
import { BuildArtifactsFileResponse } from '../builds/builds.responses';
import { RunnerAgentFields } from '../runners/runners.responses';

@ResponseEntity('RunnerRegistration')
export class RunnerRegistrationResponse {
  @ApiProperty({ type: 'integer' })
  id!: number;

  @ApiProperty({ type: String })
  token!: string;
}

@ResponseEntity('RunnerBuild', 'The short build entity of the runner API (each entry of `depends_on_builds`).')
export class RunnerBuildResponse {
  @ApiProperty({ type: 'integer' })
  id!: number;

  @ApiProperty({ type: String })
  ref!: string;

  @ApiProperty({ type: Boolean })
  tag!: boolean;

  @ApiProperty({ type: String })
  sha!: string;

  @ApiProperty({ type: String, enum: ['pending', 'running', 'failed', 'success', 'canceled', 'skipped'] })
  status!: string;

  @ApiProperty({ type: String })
  name!: string;

  @ApiProperty({ type: String, description: 'the build token; "" for a dependency whose token is gone' })
  token!: string;

  @ApiProperty({ type: String })
  stage!: string;

  @ApiProperty({ type: 'integer' })
  project_id!: number;

  @ApiProperty({ type: String })
  project_name!: string;

  @ApiProperty({ type: () => BuildArtifactsFileResponse, required: false, description: 'only when the build has artifacts' })
  artifacts_file?: BuildArtifactsFileResponse;
}

@ResponseEntity('BuildVariable')
export class BuildVariableResponse {
  @ApiProperty({ type: String })
  key!: string;

  @ApiProperty({ type: String })
  value!: string;

  @ApiProperty({ type: Boolean })
  public!: boolean;
}

@ResponseEntity(
  'BuildDetails',
  "What builds/register answers (runner-protocol §2.4, GitLab 8.8's key order); also the answer of artifact uploads and removals.",
)
export class BuildDetailsResponse extends RunnerBuildResponse {
  @ApiProperty({ type: String, description: 'the script, one command a line' })
  commands!: string;

  @ApiProperty({ type: String })
  repo_url!: string;

  @ApiProperty({ type: String })
  before_sha!: string;

  @ApiProperty({ type: Boolean })
  allow_git_fetch!: boolean;

  @ApiProperty({ type: 'object', additionalProperties: true, description: 'image, services, artifacts, cache, dependencies, ...' })
  options!: object;

  @ApiProperty({ type: 'integer', description: 'seconds' })
  timeout!: number;

  @ApiProperty({ type: () => [BuildVariableResponse] })
  variables!: BuildVariableResponse[];

  @ApiProperty({ type: () => [RunnerBuildResponse] })
  depends_on_builds!: RunnerBuildResponse[];
}

/** A deleted runner's row up to its agent's report; not a schema of its own. */
class RunnerRecordHead {
  @ApiProperty({ type: 'integer' })
  id!: number;

  @ApiProperty({ type: String, format: 'date-time' })
  created_at!: Date | string;

  @ApiProperty({ type: String, format: 'date-time' })
  updated_at!: Date | string;

  @ApiProperty({ type: String, nullable: true })
  description!: string | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  contacted_at!: Date | string | null;

  @ApiProperty({ type: Boolean })
  active!: boolean;

  @ApiProperty({ type: Boolean })
  is_shared!: boolean;

  @ApiProperty({ type: String, nullable: true })
  name!: string | null;
}

@ResponseEntity('RunnerRecord', "The deleted runner's row (runners/delete).")
export class RunnerRecordResponse extends IntersectionType(RunnerRecordHead, RunnerAgentFields) {
  @ApiProperty({ type: Boolean })
  run_untagged!: boolean;
}
