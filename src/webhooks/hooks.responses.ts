import { ApiProperty, IntersectionType } from '@nestjs/swagger';
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

/** What a project hook and a system hook start with; not a schema of its own. */
export abstract class HookFields {
  @ApiProperty({ type: 'integer' })
  id!: number;

  @ApiProperty({ type: String })
  url!: string;

  @ApiProperty({ type: String, format: 'date-time' })
  created_at!: Date | string;
}

/** How a hook's deliveries fare (project and system hooks, after their event switches); not a schema of its own. */
export class HookDeliveryHealthFields {
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
}

/** The event switches of a project hook and of a system hook's row (push to note); not a schema of its own. */
export class HookEventFields {
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
}

/** A project hook up to its event switches; not a schema of its own. */
class ProjectHookHead extends HookFields {
  @ApiProperty({ type: 'integer' })
  project_id!: number;
}

/** A project hook up to its delivery health; not a schema of its own. */
class ProjectHookSwitches extends IntersectionType(ProjectHookHead, HookEventFields) {
  @ApiProperty({ type: Boolean })
  build_events!: boolean;
}

@ResponseEntity('ProjectHook')
export class ProjectHookResponse extends IntersectionType(ProjectHookSwitches, HookDeliveryHealthFields) {
  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  disabled_at!: Date | string | null;
}
