import { ApiProperty, IntersectionType } from '@nestjs/swagger';
import { ResponseEntity } from '../openapi/response-types';
import { HookDeliveryHealthFields, HookEventFields, HookFields } from './hooks.responses';

/** A system hook up to its delivery health; not a schema of its own. */
class SystemHookHead extends HookFields {
  @ApiProperty({ type: Boolean })
  push_events!: boolean;

  @ApiProperty({ type: Boolean })
  tag_push_events!: boolean;
}

@ResponseEntity('SystemHook', "The spec's list/create view (id, url, created_at), plus the switches and delivery health.")
export class SystemHookResponse extends IntersectionType(SystemHookHead, HookDeliveryHealthFields) {}

/** A deleted system hook's row up to its event switches; not a schema of its own. */
class SystemHookRecordHead {
  @ApiProperty({ type: 'integer' })
  id!: number;

  @ApiProperty({ type: String })
  url!: string;

  @ApiProperty({ type: 'integer', nullable: true })
  project_id!: number | null;

  @ApiProperty({ type: String, format: 'date-time' })
  created_at!: Date | string;

  @ApiProperty({ type: String, format: 'date-time' })
  updated_at!: Date | string;

  @ApiProperty({ type: String, enum: ['SystemHook'] })
  type!: string;

  @ApiProperty({ type: 'integer', nullable: true })
  service_id!: number | null;
}

@ResponseEntity('SystemHookRecord', 'The deleted system hook record (DELETE answer).')
export class SystemHookRecordResponse extends IntersectionType(SystemHookRecordHead, HookEventFields) {
  @ApiProperty({ type: Boolean })
  enable_ssl_verification!: boolean;

  @ApiProperty({ type: Boolean })
  build_events!: boolean;

  @ApiProperty({ type: Boolean })
  wiki_page_events!: boolean;

  @ApiProperty({ type: String, description: 'never shown: null, or "[FILTERED]" when one is set', nullable: true })
  token!: string | null;
}

@ResponseEntity('SystemHookTest')
export class SystemHookTestResponse {
  @ApiProperty({ type: String })
  event_name!: string;

  @ApiProperty({ type: String })
  name!: string;

  @ApiProperty({ type: String })
  path!: string;

  @ApiProperty({ type: 'integer' })
  project_id!: number;

  @ApiProperty({ type: String })
  owner_name!: string;

  @ApiProperty({ type: String })
  owner_email!: string;
}
