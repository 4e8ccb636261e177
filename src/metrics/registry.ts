import type { Request } from 'express';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * The process's Prometheus metrics (one registry per process: every app instance in it adds to the
 * same series). Areas record through the small functions below or register a gauge source, so
 * nothing but this file knows prom-client.
 */
export const registry = new Registry();

let defaults = false;
/**
 * The process's own figures (CPU, memory, event-loop lag, GC) start with the first scrape: their
 * observers (GC above all) cost every request something, which an unscraped server should not pay.
 */
export function ensureDefaultMetrics(): void {
  if (defaults) return;
  defaults = true;
  collectDefaultMetrics({ register: registry, prefix: 'gitlab_v3_' });
}

const httpDuration = new Histogram({
  name: 'http_request_duration_seconds',
  help: 'HTTP requests by method, route template and status',
  labelNames: ['method', 'route', 'status'],
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  registers: [registry],
});

const gitSpawned = new Counter({
  name: 'git_processes_spawned_total',
  help: 'git processes started, by command',
  labelNames: ['command'],
  registers: [registry],
});
const gitRunning = new Gauge({ name: 'git_processes_running', help: 'git processes running now', registers: [registry] });

/**
 * Gauge sources (DB pools, queue depth, build counts) registered by running app instances. A source
 * answers `{ label: value }` for a gauge with one label, or `{ "a|b": value }` (label values joined
 * by `|`) for one with several.
 */
type Source = () => Promise<Record<string, number>> | Record<string, number>;
interface SourceEntry {
  read: Source;
  /** Database-wide figures (the same whichever instance reads them): not summed over the instances of a process. */
  shared: boolean;
}
const sources = new Map<string, Set<SourceEntry>>();

function sourceGauge(name: string, help: string, labelNames: string[] = []) {
  return new Gauge({
    name,
    help,
    labelNames,
    registers: [registry],
    async collect() {
      this.reset();
      const shared = new Map<string, number>();
      for (const src of sources.get(name) ?? []) {
        try {
          const values = await src.read();
          for (const [key, v] of Object.entries(values)) {
            if (src.shared) {
              shared.set(key, v);
              continue;
            }
            if (labelNames.length) this.inc(labelsOf(labelNames, key), v);
            else this.inc(v);
          }
        } catch {
          // a source that cannot answer (database down) leaves its series out
        }
      }
      for (const [key, v] of shared) {
        if (labelNames.length) this.set(labelsOf(labelNames, key), v);
        else this.set(v);
      }
    },
  });
}

function labelsOf(names: string[], key: string): Record<string, string> {
  const values = names.length > 1 ? key.split('|') : [key];
  return Object.fromEntries(names.map((n, i) => [n, values[i] ?? '']));
}

sourceGauge('db_pool_connections', 'database pool connections by state (total, idle, waiting)', ['state']);
sourceGauge('queue_jobs', 'background jobs on the durable queue by queue and state (created, retry, active, completed, cancelled, failed)', ['queue', 'state']);
sourceGauge('ci_builds', 'CI builds by status (pending, running)', ['status']);

/** Registers a gauge source; returns the function that removes it (call it on app close). */
export function addGaugeSource(name: 'db_pool_connections' | 'queue_jobs' | 'ci_builds', read: Source, opts: { shared?: boolean } = {}): () => void {
  let set = sources.get(name);
  if (!set) sources.set(name, (set = new Set()));
  const entry: SourceEntry = { read, shared: opts.shared ?? false };
  set.add(entry);
  return () => set.delete(entry);
}

/** The route template Express matched (`/api/v3/projects/:id`), never the raw path (unbounded labels). */
export function routeTemplate(req: Request): string {
  const route = (req as { route?: { path?: unknown } }).route;
  if (route && typeof route.path === 'string') return route.path;
  if (req.path.startsWith('/api/')) return 'unmatched';
  return req.path.includes('.git/') || req.path.endsWith('.git') ? 'git-http' : 'other';
}

export const httpMetrics = {
  observe(req: Request, status: number, startedAt: bigint): void {
    const seconds = Number(process.hrtime.bigint() - startedAt) / 1e9;
    httpDuration.observe({ method: req.method, route: routeTemplate(req), status: String(status) }, seconds);
  },
};

