import { ApiProperty } from '@nestjs/swagger';
import { ResponseEntity } from '../openapi/response-types';

@ResponseEntity('Label')
export class LabelResponse {
  @ApiProperty({ type: 'integer' })
  id!: number;

  @ApiProperty({ type: String })
  name!: string;

  @ApiProperty({ type: String, description: '#RRGGBB' })
  color!: string;

  @ApiProperty({ type: String, nullable: true })
  description!: string | null;

  @ApiProperty({ type: 'integer' })
  open_issues_count!: number;

  @ApiProperty({ type: 'integer' })
  closed_issues_count!: number;

  @ApiProperty({ type: 'integer' })
  open_merge_requests_count!: number;

  @ApiProperty({ type: Boolean })
  subscribed!: boolean;
}

@ResponseEntity('LabelRecord', 'The deleted label record (DELETE answer).')
export class LabelRecordResponse {
  @ApiProperty({ type: 'integer' })
  id!: number;

  @ApiProperty({ type: String })
  title!: string;

  @ApiProperty({ type: String })
  color!: string;

  @ApiProperty({ type: 'integer' })
  project_id!: number;

  @ApiProperty({ type: String, format: 'date-time' })
  created_at!: Date | string;

  @ApiProperty({ type: String, format: 'date-time' })
  updated_at!: Date | string;

  @ApiProperty({ type: Boolean })
  template!: boolean;

  @ApiProperty({ type: String, nullable: true })
  description!: string | null;
}
