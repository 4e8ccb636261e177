import { Raw, Str } from '../../common/dto/fields';
import { PaginationDto } from '../../common/pagination/pagination.dto';

export class ListSnippetsDto extends PaginationDto {}

/**
 * `visibility_level` is read by snippet-rules.ts: GitLab answers a bad level with a field map
 * (`is not included in the list`), and an empty one takes the instance default, so it is kept raw
 * here (`null` or blank → `null`, absent → undefined).
 */
export class CreateSnippetDto {
  @Str({ required: true }) title!: string;
  @Str({ required: true, trim: true }) file_name!: string;
  @Str({ required: true }) code!: string;
  @Raw({ clearable: true, description: 'required: 0, 10 or 20 (1 and 2 read as 10 and 20); empty takes default_snippet_visibility' })
  visibility_level?: unknown;
}

export class UpdateSnippetDto {
  @Str() title?: string;
  @Str({ trim: true }) file_name?: string;
  @Str() code?: string;
  @Raw({ clearable: true, description: '0, 10 or 20 (1 and 2 read as 10 and 20); empty leaves it' })
  visibility_level?: unknown;
}
