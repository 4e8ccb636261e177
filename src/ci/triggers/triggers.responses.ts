import { ApiProperty, IntersectionType } from '@nestjs/swagger';
import { DeletedRowFields } from '../../openapi/response-fields';
import { ResponseEntity } from '../../openapi/response-types';

/** A trigger up to its timestamps; not a schema of its own. */
class TriggerHead {
  @ApiProperty({ type: String })
  token!: string;
}

@ResponseEntity('Trigger')
export class TriggerResponse extends IntersectionType(TriggerHead, DeletedRowFields) {
  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  last_used!: Date | string | null;
}

@ResponseEntity('TriggerRequest')
export class TriggerRequestResponse {
  @ApiProperty({ type: 'integer' })
  id!: number;

  @ApiProperty({ type: 'object', additionalProperties: true, nullable: true })
  variables!: Record<string, unknown> | null;
}
