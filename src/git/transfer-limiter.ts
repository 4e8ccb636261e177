import ipaddr from 'ipaddr.js';
import { gitTransferQueued, gitTransferRejected, gitTransferStarted } from '../metrics/registry';

/** The line git shows when a transfer cannot start (HTTP body, SSH stderr): the same words on both transports. */
export const TRANSFERS_BUSY_MESSAGE = 'fatal: the server is busy: too many git transfers, try again later';
/** `Retry-After` (seconds) of a refused smart HTTP transfer: about the time a clone of a common repository takes. */
export const TRANSFERS_RETRY_AFTER_SECONDS = 5;

export interface TransferLimits {
  /** Transfers (git processes serving a clone, fetch, push or archive) running at once. */
  maxRunning: number;
  /** Transfers waiting beyond them; one more is refused at once. */
  maxQueued: number;
  /** How long a transfer may wait for its turn before it is refused. */
  queueTimeoutMs: number;
  /** Transfers of one client (see `transferClient`) running at once; default: half of `maxRunning`, rounded up. */
  maxRunningPerClient?: number;
  /** Transfers of one client waiting at once; default: a quarter of `maxQueued`, rounded up. */
  maxQueuedPerClient?: number;
}

/** The running and waiting shares of one client when the settings do not name them. */
export function defaultClientShares(maxRunning: number, maxQueued: number): { maxRunningPerClient: number; maxQueuedPerClient: number } {
  return { maxRunningPerClient: Math.ceil(maxRunning / 2), maxQueuedPerClient: Math.ceil(maxQueued / 4) };
}

/**
 * Whom a transfer is for, the key of the limiter's fair shares: the signed-in user, a CI build's project
 * (`gitlab-ci-token`), a deploy key (SSH), or else the remote address — an IPv6 address by its /64, the block one host
 * is usually given, so that one host cannot take a share per address.
 */
export function transferClient(who: { userId?: number; buildProjectId?: number; deployKeyId?: number; address?: string }): string {
  if (who.userId !== undefined) return `user:${who.userId}`;
  if (who.buildProjectId !== undefined) return `ci:${who.buildProjectId}`;
  if (who.deployKeyId !== undefined) return `key:${who.deployKeyId}`;
  return `ip:${addressBlock(who.address ?? '')}`;
}

function addressBlock(address: string): string {
  if (!ipaddr.isValid(address)) return address;
  const parsed = ipaddr.process(address); // an IPv4-mapped IPv6 address is its IPv4 address
  if (parsed.kind() === 'ipv4') return parsed.toString();
  return `${(parsed as ipaddr.IPv6).parts
    .slice(0, 4)
    .map((p) => p.toString(16))
    .join(':')}::/64`;
}

/** What git shows when a transfer cannot start because its client already has its share of the slots. */
export const CLIENT_SHARE_MESSAGE = 'fatal: too many git transfers of yours at once (the server shares its slots between users), try again later';

/** A transfer that could not start: the queue was full, its client's share of it was, or its wait timed out. */
export class TransfersBusy extends Error {
  constructor(readonly reason: 'queue_full' | 'client_share' | 'timeout') {
    super(reason === 'client_share' ? CLIENT_SHARE_MESSAGE : TRANSFERS_BUSY_MESSAGE);
  }
}

/** A transfer whose client went away while it waited (no process was started). */
export class TransferAborted extends Error {
  constructor() {
    super('the client went away while its git transfer waited');
  }
}

interface Waiter {
  client?: string;
  grant: () => void;
  fail: (e: Error) => void;
}

interface ClientCount {
  running: number;
  queued: number;
}

/**
 * Caps the git transfer processes of one app instance, as Gitaly's concurrency limiter does for its
 * pack RPCs (`max_per_repo`, `max_queue_size`, `max_queue_wait`): at most `maxRunning` run, at most
 * `maxQueued` wait for a slot, and a waiter that is not served within `queueTimeoutMs` is refused
 * ("resource exhausted"). Under load this keeps `pack-objects` to what the cores can run, so the
 * transfers that run finish at full speed and the rest wait or are told to retry, instead of every
 * process getting a sliver of the CPU and every request (API included) slowing down.
 *
 * The slots are shared between clients (a user, a CI build's project, an anonymous address:
 * `transferClient`): one client runs at most `maxRunningPerClient` transfers and has at most
 * `maxQueuedPerClient` waiting, so that one of them — idle connections of an anonymous address, a
 * script cloning in a loop — cannot take every slot nor fill the queue and leave everyone else a 503.
 * A freed slot goes to the longest waiter whose client is under its running share (arrival order
 * among the others). A transfer without a client counts against the totals only.
 *
 * Both transports (src/git/smart-http.ts, src/git/ssh-transport.ts) take a slot here before they
 * spawn git and give it back when the process ends; a waiter whose client goes away (its signal
 * aborts) leaves the queue.
 */
