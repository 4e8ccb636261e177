import { Str } from '../../common/dto/fields';
import { PaginationDto } from '../../common/pagination/pagination.dto';

export class TreeDto extends PaginationDto {
  @Str({ trim: true }) ref_name?: string;
  /** `ref_name`'s other spelling. */
  @Str({ trim: true }) ref?: string;
  /** A folder (default: the root). */
  @Str() path?: string;
}

export class BlobDto {
  @Str({ required: true }) filepath!: string;
}

export class ArchiveDto {
  /** A branch, tag or SHA (default: the default branch). */
  @Str({ trim: true }) sha?: string;
  /** zip, tar, tar.gz, tar.bz2 ... (the route's `archive.<format>` wins). */
  @Str() format?: string;
}

export class CompareDto {
  @Str({ required: true, trim: true }) from!: string;
  @Str({ required: true, trim: true }) to!: string;
}

export class GetFileDto {
  @Str({ required: true }) file_path!: string;
  @Str({ required: true, trim: true }) ref!: string;
}

export class DeleteFileDto {
  @Str({ required: true }) file_path!: string;
  @Str({ required: true, trim: true }) branch_name!: string;
  @Str({ required: true }) commit_message!: string;
}

export class WriteFileDto {
  @Str({ required: true }) file_path!: string;
  @Str({ required: true, trim: true }) branch_name!: string;
  /** May be empty. */
  @Str({ required: true, blank: true }) content!: string;
  /** `text` (default) or `base64`. */
  @Str() encoding?: string;
  @Str({ required: true }) commit_message!: string;
}
