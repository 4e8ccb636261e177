import { ApiProperty } from '@nestjs/swagger';
import { ResponseEntity } from '../openapi/response-types';

@ResponseEntity('Namespace')
export class NamespaceResponse {
  @ApiProperty({ type: 'integer' })
  id!: number;

  @ApiProperty({ type: String })
  path!: string;

  @ApiProperty({ type: String, enum: ['user', 'group'] })
  kind!: string;
}

@ResponseEntity('NamespaceRecord')
export class NamespaceRecordResponse {
  @ApiProperty({ type: 'integer' })
  id!: number;

  @ApiProperty({ type: String })
  name!: string;

  @ApiProperty({ type: String })
  path!: string;

  @ApiProperty({ type: String, enum: ['user', 'group'] })
  kind!: string;

  @ApiProperty({ type: 'integer', nullable: true })
  owner_id!: number | null;

  @ApiProperty({ type: String, format: 'date-time' })
  created_at!: Date | string;

  @ApiProperty({ type: String, format: 'date-time' })
  updated_at!: Date | string;

  @ApiProperty({ type: String, enum: ['Group'], nullable: true })
  type!: string | null;

  @ApiProperty({ type: String, nullable: true })
  description!: string | null;

  @ApiProperty({ type: String, nullable: true })
  avatar!: string | null;

  @ApiProperty({ type: Boolean })
  share_with_group_lock!: boolean;

  @ApiProperty({ type: 'integer' })
  visibility_level!: number;
}
