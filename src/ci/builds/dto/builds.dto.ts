import { Bool, Raw } from '../../../common/dto/fields';
import { PaginationDto } from '../../../common/pagination/pagination.dto';

/** `scope`: one status or several (`scope[]=`); checked by the service (GitLab's own 400 message). */
export class ListBuildsDto extends PaginationDto {
  @Raw() scope?: unknown;
}

/** `GET .../trace`: `follow=true` streams it live (as `Accept: text/event-stream` does). */
export class TraceDto {
  @Bool() follow?: boolean;
}
