import { ApiProperty } from '@nestjs/swagger';
import { ResponseEntity } from '../openapi/response-types';

@ResponseEntity('HookDelivery')
export class HookDeliveryResponse {
  @ApiProperty({ type: 'integer' })
  id!: number;

  @ApiProperty({ type: String })
  trigger!: string;

  @ApiProperty({ type: String })
  event!: string;

  @ApiProperty({ type: 'integer' })
  attempt!: number;

  @ApiProperty({ type: 'integer', nullable: true })
  response_status!: number | null;

  @ApiProperty({ type: Number, nullable: true })
  execution_duration!: number | null;

  @ApiProperty({ type: String, nullable: true })
  response_body!: string | null;

  @ApiProperty({ type: String, nullable: true })
  error!: string | null;

  @ApiProperty({ type: String, format: 'date-time' })
  created_at!: Date | string;
}

@ResponseEntity('ProjectHook')
export class ProjectHookResponse {
  @ApiProperty({ type: 'integer' })
  id!: number;

  @ApiProperty({ type: String })
  url!: string;

  @ApiProperty({ type: String, format: 'date-time' })
  created_at!: Date | string;

  @ApiProperty({ type: 'integer' })
  project_id!: number;

  @ApiProperty({ type: Boolean })
  push_events!: boolean;

  @ApiProperty({ type: Boolean })
  issues_events!: boolean;

  @ApiProperty({ type: Boolean })
  merge_requests_events!: boolean;

  @ApiProperty({ type: Boolean })
  tag_push_events!: boolean;

  @ApiProperty({ type: Boolean })
  note_events!: boolean;

  @ApiProperty({ type: Boolean })
  build_events!: boolean;

  @ApiProperty({ type: Boolean })
  enable_ssl_verification!: boolean;

  @ApiProperty({ type: 'integer' })
  recent_failures!: number;

  @ApiProperty({ type: 'integer', nullable: true })
  last_status!: number | null;

  @ApiProperty({ type: String, nullable: true })
  last_error!: string | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  last_failure_at!: Date | string | null;

  @ApiProperty({ type: Boolean })
  disabled!: boolean;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  disabled_at!: Date | string | null;
}
