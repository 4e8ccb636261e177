import type { Readable, Writable } from 'node:stream';
import { GitRunner } from './git-runner';
import { PushLog, PushRules, RefUpdate } from './receive-hooks';
import { transferConfigEnv } from './transfer-config';

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
 */
export async function serveGitSsh(runner: GitRunner, x: SshGitExchange): Promise<number> {
  if (x.service === 'git-receive-pack' && !x.pushRules) throw new Error('push rules missing');
  const pushLog = await PushLog.open(x.pushRules);
  const env = transferConfigEnv(x.hooksPath);
  if (x.protocol) env.GIT_PROTOCOL = x.protocol;
  if (pushLog) Object.assign(env, pushLog.env);
  const sub = x.service.slice('git-'.length); // upload-pack, receive-pack, upload-archive
  // the directory is our own storage path, never a client value
  const child = runner.spawn([sub, x.gitDir], { env, timeoutMs: TIMEOUT_MS });
  x.onAbort?.(() => child.kill('SIGKILL'));
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
