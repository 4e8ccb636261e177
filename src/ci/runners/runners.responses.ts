import { ApiProperty, IntersectionType } from '@nestjs/swagger';
import { ProjectSummaryResponse } from '../../projects/projects.responses';
import { ResponseEntity } from '../../openapi/response-types';

@ResponseEntity('Runner')
export class RunnerResponse {
  @ApiProperty({ type: 'integer' })
  id!: number;

  @ApiProperty({ type: String, nullable: true })
  description!: string | null;

  @ApiProperty({ type: Boolean })
  active!: boolean;

  @ApiProperty({ type: Boolean })
  is_shared!: boolean;

  @ApiProperty({ type: String, nullable: true })
  name!: string | null;
}

/** What a runner's agent reports of itself (RunnerDetail, RunnerRecord); not a schema of its own. */
export class RunnerAgentFields {
  @ApiProperty({ type: String, nullable: true })
  version!: string | null;

  @ApiProperty({ type: String, nullable: true })
  revision!: string | null;

  @ApiProperty({ type: String, nullable: true })
  platform!: string | null;

  @ApiProperty({ type: String, nullable: true })
  architecture!: string | null;
}

/** A runner's detail up to its agent's report; not a schema of its own. */
class RunnerDetailHead extends RunnerResponse {
  @ApiProperty({ type: [String] })
  tag_list!: string[];

  @ApiProperty({ type: Boolean })
  run_untagged!: boolean;
}

@ResponseEntity('RunnerDetail')
export class RunnerDetailResponse extends IntersectionType(RunnerDetailHead, RunnerAgentFields) {
  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  contacted_at!: Date | string | null;

  @ApiProperty({ type: String, description: 'only for administrators and specific runners', required: false })
  token?: string;

  @ApiProperty({ type: () => [ProjectSummaryResponse] })
  projects!: ProjectSummaryResponse[];
}
