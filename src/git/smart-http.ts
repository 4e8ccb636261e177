import { relative } from 'node:path';
import type { Request, Response } from 'express';
import { GitRunner } from './git-runner';
import { PushLog, PushRules, RefUpdate } from './receive-hooks';
import { transferConfigEnv } from './transfer-config';
import { TransferAborted, TransferLimiter, TRANSFERS_BUSY_MESSAGE, TRANSFERS_RETRY_AFTER_SECONDS, TransfersBusy } from './transfer-limiter';

export type { RefUpdate };

export type SmartHttpAction = 'info/refs' | 'git-upload-pack' | 'git-receive-pack';

export interface SmartHttpRequest {
  req: Request;
  res: Response;
  repositoriesRoot: string;
  gitDir: string;
  action: SmartHttpAction;
  remoteUser: string;
  hooksPath: string;
  pushRules?: PushRules;
  /**
   * Runs with the applied ref updates of a push before the response ends, so that when `git push`
   * returns, the push's consequences (default branch and its protection, events) are in place.
   */
  onUpdates?: (updates: RefUpdate[]) => Promise<void>;
}

const TIMEOUT_MS = 60 * 60_000;

/**
 * Serves one smart HTTP request through `git http-backend` (CGI): the request body is piped in as it
 * arrives (gzip bodies are decoded by git) and the response piped out, never buffered. For pushes,
 * the hooks get the push rules and report applied updates, which are returned once git is done.
 */
export async function serveSmartHttp(runner: GitRunner, limiter: TransferLimiter, o: SmartHttpRequest): Promise<RefUpdate[]> {
  const release = await transferSlot(limiter, o);
  if (!release) return [];
  try {
    return await serve(runner, o, release);
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
    if (o.action !== 'info/refs') return await limiter.acquire(gone.signal);
    limiter.admit();
    return () => undefined;
  } catch (e) {
    if (e instanceof TransferAborted) return undefined;
    if (!(e instanceof TransfersBusy)) throw e;
    o.res.status(503).setHeader('Retry-After', String(TRANSFERS_RETRY_AFTER_SECONDS));
    o.res.setHeader('Content-Type', 'text/plain; charset=utf-8');
    o.res.end(TRANSFERS_BUSY_MESSAGE + '\n');
    return undefined;
  } finally {
    o.res.off('close', onClose);
  }
}

async function serve(runner: GitRunner, o: SmartHttpRequest, release: () => void): Promise<RefUpdate[]> {
  const pushLog = await PushLog.open(o.pushRules);
  const query = o.req.url.includes('?') ? o.req.url.slice(o.req.url.indexOf('?') + 1) : '';
  const env: Record<string, string> = {
    GIT_PROJECT_ROOT: o.repositoriesRoot,
    PATH_INFO: '/' + relative(o.repositoriesRoot, o.gitDir) + '/' + o.action,
    REQUEST_METHOD: o.req.method,
    QUERY_STRING: query,
    CONTENT_TYPE: String(o.req.headers['content-type'] ?? ''),
    REMOTE_USER: o.remoteUser,
    REMOTE_ADDR: o.req.ip ?? '',
    GIT_HTTP_EXPORT_ALL: '1',
    GIT_HTTP_MAX_REQUEST_BUFFER: '100M',
    ...transferConfigEnv(o.hooksPath, [['http.receivepack', o.pushRules ? 'true' : 'false']]),
  };
  const encoding = o.req.headers['content-encoding'];
  if (typeof encoding === 'string') env.HTTP_CONTENT_ENCODING = encoding;
  const protocol = o.req.headers['git-protocol'];
  if (typeof protocol === 'string' && /^[a-z0-9=:.]{1,64}$/i.test(protocol)) env.GIT_PROTOCOL = protocol;
  // No CONTENT_LENGTH: Node's parser already ends the body at Content-Length, and git reads its stdin to
  // the end. Given a length, git 2.39's http-backend spins forever (read() = 0 in a loop) when a client
  // goes away before sending all of it.
  if (pushLog) Object.assign(env, pushLog.env);

  const child = runner.spawn(['http-backend'], { env, timeoutMs: TIMEOUT_MS });
  child.once('close', release);
  o.req.pipe(child.stdin);
  o.req.on('aborted', () => child.kill('SIGKILL'));
  o.res.on('close', () => {
    if (!o.res.writableFinished) child.kill('SIGKILL');
  });
  if (o.req.socket.destroyed) child.kill('SIGKILL'); // gone before the listeners above

  let headerBuf = Buffer.alloc(0);
  let headersDone = false;
  child.stdout.on('data', (chunk: Buffer) => {
    if (headersDone) {
      if (!o.res.write(chunk)) {
        child.stdout.pause();
        o.res.once('drain', () => child.stdout.resume());
      }
      return;
    }
    headerBuf = Buffer.concat([headerBuf, chunk]);
    let end = headerBuf.indexOf('\r\n\r\n');
    let sepLen = 4;
    if (end === -1) {
      end = headerBuf.indexOf('\n\n');
      sepLen = 2;
    }
    if (end === -1) return;
    headersDone = true;
    let status = 200;
    for (const line of headerBuf.subarray(0, end).toString('latin1').split(/\r?\n/)) {
      const i = line.indexOf(':');
      if (i === -1) continue;
      const name = line.slice(0, i).trim();
      const value = line.slice(i + 1).trim();
      if (name.toLowerCase() === 'status') status = Number(value.split(' ')[0]) || 200;
      else o.res.setHeader(name, value);
    }
    o.res.status(status);
    const rest = headerBuf.subarray(end + sepLen);
    if (rest.length) o.res.write(rest);
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => {
    if (stderr.length < 8192) stderr += d.toString('utf8');
  });

  const code: number | null = await new Promise((resolve) => child.on('close', resolve));
  const updates = (await pushLog?.close(code === 0)) ?? [];
  if (updates.length && o.onUpdates) await o.onUpdates(updates); // the caller logs its own failures
  if (!headersDone && !o.res.headersSent) {
    o.res.status(500).setHeader('Content-Type', 'text/plain');
    o.res.end('git http-backend failed\n');
  } else {
    o.res.end();
  }
  return updates;
}
