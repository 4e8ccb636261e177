import { Bool, Id, List, Str } from '../../../common/dto/fields';
import { PaginationDto } from '../../../common/pagination/pagination.dto';

/** `GET /runners[/all]`: `scope` is checked by the service (GitLab's own 400 message). */
export class ListRunnersDto extends PaginationDto {
  @Str() scope?: string;
}

/** `PUT /runners/:id`: `tag_list` is the full new set. */
export class UpdateRunnerDto {
  @Str({ maxLength: 255 }) description?: string;
  @Bool() active?: boolean;
  @List() tag_list?: string[];
  @Bool() run_untagged?: boolean;
}

/** `POST /projects/:id/runners`. */
export class EnableRunnerDto {
  @Id({ required: true }) runner_id!: number;
}
