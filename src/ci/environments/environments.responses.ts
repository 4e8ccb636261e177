import { ApiProperty } from '@nestjs/swagger';
import { ResponseEntity } from '../../openapi/response-types';
import { ProjectResponse } from '../../projects/projects.responses';
import { UserBasicResponse } from '../../users/users.responses';
import { BuildResponse } from '../builds/builds.responses';

@ResponseEntity('EnvironmentBasic', "GitLab 8.17's EnvironmentBasic: an environment without its project.")
export class EnvironmentBasicResponse {
  @ApiProperty({ type: 'integer' }) id!: number;
  @ApiProperty({ type: String }) name!: string;
  @ApiProperty({ type: String, description: 'generated from the name when created: lower-case letters, digits and -, at most 24' }) slug!: string;
  @ApiProperty({ type: String, nullable: true }) external_url!: string | null;
}

@ResponseEntity('Environment', "GitLab 8.17's Environment: EnvironmentBasic with its project.")
export class EnvironmentResponse extends EnvironmentBasicResponse {
  @ApiProperty({ type: ProjectResponse }) project!: ProjectResponse;
}

@ResponseEntity('Deployment', "GitLab 8.17's Deployment: a build's deployment to an environment.")
export class DeploymentResponse {
  @ApiProperty({ type: 'integer' }) id!: number;
  @ApiProperty({ type: 'integer', description: 'numbered per project' }) iid!: number;
  @ApiProperty({ type: String }) ref!: string;
  @ApiProperty({ type: String }) sha!: string;
  @ApiProperty({ type: String, format: 'date-time' }) created_at!: string;
  @ApiProperty({ type: UserBasicResponse, nullable: true }) user!: UserBasicResponse | null;
  @ApiProperty({ type: EnvironmentBasicResponse }) environment!: EnvironmentBasicResponse;
  @ApiProperty({ type: BuildResponse, nullable: true, description: 'the build that deployed' }) deployable!: BuildResponse | null;
}
