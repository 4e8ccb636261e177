import type { Readable, Writable } from 'node:stream';
import { GitRunner } from './git-runner';
import { PushLog, PushRules, RefUpdate } from './receive-hooks';
import { FinalFlushHold, pushSideband } from './sideband';
import { GIT_REQUEST_MAX_BYTES, pktFlushSeeker } from './smart-http-request';
import { TransferService, transferConfigEnv } from './transfer-config';
import { TransferAborted, TransferLimiter, TransfersBusy } from './transfer-limiter';

/** The git services a client may run over SSH (what `git clone/fetch/push/archive --remote` ask for). */
export type GitSshService = 'git-upload-pack' | 'git-receive-pack' | 'git-upload-archive';

export interface SshGitExchange {
  service: GitSshService;
  gitDir: string;
  hooksPath: string;
  /** The client's `GIT_PROTOCOL` (protocol v2), already checked by the caller. */
  protocol?: string;
  stdin: Readable;
  stdout: Writable;
  stderr: Writable;
  /** Given for pushes (receive-pack is refused without them). */
  pushRules?: PushRules;
  /** Runs once the refs moved; the lines it answers are shown to the pusher (`remote: …`, on the side band it asked for). */
  onUpdates?: (updates: RefUpdate[]) => Promise<string[] | void>;
  /** Called with a function that stops git (the connection went away, or the server is stopping). */
  onAbort?: (kill: () => void) => void;
  /** Whose transfer it is, for the transfer limit's fair shares (`transferClient`): the SSH user. */
  client?: string;
  /** How long the client has to send its first request (SSH_REQUEST_TIMEOUT): no lock or slot is held meanwhile. */
  requestTimeoutMs: number;
  /** Runs once the client's first request is in, before the transfer slot is taken: a push takes its repository's write lock. */
  beforeWork?: () => Promise<void>;
}

const TIMEOUT_MS = 60 * 60_000;
/** A first request that is a flush-pkt alone (no wants, no ref updates: `git ls-remote`, nothing to fetch or push): git just ends. */
const NOTHING = Buffer.from('0000');

/**
 * Runs one git service for an SSH channel: `git upload-pack|receive-pack|upload-archive <dir>`, its
 * standard streams piped to the channel's (with backpressure, never buffered beyond the first request).
 * A push goes through the same update-hook rules and post-receive log as smart HTTP; the applied
 * updates reach `onUpdates` before the exit code is returned, so that when `git push` ends, the push's
 * consequences are in place.
 *
 * A transfer slot (src/git/transfer-limiter.ts) is taken only once git has work to do, so that a
 * client that opens channels and sends nothing holds no slot (as smart HTTP reads a POST's request
 * before taking one): git starts at once and sends its ref advertisement, which takes no slot (as
 * smart HTTP's `info/refs`, refused only while the queue is full: `admit`); then the client's first
 * request — its wants (v0), its first command (v2), its ref updates (a push), its archive arguments —
 * is read up to its flush-pkt, at most `GIT_REQUEST_MAX_BYTES`, within `requestTimeoutMs` (else the
 * channel gets a line and exit 1, and git is stopped); only then `beforeWork` (a push's repository
 * lock) and the slot, and git gets the request. A request that is a lone flush-pkt needs neither.
 * A transfer the limit refuses gets the one line git shows on stderr and exit code 1.
 */
