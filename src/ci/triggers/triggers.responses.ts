import { ApiProperty } from '@nestjs/swagger';
import { ResponseEntity } from '../../openapi/response-types';

@ResponseEntity('Trigger')
export class TriggerResponse {
  @ApiProperty({ type: String })
  token!: string;

  @ApiProperty({ type: String, format: 'date-time' })
  created_at!: Date | string;

  @ApiProperty({ type: String, format: 'date-time' })
  updated_at!: Date | string;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  deleted_at!: Date | string | null;

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
