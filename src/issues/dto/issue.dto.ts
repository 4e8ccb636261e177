import { Bool, DateTime, Id, IntList, List, Str } from '../../common/dto/fields';
import { PaginationDto } from '../../common/pagination/pagination.dto';

/** `GET /issues` and `GET .../milestones/:milestone_id/issues`. */
export class ListIssuesDto extends PaginationDto {
  /** `opened` or `closed`; anything else lists all. */
  @Str() state?: string;
  /** Issues having at least one of these labels (any case). */
  @List() labels?: string[];
  /** `created_at` (default) or `updated_at`. */
  @Str({ enum: ['created_at', 'updated_at'] }) order_by?: string;
  /** `asc` or `desc` (default), any case: checked by issue-rules. */
  @Str() sort?: string;
}

/** `GET /projects/:id/issues`: also by milestone title and iid. */
export class ListProjectIssuesDto extends ListIssuesDto {
  @Str() milestone?: string;
  @IntList() iid?: number[];
}

export class CreateIssueDto {
  @Str({ required: true }) title!: string;
  @Str() description?: string;
  @Bool() confidential?: boolean;
  /** Honoured for owners and administrators only. */
  @DateTime() created_at?: Date;
  @List() labels?: string[];
  /** Blank, 0 or null: nobody (set by those with admin_issue; dropped for others). */
  @Id({ clearable: true, zeroIsNull: true }) assignee_id?: number | null;
  @Id({ clearable: true, zeroIsNull: true }) milestone_id?: number | null;
}

export class UpdateIssueDto {
  @Str() title?: string;
  @Str() description?: string;
  @Bool() confidential?: boolean;
  @Str({ enum: ['close', 'reopen'] }) state_event?: 'close' | 'reopen';
  /** Honoured for owners and administrators only. */
  @DateTime() updated_at?: Date;
  @List() labels?: string[];
  @Id({ clearable: true, zeroIsNull: true }) assignee_id?: number | null;
  @Id({ clearable: true, zeroIsNull: true }) milestone_id?: number | null;
}

export class MoveIssueDto {
  @Id({ required: true }) to_project_id!: number;
}
