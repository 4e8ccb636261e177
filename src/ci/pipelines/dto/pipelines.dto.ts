import { Str } from '../../../common/dto/fields';
import { PaginationDto } from '../../../common/pagination/pagination.dto';

export const PIPELINE_SCOPES = ['running', 'pending', 'finished', 'branches', 'tags'] as const;
/** GitLab's `HasStatus::AVAILABLE_STATUSES` (8.17), and `manual` (decision 36). */
export const PIPELINE_STATUSES = ['created', 'pending', 'running', 'success', 'failed', 'canceled', 'skipped', 'manual'] as const;

/** `GET /projects/:id/pipelines` (GitLab 8.11+; `status`, `ref` and the finished/pending scopes as later 8.x/9.0). */
export class ListPipelinesDto extends PaginationDto {
  @Str({ enum: PIPELINE_SCOPES, description: 'running, pending, finished, or the latest pipeline of each branch / tag' })
  scope?: (typeof PIPELINE_SCOPES)[number];
  @Str({ enum: PIPELINE_STATUSES }) status?: (typeof PIPELINE_STATUSES)[number];
  @Str({ description: 'only pipelines of this branch or tag' }) ref?: string;
}

/** `POST /projects/:id/pipeline` (GitLab 8.14): a pipeline for the head of a branch or tag. */
export class CreatePipelineDto {
  @Str({ required: true, description: 'branch or tag name' }) ref!: string;
}

/** `POST /ci/lint` (GitLab 8.12). A blank content is answered as invalid, not as a missing one. */
export class LintDto {
  @Str({ required: true, blank: true, description: 'the .gitlab-ci.yml content to check' }) content!: string;
}
