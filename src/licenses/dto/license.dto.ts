import { Bool, Str } from '../../common/dto/fields';
import { PaginationDto } from '../../common/pagination/pagination.dto';

export class ListLicensesDto extends PaginationDto {
  /** Only the featured ("popular") templates. */
  @Bool() popular?: boolean;
}

export class ShowLicenseDto {
  /** Fills `[project]` and the GPL's "one line to give the program's name…". */
  @Str() project?: string;
  /** Fills the copyright holder; defaults to the signed-in caller's name. */
  @Str() fullname?: string;
}
