import { Runner } from './runner.entity';
import { RunnerProjectRow } from './runners.repository';
import { RunnerDetailResponse, RunnerResponse } from './runners.responses';

/** GitLab 8.8's `Runner` entity. */
export function presentRunner(r: Pick<Runner, 'id' | 'description' | 'active' | 'isShared' | 'name'>): RunnerResponse {
  return { id: r.id, description: r.description, active: r.active, is_shared: r.isShared, name: r.name };
}

export interface RunnerDetailView {
  runner: Runner;
  token: string | null;
  projects: RunnerProjectRow[];
}

/** `RunnerDetails`: the summary plus the runner's self-description, tags, token (when shown) and projects. */
export function presentRunnerDetail(v: RunnerDetailView): RunnerDetailResponse {
  const r = v.runner;
  return {
    ...presentRunner(r),
    tag_list: r.tagList,
    run_untagged: r.runUntagged,
    version: r.version,
    revision: r.revision,
    platform: r.platform,
    architecture: r.architecture,
    contacted_at: r.contactedAt ? new Date(r.contactedAt).toISOString() : null,
    ...(v.token !== null ? { token: v.token } : {}),
    projects: v.projects.map((p) => ({
      id: p.id,
      name: p.name,
      name_with_namespace: `${p.namespace_name} / ${p.name}`,
      path: p.path,
      path_with_namespace: `${p.namespace_path}/${p.path}`,
    })),
  };
}
