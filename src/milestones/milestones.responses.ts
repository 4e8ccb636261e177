import { ApiProperty } from '@nestjs/swagger';
import { ProjectItemFields } from '../openapi/response-fields';
import { ResponseEntity } from '../openapi/response-types';

@ResponseEntity('Milestone')
export class MilestoneResponse extends ProjectItemFields {
  @ApiProperty({ type: String, description: '"" when none was given' })
  description!: string;

  @ApiProperty({ type: String, enum: ['active', 'closed'] })
  state!: string;

  @ApiProperty({ type: String, format: 'date-time' })
  created_at!: Date | string;

  @ApiProperty({ type: String, format: 'date-time' })
  updated_at!: Date | string;

  @ApiProperty({ type: String, format: 'date', nullable: true })
  due_date!: string | null;
}
