import { ApiProperty } from '@nestjs/swagger';
import { UserBasicResponse } from '../../users/users.responses';
import { CommitRunFields } from '../../openapi/response-fields';
import { ResponseEntity } from '../../openapi/response-types';

@ResponseEntity('Pipeline')
export class PipelineResponse extends CommitRunFields {
  @ApiProperty({ type: String, enum: ['created', 'pending', 'running', 'success', 'failed', 'canceled', 'skipped', 'manual'], nullable: true })
  status!: string | null;

  @ApiProperty({ type: String, nullable: true })
  before_sha!: string | null;

  @ApiProperty({ type: Boolean })
  tag!: boolean;

  @ApiProperty({ type: String, description: 'why the .gitlab-ci.yml is invalid (the pipeline is then failed, without builds)', nullable: true })
  yaml_errors!: string | null;

  @ApiProperty({ type: () => UserBasicResponse, nullable: true })
  user!: UserBasicResponse | null;

  @ApiProperty({ type: String, format: 'date-time' })
  created_at!: Date | string;

  @ApiProperty({ type: String, format: 'date-time' })
  updated_at!: Date | string;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  started_at!: Date | string | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  finished_at!: Date | string | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  committed_at!: Date | string | null;

  @ApiProperty({ type: 'integer', description: 'seconds from start to finish', nullable: true })
  duration!: number | null;

  @ApiProperty({ type: String, description: 'mean coverage of the latest builds, "%.2f"', nullable: true })
  coverage!: string | null;
}

@ResponseEntity('CiLint')
export class CiLintResponse {
  @ApiProperty({ type: String, enum: ['valid', 'invalid'] })
  status!: string;

  @ApiProperty({ type: [String], description: 'the error, naming the job and the key' })
  errors!: string[];
}