/** Called by src/git around every git process. */
export function gitProcessStarted(command: string): () => void {
  gitSpawned.inc({ command });
  gitRunning.inc();
  let done = false;
  return () => {
    if (done) return;
    done = true;
    gitRunning.dec();
  };
}

const transfersRunning = new Gauge({
  name: 'git_transfers_running',
  help: 'git transfers (clone, fetch, push, archive over HTTP or SSH) holding a slot of the transfer limit now',
  registers: [registry],
});
const transfersQueued = new Gauge({ name: 'git_transfers_queued', help: 'git transfers waiting for a slot of the transfer limit now', registers: [registry] });
const transfersRejected = new Counter({
  name: 'git_transfers_rejected_total',
  help: 'git transfers refused by the transfer limit, by reason (queue_full, client_share, timeout)',
  labelNames: ['reason'],
  registers: [registry],
});

/** Called by src/git when a transfer takes a slot; the returned function records that it gave it back. */
export function gitTransferStarted(): () => void {
  return gauged(transfersRunning);
}

/** Called by src/git when a transfer starts waiting for a slot; the returned function records that it stopped. */
export function gitTransferQueued(): () => void {
  return gauged(transfersQueued);
}

/** Called by src/git when a transfer is refused (queue full, its client's share of the slots taken, or its wait timed out). */
export function gitTransferRejected(reason: 'queue_full' | 'client_share' | 'timeout'): void {
  transfersRejected.inc({ reason });
}

function gauged(gauge: Gauge): () => void {
  gauge.inc();
  let done = false;
  return () => {
    if (done) return;
    done = true;
    gauge.dec();
  };
}

const queueFailures = new Counter({
  name: 'queue_job_failures_total',
  help: 'background job attempts that failed (thrown or timed out in the handler), by queue',
  labelNames: ['queue'],
  registers: [registry],
});

/** Called by src/queue when a job's attempt fails. */
export function queueJobFailed(queue: string): void {
  queueFailures.inc({ queue });
}

const eventHandlerFailures = new Counter({
  name: 'domain_event_handler_failures_total',
  help: 'domain event handler runs that threw (or durable jobs that could not be enqueued), by event and handler',
  labelNames: ['event', 'handler'],
  registers: [registry],
});

/** Called by src/events when a domain event handler fails. */
export function domainEventHandlerFailed(event: string, handler: string): void {
  eventHandlerFailures.inc({ event, handler });
}

const sshSessions = new Counter({
  name: 'ssh_sessions_total',
  help: 'SSH connections by git command (or none) and result',
  labelNames: ['command', 'result'],
  registers: [registry],
});
const sshActive = new Gauge({ name: 'ssh_sessions_active', help: 'SSH connections open now', registers: [registry] });

/** Called by src/ssh when a connection opens; the returned function records how it ended. */
export function sshSessionStarted(): (command: string, result: string) => void {
  sshActive.inc();
  let done = false;
  return (command, result) => {
    if (done) return;
    done = true;
    sshActive.dec();
    sshSessions.inc({ command, result });
  };
}

const ldapUnavailableTotal = new Counter({
  name: 'ldap_unavailable_total',
  help: 'LDAP servers that did not answer (network, TLS, timeout, service bind), by provider and operation (signin, sync); nobody is blocked for it',
  labelNames: ['provider', 'operation'],
  registers: [registry],
});
const ldapSyncUsers = new Counter({
  name: 'ldap_sync_users_total',
  help: 'LDAP users checked by synchronisation, by provider and outcome (present, blocked, unblocked, unknown)',
  labelNames: ['provider', 'result'],
  registers: [registry],
});

/** Called by src/ldap when a directory does not answer. */
export function ldapUnavailable(provider: string, operation: 'signin' | 'sync'): void {
  ldapUnavailableTotal.inc({ provider, operation });
}

/** Called by src/ldap's synchronisation with the outcome of each page of users. */
export function ldapSynced(provider: string, result: 'present' | 'blocked' | 'unblocked' | 'unknown', n: number): void {
  if (n > 0) ldapSyncUsers.inc({ provider, result }, n);
}
