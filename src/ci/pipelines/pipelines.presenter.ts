import { PresentContext, presentUserBasic } from '../../users/users.presenter';
import type { User } from '../../users/user.entity';
import type { Pipeline } from './pipeline.entity';
import { CiLintResponse, PipelineResponse } from './pipelines.responses';

/** A pipeline with what its presenter needs besides the row (loaded in bounded queries by the service). */
export interface PipelineView {
  pipeline: Pipeline;
  user?: User;
  /** The commit's committer date (ISO 8601 with its offset), when the commit is still there. */
  committedAt: string | null;
  coverage: string | null;
}

const iso = (d: Date | string | null) => (d ? new Date(d).toISOString() : null);

/** The v3 `Pipeline` entity of GitLab 8.11–8.14 (lib/api/entities.rb). */
export function presentPipeline(v: PipelineView, ctx: PresentContext): PipelineResponse {
  const p = v.pipeline;
  const started = p.startedAt ? new Date(p.startedAt).getTime() : null;
  const finished = p.finishedAt ? new Date(p.finishedAt).getTime() : null;
  return {
    id: p.id,
    sha: p.sha,
    ref: p.ref,
    status: p.status,
    before_sha: p.beforeSha,
    tag: p.tag,
    yaml_errors: p.yamlErrors,
    user: v.user ? presentUserBasic(v.user, ctx) : null,
    created_at: new Date(p.createdAt).toISOString(),
    updated_at: new Date(p.updatedAt).toISOString(),
    started_at: iso(p.startedAt),
    finished_at: iso(p.finishedAt),
    committed_at: v.committedAt,
    duration: started !== null && finished !== null ? Math.max(0, Math.round((finished - started) / 1000)) : null,
    coverage: v.coverage,
  };
}

/** `POST /ci/lint` (GitLab 8.12): `valid` with no errors, or `invalid` with the file's error. */
export function presentLint(error: string | null): CiLintResponse {
  return error === null ? { status: 'valid', errors: [] } : { status: 'invalid', errors: [error] };
}
