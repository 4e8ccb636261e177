import { Readiness } from './health.service';

export function presentLiveness() {
  return { status: 'ok' };
}

export function presentReadiness(checks: Readiness) {
  return { status: 'ok', checks };
}

export function presentVersion(v: { version: string; revision: string }) {
  return { version: v.version, revision: v.revision };
}
