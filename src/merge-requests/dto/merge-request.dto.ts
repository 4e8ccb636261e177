import { Bool, Int, IntList, List, Raw, Str } from '../../common/dto/fields';

/** `GET /projects/:id/merge_requests`. */
export class ListMergeRequestsDto {
  @IntList() iid?: number[];
  @Str() state?: string;
  @Str({ enum: ['created_at', 'updated_at'] }) order_by?: string;
  @Str() sort?: string;
  @Raw() page?: unknown;
  @Raw() per_page?: unknown;
}

/** `POST /projects/:id/merge_requests`. */
export class CreateMergeRequestDto {
  @Str({ required: true }) source_branch!: string;
  @Str({ required: true }) target_branch!: string;
  @Str({ required: true }) title!: string;
  @Int({ min: 0, max: 2147483647 }) assignee_id?: number;
  @Str() description?: string;
  @Int({ min: 1, max: 2147483647 }) target_project_id?: number;
  @List() labels?: string[];
  @Int({ min: 0, max: 2147483647 }) milestone_id?: number;
}

/** `PUT /projects/:id/merge_requests/:merge_request_id`. `source_branch` is refused (400). */
export class UpdateMergeRequestDto {
  @Str() source_branch?: string;
  @Str() target_branch?: string;
  @Str() title?: string;
  @Str() description?: string;
  @Int({ min: 0, max: 2147483647 }) assignee_id?: number;
  @Int({ min: 0, max: 2147483647 }) milestone_id?: number;
  @List() labels?: string[];
  @Str({ enum: ['close', 'reopen', 'merge'] }) state_event?: string;
  // the merge parameters, for state_event=merge (spec-decisions 7)
  @Str() merge_commit_message?: string;
  @Bool() should_remove_source_branch?: boolean;
  @Bool() merge_when_build_succeeds?: boolean;
  @Bool() merged_when_build_succeeds?: boolean;
}

/** `PUT .../merge`: both spellings of merge-when-build-succeeds (spec-decisions 5). */
export class MergeDto {
  @Str() merge_commit_message?: string;
  @Bool() should_remove_source_branch?: boolean;
  @Bool() merge_when_build_succeeds?: boolean;
  @Bool() merged_when_build_succeeds?: boolean;
}

export class PageDto {
  @Raw() page?: unknown;
  @Raw() per_page?: unknown;
}
