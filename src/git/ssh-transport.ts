import type { Readable, Writable } from 'node:stream';
import { GitRunner } from './git-runner';
import { PushLog, PushRules, RefUpdate } from './receive-hooks';
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
  onUpdates?: (updates: RefUpdate[]) => Promise<void>;
  /** Called with a function that stops git (the connection went away, or the server is stopping). */
  onAbort?: (kill: () => void) => void;
}

const TIMEOUT_MS = 60 * 60_000;

/**
 * Runs one git service for an SSH channel: `git upload-pack|receive-pack|upload-archive <dir>`, its
 * standard streams piped to the channel's (with backpressure, never buffered). A push goes through the
 * same pre-receive rules and post-receive log as smart HTTP; the applied updates reach `onUpdates`
 * before the exit code is returned, so that when `git push` ends, the push's consequences are in place.
 * git starts once the transfer limit gives a slot (src/git/transfer-limiter.ts); a transfer it refuses
 * gets the one line git shows on stderr and exit code 1, as a refused command does.
 */
export async function serveGitSsh(runner: GitRunner, limiter: TransferLimiter, x: SshGitExchange): Promise<number> {
  if (x.service === 'git-receive-pack' && !x.pushRules) throw new Error('push rules missing');
  const gone = new AbortController();
  let kill = () => gone.abort();
  x.onAbort?.(() => kill());
  // a waiting channel is not read, so it never signals its close (that comes after the end of its
  // input); the end of its stderr, which the SSH server ends when the channel closes, tells instead
  const stderrGone = () => kill();
  x.stderr.once('finish', stderrGone).once('close', stderrGone);
  let release: () => void;
  try {
    if (x.stderr.writableEnded) gone.abort();
    release = await limiter.acquire(gone.signal);
  } catch (e) {
    if (e instanceof TransfersBusy) x.stderr.write(e.message + '\n');
    else if (!(e instanceof TransferAborted)) throw e;
    return 1; // (aborted: the connection is gone, nobody reads the code)
  } finally {
    x.stderr.off('finish', stderrGone).off('close', stderrGone);
  }
  try {
    return await serve(runner, x, release, (k) => {
      kill = k;
      if (gone.signal.aborted) k(); // gone while the push log opened
    });
  } finally {
    release(); // given back when git ended; here too when it never started
  }
}

async function serve(runner: GitRunner, x: SshGitExchange, release: () => void, onKill: (kill: () => void) => void): Promise<number> {
  const pushLog = await PushLog.open(x.pushRules);
  const sub = x.service.slice('git-'.length) as TransferService; // upload-pack, receive-pack, upload-archive
  const env = transferConfigEnv(x.hooksPath, sub);
  if (x.protocol) env.GIT_PROTOCOL = x.protocol;
  if (pushLog) Object.assign(env, pushLog.env);
  // the directory is our own storage path, never a client value
  const child = runner.spawn([sub, x.gitDir], { env, timeoutMs: TIMEOUT_MS });
  child.once('close', release);
  onKill(() => child.kill('SIGKILL'));
  x.stdin.pipe(child.stdin);
  child.stdin.on('error', () => undefined); // git may exit before the client stops sending
  child.stdout.pipe(x.stdout, { end: false });
  child.stderr.pipe(x.stderr, { end: false });
  const code: number | null = await new Promise((resolve) => child.on('close', resolve));
  x.stdin.unpipe(child.stdin);
  const updates = (await pushLog?.close(code === 0)) ?? [];
  if (updates.length && x.onUpdates) await x.onUpdates(updates);
  return code ?? 1;
}
