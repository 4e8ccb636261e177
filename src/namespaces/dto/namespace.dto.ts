import { Str } from '../../common/dto/fields';
import { PaginationDto } from '../../common/pagination/pagination.dto';

export class ListNamespacesDto extends PaginationDto {
  /** Matches name or path, case-insensitively, anywhere. */
  @Str({ allowNul: true }) search?: string;
}
