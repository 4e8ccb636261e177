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
}

/** A transfer that could not start: the queue was full, or its wait timed out. */
export class TransfersBusy extends Error {
  constructor(readonly reason: 'queue_full' | 'timeout') {
    super(TRANSFERS_BUSY_MESSAGE);
  }
}

/** A transfer whose client went away while it waited (no process was started). */
export class TransferAborted extends Error {
  constructor() {
    super('the client went away while its git transfer waited');
  }
}

interface Waiter {
  grant: () => void;
  fail: (e: Error) => void;
}

/**
 * Caps the git transfer processes of one app instance, as Gitaly's concurrency limiter does for its
 * pack RPCs (`max_per_repo`, `max_queue_size`, `max_queue_wait`): at most `maxRunning` run, at most
 * `maxQueued` wait for a slot in arrival order, and a waiter that is not served within
 * `queueTimeoutMs` is refused ("resource exhausted"). Under load this keeps `pack-objects` to what
 * the cores can run, so the transfers that run finish at full speed and the rest wait or are told
 * to retry, instead of every process getting a sliver of the CPU and every request (API included)
 * slowing down.
 *
 * Both transports (src/git/smart-http.ts, src/git/ssh-transport.ts) take a slot here before they
 * spawn git and give it back when the process ends; a waiter whose client goes away (its signal
 * aborts) leaves the queue.
 */
export class TransferLimiter {
  private running = 0;
  private readonly queue: Waiter[] = [];

  constructor(private readonly limits: TransferLimits) {}

  /**
   * For requests that take no slot but belong to a transfer (smart HTTP's ref advertisement): throws
   * `TransfersBusy` when the transfer itself would be refused now, so the client hears it at once.
   */
  admit(): void {
    if (this.running < this.limits.maxRunning || this.queue.length < this.limits.maxQueued) return;
    gitTransferRejected('queue_full');
    throw new TransfersBusy('queue_full');
  }

  /**
   * Waits for a slot; resolves to the function that gives it back (idempotent). Rejects with
   * `TransfersBusy` (queue full, wait timed out) or `TransferAborted` (`signal` aborted while waiting).
   */
  acquire(signal?: AbortSignal): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(new TransferAborted());
    if (this.running < this.limits.maxRunning && this.queue.length === 0) return Promise.resolve(this.take());
    if (this.queue.length >= this.limits.maxQueued) {
      gitTransferRejected('queue_full');
      return Promise.reject(new TransfersBusy('queue_full'));
    }
    return new Promise((resolve, reject) => {
      const dequeued = gitTransferQueued();
      const leave = () => {
        const i = this.queue.indexOf(waiter);
        if (i !== -1) this.queue.splice(i, 1);
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        dequeued();
      };
      const waiter: Waiter = {
        grant: () => {
          leave();
          resolve(this.take());
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
    });
  }

  private take(): () => void {
    this.running++;
    const done = gitTransferStarted();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.running--;
      done();
      this.queue[0]?.grant();
    };
  }
}
