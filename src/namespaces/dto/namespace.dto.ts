import { MAX_SEARCH_LENGTH, Str } from '../../common/dto/fields';
import { PaginationDto } from '../../common/pagination/pagination.dto';

export class ListNamespacesDto extends PaginationDto {
  /** Matches name or path, case-insensitively, anywhere. */
  @Str({ allowNul: true, max: MAX_SEARCH_LENGTH }) search?: string;
}
