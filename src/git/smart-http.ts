import { existsSync } from 'node:fs';
import type { Request, Response } from 'express';
import { GitRunner } from './git-runner';
import { PushLog, PushRules, RefUpdate } from './receive-hooks';
import { FinalFlushHold, pushSideband } from './sideband';
import { GitRequestRefused, readSmartHttpRequest, SmartHttpBody } from './smart-http-request';
import { transferConfigEnv } from './transfer-config';
import { TransferAborted, TransferLimiter, TRANSFERS_RETRY_AFTER_SECONDS, TransfersBusy } from './transfer-limiter';

export type { RefUpdate };

export type SmartHttpAction = 'info/refs' | 'git-upload-pack' | 'git-receive-pack';

export interface SmartHttpRequest {
  req: Request;
  res: Response;
  gitDir: string;
  action: SmartHttpAction;
  remoteUser: string;
  /** Whom the transfer is for, the key of the transfer limit's fair shares (`transferClient`). */
  client: string;
  hooksPath: string;
  pushRules?: PushRules;
  /**
   * Runs with the applied ref updates of a push before the response ends, so that when `git push`
   * returns, the push's consequences (default branch and its protection, events) are in place. The
   * lines it answers are shown to the pusher (`remote: …`, on the side band the client asked for).
   */
  onUpdates?: (updates: RefUpdate[]) => Promise<string[] | void>;
  /** A POST's request, read by the caller (`readSmartHttpRequest`); read here, before the slot, when not given. */
  body?: SmartHttpBody;
  /** How long a POST's request may take to arrive when it is read here. */
  requestTimeoutMs: number;
}

const TIMEOUT_MS = 60 * 60_000;

/**
 * Serves one smart HTTP request as `git http-backend` does (see `serve`): a POST's request is read
 * first (the whole of an upload-pack request, a push's list of ref updates: `readSmartHttpRequest`),
 * then a transfer slot taken and git started with it; the rest of a push's body is piped in as it
 * arrives and the response piped out, never buffered. For pushes, the hooks get the push rules and
 * report applied updates, which are returned once git is done. A request refused before git starts
 * throws `GitRequestRefused` (the caller answers it).
 */
export async function serveSmartHttp(runner: GitRunner, limiter: TransferLimiter, o: SmartHttpRequest): Promise<RefUpdate[]> {
  const service = refusedBeforeGit(o);
  if (!service) return [];
  const body = o.action === 'info/refs' ? undefined : (o.body ?? (await readSmartHttpRequest(o.req, service, { timeoutMs: o.requestTimeoutMs })));
  const release = await transferSlot(limiter, o);
  if (!release) return [];
  try {
    return await serve(runner, o, service, body, release);
  } finally {
    release(); // given back when git ended; here too when it never started
  }
}

/**
 * The transfer limit: a pack request (`git-upload-pack`, `git-receive-pack`) waits for a slot; the
 * ref advertisement (`info/refs`) is cheap and takes none, but is refused while a pack request would
 * be, because it is the one answer whose text git shows ("remote: fatal: …"; after a refused pack
 * request git prints only "RPC failed; HTTP 503"). Undefined when the request was answered here
 * (503) or its client went away while it waited.
 */
async function transferSlot(limiter: TransferLimiter, o: SmartHttpRequest): Promise<(() => void) | undefined> {
  const gone = new AbortController();
  const onClose = () => {
    if (!o.res.writableFinished) gone.abort();
  };
  o.res.on('close', onClose);
  try {
    if (o.action !== 'info/refs') return await limiter.acquire(gone.signal, o.client);
    limiter.admit(o.client);
    return () => undefined;
  } catch (e) {
    if (e instanceof TransferAborted) return undefined;
    if (!(e instanceof TransfersBusy)) throw e;
    o.res.status(503).setHeader('Retry-After', String(TRANSFERS_RETRY_AFTER_SECONDS));
    o.res.setHeader('Content-Type', 'text/plain; charset=utf-8');
    o.res.end(e.message + '\n');
    return undefined;
  } finally {
    o.res.off('close', onClose);
  }
}

/** Headers of every git answer, as `git http-backend` sends them (`hdr_nocache`). */
const NO_CACHE: [string, string][] = [
  ['Expires', 'Fri, 01 Jan 1980 00:00:00 GMT'],
  ['Pragma', 'no-cache'],
  ['Cache-Control', 'no-cache, max-age=0, must-revalidate'],
];

function pkt(line: string): string {
  return (line.length + 4).toString(16).padStart(4, '0') + line;
}

/**
 * What `git http-backend` answers without running git: 403 for a service that is not enabled, 415
 * for a POST of the wrong content type (with its message), 404 for a repository that is not there.
 * Undefined when answered; else the service to run.
 */
