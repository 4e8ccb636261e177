import type { BuildStatus } from '../builds/build.entity';

export interface StatusOf {
  name: string;
  status: string;
  allowFailure: boolean;
  id: number;
}

/** The latest status of each name (a retried build replaces the older one). */
export function latestByName<T extends StatusOf>(statuses: T[]): T[] {
  const latest = new Map<string, T>();
  for (const s of statuses) {
    const cur = latest.get(s.name);
    if (!cur || cur.id < s.id) latest.set(s.name, s);
  }
  return [...latest.values()];
}

/** GitLab 8.17's HasStatus::COMPLETED_STATUSES: a stage so ended lets the next one be processed. */
export const COMPLETED: string[] = ['success', 'failed', 'canceled', 'skipped'];

/**
 * GitLab 8.17's combined status (`HasStatus.status_sql` over `exclude_ignored`), of the statuses given
 * (callers pass the latest per name): allow_failure builds that failed or were canceled are left out.
 * A `manual` action counts as `skipped` (8.17 saved an action it reached as skipped), so actions never
 * hold a pipeline `running`. One difference, kept from 8.8: statuses that are all ignored failures
 * combine to `success` (8.17's SQL answers `skipped` for the empty set that is left).
 */
export function combinedStatus(statuses: Pick<StatusOf, 'status' | 'allowFailure'>[]): BuildStatus | null {
  if (statuses.length === 0) return null;
  const kept = statuses
    .filter((x) => !(x.allowFailure && (x.status === 'failed' || x.status === 'canceled')))
    .map((x) => (x.status === 'manual' ? 'skipped' : x.status));
  const n = kept.length;
  if (n === 0) return 'success';
  const count = (s: string) => kept.filter((x) => x === s).length;
  const [created, success, pending, running, skipped, canceled] = ['created', 'success', 'pending', 'running', 'skipped', 'canceled'].map(count);
  if (n === skipped) return 'skipped';
  if (n === success) return 'success';
  if (n === created) return 'created';
  if (n === success + skipped) return 'success';
  if (n === success + skipped + canceled) return 'canceled';
  if (n === created + skipped + pending) return 'pending';
  if (running + pending + created > 0) return 'running';
  return 'failed';
}

/** GitLab 8.17's ProcessPipelineService#valid_statuses_for_when: after which status of the stages before a job runs. */
export function whenAllows(when: string, prior: string | null): boolean {
  if (when === 'on_success') return prior === 'success' || prior === 'skipped';
  if (when === 'on_failure') return prior === 'failed';
  if (when === 'always') return prior === 'success' || prior === 'failed' || prior === 'skipped';
  return false;
}

export interface ProcessedBuild extends StatusOf {
  stageIdx: number;
  when: string;
}

/**
 * GitLab 8.17's ProcessPipelineService over a pipeline's builds (every try): stage by stage, the
 * `created` builds of a stage whose earlier stages have completed become `pending` when their `when`
 * allows the status of those stages, a manual action reached (those stages succeeded or were
 * skipped) becomes `manual` (decision 36), and any other `skipped`. A stage whose earlier stages are
 * still running is left `created`. Returns the new status of each build that changes (pure; the
 * caller writes them under the pipeline's lock).
 */
export function processPipeline(builds: ProcessedBuild[]): Map<number, BuildStatus> {
  const current = new Map(builds.map((b) => [b.id, { ...b }]));
  const changes = new Map<number, BuildStatus>();
  const stages = [...new Set(builds.filter((b) => b.status === 'created').map((b) => b.stageIdx))].sort((a, b) => a - b);
  for (const idx of stages) {
    const latest = latestByName([...current.values()]);
    const prior = combinedStatus(latest.filter((b) => b.stageIdx < idx)) ?? 'success';
    if (!COMPLETED.includes(prior)) break; // later stages wait for this one too
    for (const b of current.values()) {
      if (b.stageIdx !== idx || b.status !== 'created') continue;
      const to: BuildStatus = whenAllows(b.when, prior) ? 'pending' : b.when === 'manual' && whenAllows('on_success', prior) ? 'manual' : 'skipped';
      b.status = to;
      changes.set(b.id, to);
    }
  }
  return changes;
}
