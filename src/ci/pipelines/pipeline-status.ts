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

/**
 * GitLab 8.8's combined status (`Statuseable.status`), of the statuses given (callers pass the
 * latest per name): allow_failure builds that failed or were canceled count as ignored.
 */
export function combinedStatus(statuses: Pick<StatusOf, 'status' | 'allowFailure'>[]): BuildStatus | null {
  const n = statuses.length;
  if (n === 0) return null;
  const count = (s: string) => statuses.filter((x) => x.status === s).length;
  const ignored = statuses.filter((x) => x.allowFailure && (x.status === 'failed' || x.status === 'canceled')).length;
  const success = count('success');
  const pending = count('pending');
  const running = count('running');
  const canceled = statuses.filter((x) => x.status === 'canceled' && !x.allowFailure).length;
  const skipped = count('skipped');
  if (n === success + ignored) return 'success';
  if (n === pending) return 'pending';
  if (n === canceled + success + ignored) return 'canceled';
  if (n === skipped) return 'skipped';
  if (running + pending > 0) return 'running';
  return 'failed';
}

/** Which jobs of a later stage run after the stages before it ended with `prior`. */
export function whenAllows(when: string, prior: BuildStatus | null): boolean {
  if (prior === 'success') return when === 'on_success' || when === 'always';
  if (prior === 'failed') return when === 'on_failure' || when === 'always';
  return false;
}