function refusedBeforeGit(o: SmartHttpRequest): 'upload-pack' | 'receive-pack' | undefined {
  const info = o.action === 'info/refs';
  const requested = info ? new URLSearchParams(o.req.url.includes('?') ? o.req.url.slice(o.req.url.indexOf('?') + 1) : '').get('service') : o.action;
  const service = requested === 'git-upload-pack' ? 'upload-pack' : requested === 'git-receive-pack' ? 'receive-pack' : undefined;
  if (!service || (service === 'receive-pack' && !o.pushRules)) {
    // http-backend's "Service not enabled" (http.receivepack is set only for those who may push)
    o.res.status(403);
    for (const [k, v] of NO_CACHE) o.res.setHeader(k, v);
    o.res.end();
    return undefined;
  }
  if (!info && !hasContentType(o.req, service)) {
    const expected = `application/x-git-${service}-request`;
    o.res.status(415).setHeader('Content-Type', 'text/plain');
    o.res.end(`Expected POST with Content-Type '${expected}', but received '${String(o.req.headers['content-type'] ?? '')}' instead.\n`);
    return undefined;
  }
  if (!existsSync(o.gitDir)) {
    // http-backend's answer for a repository that is not there
    o.res.status(404);
    for (const [k, v] of NO_CACHE) o.res.setHeader(k, v);
    o.res.end();
    return undefined;
  }
  return service;
}

/** Whether a POST has the content type of its service's request, as http-backend requires. */
export function hasContentType(req: Request, service: 'upload-pack' | 'receive-pack'): boolean {
  return req.headers['content-type'] === `application/x-git-${service}-request`;
}

/**
 * What `git http-backend` does for a smart request, without its two extra processes (the `git`
 * wrapper and `git-http-backend` itself, ~6 ms of CPU each on the reference machine, two per
 * request): the service (`upload-pack` or `receive-pack`) runs directly with `--stateless-rpc`,
 * the answer has http-backend's headers (no-cache, the service's content type), an `info/refs`
 * answer its `# service=` preamble (not for protocol v2); the request was read (and inflated) before.
 */
async function serve(
  runner: GitRunner,
  o: SmartHttpRequest,
  service: 'upload-pack' | 'receive-pack',
  body: SmartHttpBody | undefined,
  release: () => void,
): Promise<RefUpdate[]> {
  const info = o.action === 'info/refs';
  const pushLog = await PushLog.open(o.pushRules);
  const env: Record<string, string> = transferConfigEnv(o.hooksPath, service);
  const protocol = o.req.headers['git-protocol'];
  if (typeof protocol === 'string' && /^[a-z0-9=:.]{1,64}$/i.test(protocol)) env.GIT_PROTOCOL = protocol;
  if (service === 'receive-pack') {
    // as http-backend: the pusher as committer of what receive-pack records
    env.GIT_COMMITTER_NAME = o.remoteUser;
    env.GIT_COMMITTER_EMAIL = `${o.remoteUser}@http.${o.req.ip ?? ''}`;
  }
  if (pushLog) Object.assign(env, pushLog.env);

  // the directory is our own storage path (absolute: never taken for an option)
  const child = runner.spawn([service, '--stateless-rpc', ...(info ? ['--http-backend-info-refs'] : []), o.gitDir], { env, timeoutMs: TIMEOUT_MS });
  child.once('close', release);
  o.req.on('aborted', () => child.kill('SIGKILL'));
  o.res.on('close', () => {
    if (!o.res.writableFinished) child.kill('SIGKILL');
  });
  if (o.req.socket.destroyed) child.kill('SIGKILL'); // gone before the listeners above

  o.res.status(200);
  for (const [k, v] of NO_CACHE) o.res.setHeader(k, v);
  o.res.setHeader('Content-Type', `application/x-git-${service}-${info ? 'advertisement' : 'result'}`);
  if (info) {
    child.stdin.end();
    const v2 = typeof env.GIT_PROTOCOL === 'string' && env.GIT_PROTOCOL.split(':').includes('version=2');
    if (!v2) o.res.write(pkt(`# service=git-${service}\n`) + '0000');
  } else if (body?.rest) {
    // a push: its list of ref updates, then its pack as it arrives; a gzip body that inflates too far stops git
    child.stdin.write(body.head);
    if (body.error || (body.rest.destroyed && !body.rest.readableEnded)) child.kill('SIGKILL'); // failed, or its client gone, while waiting
    body.rest.on('error', () => child.kill('SIGKILL'));
    body.rest.pipe(child.stdin);
  } else {
    child.stdin.end(body?.head);
  }
  // a push's last flush-pkt waits for what onUpdates has to say (sideband.ts)
  const band = service === 'receive-pack' && body ? pushSideband(body.head) : undefined;
  const hold = band ? new FinalFlushHold(band) : undefined;
  child.stdout.on('data', (data: Buffer) => {
    const chunk = hold ? hold.push(data) : data;
    if (chunk.length > 0 && !o.res.write(chunk)) {
      child.stdout.pause();
      o.res.once('drain', () => child.stdout.resume());
    }
  });
  child.stderr.resume();

  const code: number | null = await new Promise((resolve) => child.on('close', resolve));
  const updates = (await pushLog?.close(code === 0)) ?? [];
  const lines = updates.length && o.onUpdates ? await o.onUpdates(updates) : undefined; // the caller logs its own failures
  const refused = body?.error instanceof GitRequestRefused ? body.error : undefined;
  if (refused) {
    if (!o.res.headersSent) throw refused; // nothing was answered yet: the caller answers the refusal
    o.res.destroy();
    return updates;
  }
  o.res.end(hold?.end(lines));
  return updates;
}