export async function serveGitSsh(runner: GitRunner, limiter: TransferLimiter, x: SshGitExchange): Promise<number> {
  if (x.service === 'git-receive-pack' && !x.pushRules) throw new Error('push rules missing');
  try {
    limiter.admit(x.client); // refused at once when the transfer could not even wait for its turn
  } catch (e) {
    if (!(e instanceof TransfersBusy)) throw e;
    x.stderr.write(e.message + '\n');
    return 1;
  }
  const pushLog = await PushLog.open(x.pushRules);
  const sub = x.service.slice('git-'.length) as TransferService; // upload-pack, receive-pack, upload-archive
  const env = transferConfigEnv(x.hooksPath, sub);
  if (x.protocol) env.GIT_PROTOCOL = x.protocol;
  if (pushLog) Object.assign(env, pushLog.env);
  // the directory is our own storage path, never a client value
  const child = runner.spawn([sub, x.gitDir], { env, timeoutMs: TIMEOUT_MS });
  const closed = new Promise<number | null>((resolve) => child.on('close', resolve));
  let release: (() => void) | undefined;
  child.once('close', () => release?.());
  const gone = new AbortController();
  const kill = () => {
    gone.abort();
    child.kill('SIGKILL');
  };
  x.onAbort?.(kill);
  void closed.then(() => gone.abort()); // git ended by itself: nothing to wait for (the request, a lock, a slot)
  // a channel that is not read never signals its close (that comes after the end of its input); the
  // end of its stderr, which the SSH server ends when the channel closes, tells instead
  x.stderr.once('finish', kill).once('close', kill);
  if (x.stderr.writableEnded) kill();
  child.stdin.on('error', () => undefined); // git may exit before the client stops sending
  // a push's last flush-pkt waits for what onUpdates has to say (sideband.ts); held only once the
  // client's ref updates are in, when the advertisement (which ends with a flush-pkt too) is all out
  // (fetches are piped as they were)
  let hold: FinalFlushHold | undefined;
  if (x.service === 'git-receive-pack') {
    child.stdout.on('data', (data: Buffer) => {
      const chunk = hold ? hold.push(data) : data;
      if (chunk.length > 0 && !x.stdout.write(chunk)) {
        child.stdout.pause();
        x.stdout.once('drain', () => child.stdout.resume());
      }
    });
  } else {
    child.stdout.pipe(x.stdout, { end: false });
  }
  child.stderr.pipe(x.stderr, { end: false });
  try {
    const request = await firstRequest(x.stdin, { timeoutMs: x.requestTimeoutMs, signal: gone.signal, gitEnded: closed });
    if (request === 'git_ended' || request === 'gone') {
      kill();
    } else if (request === 'timeout' || request === 'too_large') {
      x.stderr.write(
        (request === 'timeout'
          ? `fatal: timed out waiting for the git request (${x.requestTimeoutMs / 1000} s)`
          : `fatal: the git request is over ${GIT_REQUEST_MAX_BYTES / (1024 * 1024)} MiB`) + '\n',
      );
      kill();
    } else if (await startWork(limiter, x, request, gone.signal, (r) => (release = r))) {
      const band = x.service === 'git-receive-pack' ? pushSideband(request.head) : undefined;
      if (band) hold = new FinalFlushHold(band);
      child.stdin.write(request.head);
      if (request.ended) child.stdin.end();
      else x.stdin.pipe(child.stdin);
    } else {
      kill();
    }
  } catch (e) {
    kill();
    throw e;
  } finally {
    x.stderr.off('finish', kill).off('close', kill);
  }
  const code = await closed;
  release?.(); // given back when git ended (also by its close handler)
  x.stdin.unpipe(child.stdin);
  const updates = (await pushLog?.close(code === 0)) ?? [];
  const lines = updates.length && x.onUpdates ? await x.onUpdates(updates) : undefined;
  if (hold) x.stdout.write(hold.end(lines));
  return code ?? 1;
}

/**
 * Once the first request is in: a lone flush-pkt, or input that ended before its request was whole,
 * goes to git as it is (git just ends); anything else waits for `beforeWork` and a transfer slot.
 * False when the transfer may not start (refused: the client has the limiter's line; or gone).
 */
async function startWork(
  limiter: TransferLimiter,
  x: SshGitExchange,
  request: FirstRequest,
  signal: AbortSignal,
  took: (release: () => void) => void,
): Promise<boolean> {
  if (request.ended || request.head.equals(NOTHING)) return true;
  try {
    await x.beforeWork?.();
    if (signal.aborted) return false;
    took(await limiter.acquire(signal, x.client));
    return true;
  } catch (e) {
    if (e instanceof TransfersBusy) x.stderr.write(e.message + '\n');
    else if (!(e instanceof TransferAborted)) throw e;
    return false; // (aborted: the connection is gone, nobody reads the code)
  }
}

interface FirstRequest {
  /** Everything the client sent so far: its first request, and whatever came after it in the same reads. */
  head: Buffer;
  /** The client's input ended (nothing more will come). */
  ended: boolean;
}

/**
 * Reads the client's first request from `input` (the cap is smart HTTP's, GitLab Workhorse's 10 MiB):
 * pkt-lines up to its first flush-pkt (`0000`; a
 * protocol v2 delimiter `0001` or response end `0002` does not end it), or the end of the input, or
 * anything that is no pkt-line (git answers that). At most `GIT_REQUEST_MAX_BYTES`, within `timeoutMs`.
 * The input is paused once it resolves, what follows left in it.
 */
function firstRequest(
  input: Readable,
  o: { timeoutMs: number; signal: AbortSignal; gitEnded: Promise<unknown> },
): Promise<FirstRequest | 'timeout' | 'too_large' | 'gone' | 'git_ended'> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const seek = pktFlushSeeker({ v2Markers: true });
    let settled = false;
    const finish = (r: FirstRequest | 'timeout' | 'too_large' | 'gone' | 'git_ended') => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      input.off('data', onData).off('end', onEnd).off('close', onGone);
      o.signal.removeEventListener('abort', onGone);
      input.pause();
      resolve(r);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > GIT_REQUEST_MAX_BYTES) return finish('too_large');
      chunks.push(chunk);
      if (seek(chunk)) finish({ head: Buffer.concat(chunks), ended: false });
    };
    const onEnd = () => finish({ head: Buffer.concat(chunks), ended: true });
    const onGone = () => finish('gone');
    const timer = setTimeout(() => finish('timeout'), o.timeoutMs);
    input.on('data', onData).once('end', onEnd).once('close', onGone);
    o.signal.addEventListener('abort', onGone, { once: true });
    void o.gitEnded.then(() => finish('git_ended'));
    if (o.signal.aborted) finish('gone');
  });
}
