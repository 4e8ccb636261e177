import { ApiProperty } from '@nestjs/swagger';
import { ProjectResponse } from '../projects/projects.responses';
import { ResponseEntity } from '../openapi/response-types';

@ResponseEntity('Group')
export class GroupResponse {
  @ApiProperty({ type: 'integer' })
  id!: number;

  @ApiProperty({ type: String })
  name!: string;

  @ApiProperty({ type: String })
  path!: string;

  @ApiProperty({ type: String, nullable: true })
  description!: string | null;

  @ApiProperty({ type: 'integer' })
  visibility_level!: number;

  @ApiProperty({ type: String, nullable: true })
  avatar_url!: string | null;

  @ApiProperty({ type: String })
  web_url!: string;
}

@ResponseEntity('GroupDetail')
export class GroupDetailResponse extends GroupResponse {
  @ApiProperty({ type: () => [ProjectResponse] })
  projects!: ProjectResponse[];
}
