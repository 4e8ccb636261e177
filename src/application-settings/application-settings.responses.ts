import { ApiProperty } from '@nestjs/swagger';
import { ResponseEntity } from '../openapi/response-types';

@ResponseEntity('ApplicationSettings')
export class ApplicationSettingsResponse {
  @ApiProperty({ type: 'integer' })
  id!: number;

  @ApiProperty({ type: 'integer' })
  default_projects_limit!: number;

  @ApiProperty({ type: Boolean })
  signup_enabled!: boolean;

  @ApiProperty({ type: Boolean })
  signin_enabled!: boolean;

  @ApiProperty({ type: Boolean })
  gravatar_enabled!: boolean;

  @ApiProperty({ type: Boolean, description: 'same as gravatar_enabled' })
  avatar_enabled!: boolean;

  @ApiProperty({ type: String, nullable: true })
  sign_in_text!: string | null;

  @ApiProperty({ type: String, format: 'date-time' })
  created_at!: Date | string;

  @ApiProperty({ type: String, format: 'date-time' })
  updated_at!: Date | string;

  @ApiProperty({ type: String, nullable: true })
  home_page_url!: string | null;

  @ApiProperty({ type: 'integer', enum: [0, 1, 2] })
  default_branch_protection!: number;

  @ApiProperty({ type: 'integer', isArray: true, nullable: true })
  restricted_visibility_levels!: number[] | null;

  @ApiProperty({ type: 'integer', description: 'MB' })
  max_attachment_size!: number;

  @ApiProperty({ type: 'integer', description: 'minutes' })
  session_expire_delay!: number;

  @ApiProperty({ type: 'integer' })
  default_project_visibility!: number;

  @ApiProperty({ type: 'integer' })
  default_snippet_visibility!: number;

  @ApiProperty({ type: 'integer' })
  default_group_visibility!: number;

  @ApiProperty({ type: [String], nullable: true })
  restricted_signup_domains!: string[] | null;

  @ApiProperty({ type: [String], nullable: true })
  domain_whitelist!: string[] | null;

  @ApiProperty({ type: Boolean })
  user_oauth_applications!: boolean;

  @ApiProperty({ type: String, nullable: true })
  after_sign_out_path!: string | null;

  @ApiProperty({ type: 'integer', description: 'minutes' })
  container_registry_token_expire_delay!: number;

  @ApiProperty({ type: Boolean })
  allow_local_requests_from_hooks_and_services!: boolean;

  @ApiProperty({ type: Boolean, description: 'shared runners take builds; the default of new projects' })
  shared_runners_enabled!: boolean;

  @ApiProperty({ type: 'integer', description: 'MB' })
  max_artifacts_size!: number;

  @ApiProperty({ type: 'integer', description: 'MB: the largest public/ folder a pages build publishes' })
  max_pages_size!: number;

  @ApiProperty({ type: String, description: 'the token that registers shared runners' })
  runners_registration_token!: string;
}
