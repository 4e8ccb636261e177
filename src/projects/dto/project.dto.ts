import { Bool, FieldMapErrors, Int, MAX_SEARCH_LENGTH, Str } from '../../common/dto/fields';
import { PaginationDto } from '../../common/pagination/pagination.dto';

export const PROJECT_ORDER_BY = ['id', 'name', 'path', 'created_at', 'updated_at', 'last_activity_at'] as const;
export const PROJECT_VISIBILITY = ['private', 'internal', 'public'] as const;

/** `GET /projects`, `/projects/owned`, `/projects/starred`, `/projects/all`, `/projects/search/:query`. */
export class ListProjectsDto extends PaginationDto {
  @Bool() archived?: boolean;
  @Str({ enum: PROJECT_VISIBILITY }) visibility?: (typeof PROJECT_VISIBILITY)[number];
  @Str({ max: MAX_SEARCH_LENGTH }) search?: string;
  @Str({ enum: PROJECT_ORDER_BY }) order_by?: (typeof PROJECT_ORDER_BY)[number];
  /** `asc` or `desc`, any case (checked by the service). */
  @Str() sort?: string;
}

/** The settings both create and update take. Badly typed values answer a field map, as GitLab does. */
@FieldMapErrors()
export class ProjectSettingsDto {
  @Str() name?: string;
  @Str() path?: string;
  @Str() description?: string;
  @Bool() issues_enabled?: boolean;
  @Bool() merge_requests_enabled?: boolean;
  @Bool() wiki_enabled?: boolean;
  @Bool() builds_enabled?: boolean;
  @Bool() snippets_enabled?: boolean;
  @Bool() container_registry_enabled?: boolean;
  /** Git LFS for this project (8.17's v3 create/edit parameter). */
  @Bool() lfs_enabled?: boolean;
  @Bool() shared_runners_enabled?: boolean;
  @Bool() public_builds?: boolean;
  /** 0, 10, 20 (1 and 2 read as 10 and 20); wins over `public`. */
  @Int() visibility_level?: number;
  @Bool() public?: boolean;
}

/** `POST /projects` and `POST /projects/user/:user_id`: `name` or `path` required. */
@FieldMapErrors()
export class CreateProjectDto extends ProjectSettingsDto {
  @Int() namespace_id?: number;
  @Str() import_url?: string;
}

/** `PUT /projects/:id`. */
@FieldMapErrors()
export class UpdateProjectDto extends ProjectSettingsDto {
  @Str() default_branch?: string;
}
