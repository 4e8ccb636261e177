import { Injectable } from '@nestjs/common';
import { UpdateMergeRequestDto } from './dto/merge-request.dto';
import { MergeRequest } from './merge-request.entity';
import { MergeRequestsService } from './merge-requests.service';
import { MergeService } from './merge.service';
import { ProjectRef } from '../common/params/refs';
import type { Caller } from '../common/caller/caller';

/** `PUT .../merge_requests/:id`: the issuable update, and `state_event=merge` as `PUT .../merge`. */
@Injectable()
export class MergeRequestUpdates {
  constructor(
    private readonly requests: MergeRequestsService,
    private readonly merges: MergeService,
  ) {}

  /** The update of the other attributes first (when any), then the merge (../shared/docs/spec-decisions.md #7). */
  async update(user: Caller, ref: ProjectRef, id: number, dto: UpdateMergeRequestDto): Promise<MergeRequest> {
    const { state_event, merge_commit_message, should_remove_source_branch, merge_when_build_succeeds, merged_when_build_succeeds, ...rest } = dto;
    const changes = Object.values(rest).some((v) => v !== undefined) || state_event !== 'merge';
    const updated = changes ? await this.requests.update(user, ref, id, { ...rest, state_event: state_event === 'merge' ? undefined : state_event }) : null;
    if (state_event !== 'merge') return updated as MergeRequest;
    return this.merges.merge(user, ref, id, { merge_commit_message, should_remove_source_branch, merge_when_build_succeeds, merged_when_build_succeeds });
  }
}