export class TransferLimiter {
  private running = 0;
  private readonly queue: Waiter[] = [];
  private readonly clients = new Map<string, ClientCount>();
  private readonly runningPerClient: number;
  private readonly queuedPerClient: number;

  constructor(private readonly limits: TransferLimits) {
    const shares = defaultClientShares(limits.maxRunning, limits.maxQueued);
    this.runningPerClient = Math.max(1, limits.maxRunningPerClient ?? shares.maxRunningPerClient);
    this.queuedPerClient = limits.maxQueuedPerClient ?? shares.maxQueuedPerClient;
  }

  /**
   * For requests that take no slot but belong to a transfer (smart HTTP's ref advertisement): throws
   * `TransfersBusy` when the transfer itself would be refused now, so the client hears it at once.
   */
  admit(client?: string): void {
    const refused = this.refusal(client);
    if (!refused) return;
    gitTransferRejected(refused);
    throw new TransfersBusy(refused);
  }

  /**
   * Waits for a slot for `client` (`transferClient`); resolves to the function that gives it back
   * (idempotent). Rejects with `TransfersBusy` (queue full, the client's share of it full, wait timed
   * out) or `TransferAborted` (`signal` aborted while waiting).
   */
  acquire(signal?: AbortSignal, client?: string): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(new TransferAborted());
    if (this.canRun(client)) return Promise.resolve(this.take(client));
    const refused = this.refusal(client);
    if (refused) {
      gitTransferRejected(refused);
      return Promise.reject(new TransfersBusy(refused));
    }
    return new Promise((resolve, reject) => {
      const dequeued = gitTransferQueued();
      const leave = () => {
        const i = this.queue.indexOf(waiter);
        if (i !== -1) {
          this.queue.splice(i, 1);
          this.count(client, 'queued', -1);
        }
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        dequeued();
      };
      const waiter: Waiter = {
        client,
        grant: () => {
          leave();
          resolve(this.take(client));
        },
        fail: (e) => {
          leave();
          reject(e);
        },
      };
      const onAbort = () => waiter.fail(new TransferAborted());
      const timer = setTimeout(() => {
        gitTransferRejected('timeout');
        waiter.fail(new TransfersBusy('timeout'));
      }, this.limits.queueTimeoutMs);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.queue.push(waiter);
      this.count(client, 'queued', 1);
    });
  }

  /**
   * Whether a transfer of `client` may start at once. A free slot is never left while a waiter could
   * take it (`grantWaiters`), so a free slot here means no waiter ahead could run.
   */
  private canRun(client: string | undefined): boolean {
    return this.running < this.limits.maxRunning && this.underRunningShare(client);
  }

  /** Why a transfer of `client` that cannot start at once would be refused rather than queued. */
  private refusal(client: string | undefined): 'queue_full' | 'client_share' | undefined {
    if (this.canRun(client)) return undefined;
    if (this.queue.length >= this.limits.maxQueued) return 'queue_full';
    if (client !== undefined && (this.clients.get(client)?.queued ?? 0) >= this.queuedPerClient) return 'client_share';
    return undefined;
  }

  private underRunningShare(client: string | undefined): boolean {
    return client === undefined || (this.clients.get(client)?.running ?? 0) < this.runningPerClient;
  }

  private count(client: string | undefined, field: keyof ClientCount, delta: number): void {
    if (client === undefined) return;
    const c = this.clients.get(client) ?? { running: 0, queued: 0 };
    c[field] += delta;
    if (c.running === 0 && c.queued === 0) this.clients.delete(client);
    else this.clients.set(client, c);
  }

  /** Gives free slots to the longest waiters whose clients are under their running share. */
  private grantWaiters(): void {
    while (this.running < this.limits.maxRunning) {
      const next = this.queue.find((w) => this.underRunningShare(w.client));
      if (!next) return;
      next.grant();
    }
  }

  private take(client: string | undefined): () => void {
    this.running++;
    this.count(client, 'running', 1);
    const done = gitTransferStarted();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.running--;
      this.count(client, 'running', -1);
      done();
      this.grantWaiters();
    };
  }
}
