import { Bool, Id, IntList, List, Str } from '../../common/dto/fields';
import { PaginationDto } from '../../common/pagination/pagination.dto';

/** `GET /projects/:id/merge_requests`. `state`: opened (reopened included), closed, merged; anything else lists all. */
export class ListMergeRequestsDto extends PaginationDto {
  @IntList() iid?: number[];
  @Str() state?: string;
  @Str({ enum: ['created_at', 'updated_at'] }) order_by?: string;
  /** `asc` or `desc` (any case). */
  @Str() sort?: string;
}

/** `POST /projects/:id/merge_requests`. */
export class CreateMergeRequestDto {
  @Str({ required: true }) source_branch!: string;
  @Str({ required: true }) target_branch!: string;
  @Str({ required: true }) title!: string;
  @Id({ clearable: true, zeroIsNull: true }) assignee_id?: number | null;
  @Str() description?: string;
  @Id() target_project_id?: number;
  @List() labels?: string[];
  @Id({ clearable: true, zeroIsNull: true }) milestone_id?: number | null;
}

/** `PUT /projects/:id/merge_requests/:merge_request_id`. `source_branch` is refused (400). */
export class UpdateMergeRequestDto {
  @Str() source_branch?: string;
  @Str() target_branch?: string;
  @Str() title?: string;
  @Str() description?: string;
  /** `0`, blank or null unassigns. */
  @Id({ clearable: true, zeroIsNull: true }) assignee_id?: number | null;
  @Id({ clearable: true, zeroIsNull: true }) milestone_id?: number | null;
  @List() labels?: string[];
  @Str({ enum: ['close', 'reopen', 'merge'] }) state_event?: string;
  // the merge parameters, for state_event=merge (../shared/docs/spec-decisions.md #7)
  @Str() merge_commit_message?: string;
  @Bool() should_remove_source_branch?: boolean;
  @Bool() merge_when_build_succeeds?: boolean;
  @Bool() merged_when_build_succeeds?: boolean;
}

/** `PUT .../merge`: both spellings of merge-when-build-succeeds (../shared/docs/spec-decisions.md #5). */
export class MergeDto {
  @Str() merge_commit_message?: string;
  @Bool() should_remove_source_branch?: boolean;
  @Bool() merge_when_build_succeeds?: boolean;
  @Bool() merged_when_build_succeeds?: boolean;
  /** The source head the caller reviewed: 409 unless it is still the head, and only it is merged. */
  @Str() sha?: string;
}
