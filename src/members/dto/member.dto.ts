import { Int, MAX_SEARCH_LENGTH, Str } from '../../common/dto/fields';
import { PaginationDto } from '../../common/pagination/pagination.dto';

/** `GET .../members`: `query` (or `search`) on username or name. */
export class ListMembersDto extends PaginationDto {
  @Str() query?: string;
  @Str({ max: MAX_SEARCH_LENGTH }) search?: string;
}

/** `POST .../members`. */
export class AddMemberDto {
  @Int({ required: true }) user_id!: number;
  @Int({ required: true }) access_level!: number;
}

/** `PUT .../members/:user_id`. */
export class UpdateMemberDto {
  @Int({ required: true }) access_level!: number;
}
