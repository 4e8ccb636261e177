import { StreamableFile } from '@nestjs/common';
import type { Readable } from 'node:stream';
import type { Commit } from '../../git/objects';
import { commitTitle } from '../../git/objects';
import { PresentContext, presentUser } from '../../users/users.presenter';
import type { User } from '../../users/user.entity';
import type { BuildRow, RunnerSummary } from './builds.repository';
import { RunnerResponse } from '../runners/runners.responses';
import { BuildResponse } from './builds.responses';

export interface BuildView {
  build: BuildRow;
  commit?: Commit;
  user?: User;
  runner?: RunnerSummary;
}

const iso = (d: Date | string | null) => (d ? new Date(d).toISOString() : null);

export function presentRunnerSummary(r: RunnerSummary): RunnerResponse {
  return { id: r.id, description: r.description, active: r.active, is_shared: r.isShared, name: r.name };
}

/** The v3 `Build` entity (../shared/docs/gitlab-compat.md §2.10). */
export function presentBuild(v: BuildView, ctx: PresentContext, opts: { erased?: boolean } = {}): BuildResponse {
  const b = v.build;
  const c = v.commit;
  return {
    id: b.id,
    status: b.status,
    stage: b.stage,
    name: b.name,
    ref: b.ref,
    tag: b.tag,
    coverage: b.coverage,
    created_at: new Date(b.createdAt).toISOString(),
    started_at: iso(b.startedAt),
    finished_at: iso(b.finishedAt),
    user: v.user ? presentUser(v.user, ctx) : null,
    // `artifacts_file` is null without artifacts (spec: "null or object"), on every build response; the
    // erase response carries `download_url: null` in its place (spec, ../shared/docs/spec-decisions.md #3)
    ...(opts.erased ? { download_url: null } : { artifacts_file: b.artifactsFile ? { filename: b.artifactsFile, size: Number(b.artifactsSize ?? 0) } : null }),
    commit: c
      ? {
          id: c.id,
          short_id: c.id.slice(0, 8),
          title: commitTitle(c.message),
          author_name: c.author.name,
          author_email: c.author.email,
          created_at: c.committer.date,
          message: c.message,
        }
      : null,
    runner: v.runner ? presentRunnerSummary(v.runner) : null,
    // 8.17's Entities::Build exposes its pipeline (PipelineBasic)
    pipeline: { id: b.pipelineId, sha: b.sha, ref: b.ref, status: b.pipelineStatus },
  };
}

/**
 * A build's artifacts archive as the download answer (GitLab 8.8: octet-stream, attachment with the
 * stored file name, its size). A read error ends the connection, as a broken download should.
 */
export function presentArtifactsFile(file: { filename: string; size: number; stream: NodeJS.ReadableStream }): StreamableFile {
  return new StreamableFile(file.stream as Readable, {
    type: 'application/octet-stream',
    disposition: `attachment; filename=${file.filename}`,
    length: file.size,
  }).setErrorHandler((_err, res) => (res as unknown as { destroy(): void }).destroy());
}
