import { DateOnly, IntList, Str } from '../../common/dto/fields';
import { PaginationDto } from '../../common/pagination/pagination.dto';

export class ListMilestonesDto extends PaginationDto {
  /** One or several iids. */
  @IntList() iid?: number[];
  /** `active` or `closed`; anything else lists all (GitLab ignores unknown states). */
  @Str() state?: string;
}

export class CreateMilestoneDto {
  @Str({ required: true }) title!: string;
  @Str() description?: string;
  @DateOnly({ clearable: true }) due_date?: string | null;
}

export class UpdateMilestoneDto {
  @Str() title?: string;
  @Str() description?: string;
  /** `null` or blank clears it. */
  @DateOnly({ clearable: true }) due_date?: string | null;
  @Str() state_event?: string;
}
