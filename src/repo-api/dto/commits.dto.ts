import { Bool, DateTime, Int, Str } from '../../common/dto/fields';
import { PaginationDto } from '../../common/pagination/pagination.dto';

const timestamp = (name: string) => `"${name}" must be a timestamp in ISO 8601 format: YYYY-MM-DDTHH:MM:SSZ`;

export class ListCommitsDto extends PaginationDto {
  /** Default: the default branch. */
  @Str({ trim: true }) ref_name?: string;
  /** Inclusive, to the second; any year 0001–9999. */
  @DateTime({ invalidMessage: timestamp('since') }) since?: Date;
  @DateTime({ invalidMessage: timestamp('until') }) until?: Date;
}

export class CreateCommitCommentDto {
  @Str({ required: true }) note!: string;
  @Str() path?: string;
  @Int() line?: number;
  /** `new` or `old`; anything else makes a general comment. */
  @Str() line_type?: string;
}

export class ListCommitStatusesDto extends PaginationDto {
  @Str() ref?: string;
  @Str() ref_name?: string;
  @Str() stage?: string;
  @Str() name?: string;
  /** Every status, not only the latest per name. */
  @Bool() all?: boolean;
}

export class CreateCommitStatusDto {
  /** pending, running, success, failed or canceled. */
  @Str({ required: true, trim: true }) state!: string;
  @Str({ trim: true, maxLength: 255 }) ref?: string;
  @Str({ maxLength: 255 }) name?: string;
  /** The name's older spelling. */
  @Str({ maxLength: 255 }) context?: string;
  @Str() target_url?: string;
  @Str() description?: string;
}
