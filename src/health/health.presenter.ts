import { Readiness } from './health.service';
import { VersionResponse } from './version.responses';

export function presentLiveness() {
  return { status: 'ok' };
}

export function presentReadiness(checks: Readiness) {
  return { status: 'ok', checks };
}

export function presentVersion(v: { version: string; revision: string }): VersionResponse {
  return { version: v.version, revision: v.revision };
}
