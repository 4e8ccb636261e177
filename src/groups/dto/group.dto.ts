import { FieldMapErrors, Int, MAX_SEARCH_LENGTH, Str } from '../../common/dto/fields';
import { PaginationDto } from '../../common/pagination/pagination.dto';

/** `GET /groups`: `search` on name or path. */
export class ListGroupsDto extends PaginationDto {
  @Str({ max: MAX_SEARCH_LENGTH }) search?: string;
}

/** `GET /groups/:id/projects`. */
export class ListGroupProjectsDto extends PaginationDto {}

/** `POST /groups`: a badly typed `visibility_level` answers a field map, as GitLab does. */
@FieldMapErrors()
export class CreateGroupDto {
  @Str({ required: true }) name!: string;
  @Str({ required: true }) path!: string;
  @Str() description?: string;
  /** 0, 10, 20 (1 and 2 read as 10 and 20); default: the instance's default_group_visibility. */
  @Int() visibility_level?: number;
}
