import { ApiProperty } from '@nestjs/swagger';
import { ResponseEntity } from '../openapi/response-types';

@ResponseEntity('Milestone')
export class MilestoneResponse {
  @ApiProperty({ type: 'integer' })
  id!: number;

  @ApiProperty({ type: 'integer' })
  iid!: number;

  @ApiProperty({ type: 'integer' })
  project_id!: number;

  @ApiProperty({ type: String })
  title!: string;

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
