import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import express, { NextFunction, Request, RequestHandler, Response } from 'express';
import multer from 'multer';
import { statusMessage, writeErrorResponse } from '../errors/error-response';
import { Logger } from '../logging/logger';

/**
 * `userId`/`username`: who the request authenticated as (the API's guard, git's HTTP Basic), for the log line.
 * `logLevel`: 'debug' for the routine requests that would drown the log at info (a runner's empty poll,
 * git's first unauthenticated request, answered with the 401 challenge).
 */
export type ApiRequest = Request & { id: string; startedAt: bigint; userId?: number; username?: string; logLevel?: 'debug' };

/** Logs this request's line at debug: a routine request (polls, probes, scrapes, challenges) that would drown the log at info. */
export function logAtDebug(req: Request): void {
  (req as ApiRequest).logLevel = 'debug';
}

const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;
// credentials and passwords (write parameters may arrive in the query string too)
// `url` and `import_url` too: hook and import URLs may carry credentials (user:password@host).
const SECRET_PARAM = /^(token|.*_token|.*password.*|.*secret.*|url|import_url)$/i;

/** The request URL for the log: values of credential-like query parameters replaced, however the name is encoded. */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q === -1) return url;
  const parts = url
    .slice(q + 1)
    .split('&')
    .map((part) => {
      const eq = part.indexOf('=');
      if (eq === -1) return part;
      let name = part.slice(0, eq);
      try {
        name = decodeURIComponent(name.replace(/\+/g, ' '));
      } catch {
        // malformed escape: the query parser keeps the raw name too
      }
      return SECRET_PARAM.test(name.split('[')[0]) ? `${part.slice(0, eq)}=[FILTERED]` : part;
    });
  return `${url.slice(0, q)}?${parts.join('&')}`;
}

/** What the request log hands to the metrics: the route template is read off the finished request. */
export interface HttpMetrics {
  observe(req: Request, status: number, startedAt: bigint): void;
}

const CORS_EXPOSED = 'Link, X-Total, X-Total-Pages, X-Page, X-Per-Page, X-Next-Page, X-Prev-Page, X-Request-Id';
const CORS_ALLOWED_HEADERS = 'PRIVATE-TOKEN, Authorization, Sudo, Content-Type, X-Requested-With';
const CORS_METHODS = 'GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS';

/**
 * CORS for browser front ends on the listed origins only (none by default): the API and OAuth
 * routes answer preflights and expose the pagination headers. Credentials (cookies) are never
 * allowed — browser clients authenticate with tokens in headers.
 */
function cors(origins: string[]): RequestHandler {
  const allowed = new Set(origins);
  return (req, res, next) => {
    if (allowed.size === 0) return next();
    const path = req.path;
    if (!path.startsWith('/api/') && !path.startsWith('/oauth/')) return next();
    const origin = req.headers.origin;
    res.vary('Origin');
    const ok = typeof origin === 'string' && allowed.has(origin);
    if (req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined) {
      if (ok) {
        res.setHeader('Access-Control-Allow-Origin', origin);
        res.setHeader('Access-Control-Allow-Methods', CORS_METHODS);
        res.setHeader('Access-Control-Allow-Headers', CORS_ALLOWED_HEADERS);
        res.setHeader('Access-Control-Max-Age', '7200');
      }
      res.status(204).end();
      return;
    }
    if (ok) {
      res.setHeader('Access-Control-Allow-Origin', origin);
      res.setHeader('Access-Control-Expose-Headers', CORS_EXPOSED);
    }
    next();
  };
}

/** Deepest nesting a JSON body may have: the DTO transformer walks bodies recursively (5,000 levels overflowed its stack). */
export const MAX_JSON_DEPTH = 32;

/**
 * After a JSON body is parsed: as Grape did, a body that is not an object (`null`, an array, a
 * string, a number, a boolean) carries no parameters; `nested too deeply` as an error type.
 */
export function jsonBodyParsed(req: Request, err?: unknown): unknown {
  if (err) return err;
  if (nestedDeeperThan(req.body, MAX_JSON_DEPTH)) return { type: 'entity.too.deep' };
  if (req.body !== undefined && (req.body === null || typeof req.body !== 'object' || Array.isArray(req.body))) req.body = {};
  return undefined;
}

/** Whether `value` nests objects/arrays deeper than `max` (iterative: the check itself must not overflow). */
export function nestedDeeperThan(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth >= max) return true;
    for (const child of Object.values(v)) stack.push([child, depth + 1]);
  }
  return false;
}

/**
 * Node's HTTP parser answers requests it cannot parse (headers or URL over 16 kB: 431; malformed: 400)
 * before any route, with an empty body; this `clientError` listener gives them the API's JSON error body.
 */
export function clientErrorResponse(err: Error & { code?: string }, socket: import('node:stream').Duplex): void {
  if (!socket.writable || err.code === 'ECONNRESET') {
    socket.destroy();
    return;
  }
  const status = err.code === 'HPE_HEADER_OVERFLOW' ? 431 : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
  const body = JSON.stringify({ message: `${status} ${STATUS_CODES[status]}` });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/** `'10mb'`, `'512kb'` or a plain number of bytes. */
function byteSize(limit: string): number {
  const m = /^(\d+)\s*(b|kb|mb|gb)?$/i.exec(limit.trim());
  if (!m) throw new Error(`invalid body limit: ${limit}`);
  const unit = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 }[(m[2] ?? 'b').toLowerCase() as 'b'];
  return Number(m[1]) * unit;
}

/**
 * Express-level middleware that runs before Nest's router, in this order:
 * request id and the per-request JSON log line; the handler of other hosts (`hostHandler`: Pages sites,
 * which never reach what follows); CORS; URL normalisation (extra slashes, `.json`);
 * `Content-Type: application/json` without a charset; body parsing with GitLab-style errors.
 */
export function httpPipeline(
  logger: Logger,
  opts: { bodyLimit: string; corsOrigins?: string[]; metrics?: HttpMetrics; hostHandler?: RequestHandler },
): RequestHandler[] {
  // not strict: `null` (what v3-era Go clients send on every write without options), arrays and scalars are valid JSON
  const json = express.json({ limit: opts.bodyLimit, type: ['application/json', 'application/*+json'], strict: false });
  const urlencoded = express.urlencoded({ extended: true, limit: opts.bodyLimit, parameterLimit: 2000 });
  const maxBytes = byteSize(opts.bodyLimit);
  const multipart = multer({
    limits: { fieldSize: 1024 * 1024, fields: 500, files: 0 },
    // busboy has no total-size limit: count the bytes and stop at the same limit as the other bodies
    streamHandler: (req: Request, busboy: NodeJS.WritableStream & { destroy(err?: Error): void }) => {
      let seen = 0;
      const count = (chunk: Buffer) => {
        seen += chunk.length;
        if (seen <= maxBytes) return;
        req.off('data', count);
        busboy.destroy(Object.assign(new Error('request entity too large'), { type: 'entity.too.large' }));
      };
      req.on('data', count);
      req.pipe(busboy);
    },
  } as multer.Options).none();

  const requestLog: RequestHandler = (req, res, next) => {
    const r = req as ApiRequest;
    const incoming = req.headers['x-request-id'];
    r.id = typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    r.startedAt = process.hrtime.bigint();
    res.setHeader('X-Request-Id', r.id);
    // as Rails does on every response: no body of ours (raw blobs, artifacts, traces) is ever sniffed into HTML
    res.setHeader('X-Content-Type-Options', 'nosniff');
    // once per request: on `finish`, or on `close` when the client hung up first (then `finish` never
    // comes; `close` can also come first when the client closes right after reading the response).
    // The status is the one sent; 499 (client closed request) when no response had been started.
    let logged = false;
    const done = () => {
      if (logged) return;
      logged = true;
      const status = res.headersSent ? res.statusCode : 499;
      opts.metrics?.observe(req, status, r.startedAt);
      logger.log(r.logLevel ?? 'info', 'request', {
        request_id: r.id,
        method: req.method,
        path: redactUrl(req.originalUrl || req.url),
        status,
        duration_ms: Number((process.hrtime.bigint() - r.startedAt) / 1000n) / 1000,
        user_id: r.userId ?? null,
        user: r.username ?? null,
        remote_ip: req.ip,
      });
    };
    res.on('finish', done);
    res.on('close', done);
    next();
  };

  const normaliseUrl: RequestHandler = (req, _res, next) => {
    const q = req.url.indexOf('?');
    let path = q === -1 ? req.url : req.url.slice(0, q);
    const query = q === -1 ? '' : req.url.slice(q);
    path = path.replace(/\/{2,}/g, '/');
    if (path.length > 1 && path.endsWith('/')) path = path.slice(0, -1);
    if ((path.startsWith('/api/') || path.startsWith('/ci/api/')) && path.endsWith('.json')) path = path.slice(0, -5);
    req.url = path + query;
    next();
  };

  const jsonContentType: RequestHandler = (_req, res, next) => {
    const setHeader = res.setHeader.bind(res);
    res.setHeader = ((name: string, value: number | string | readonly string[]) => {
      if (typeof value === 'string' && name.toLowerCase() === 'content-type' && value.startsWith('application/json')) {
        return setHeader(name, 'application/json');
      }
      return setHeader(name, value);
    }) as Response['setHeader'];
    next();
  };

  const parseErrors = (res: Response, next: NextFunction) => (err?: unknown) => {
    if (!err) return next();
    const e = err as { type?: string; status?: number; code?: string };
    if (e.type === 'entity.parse.failed') {
      return writeErrorResponse(res, 400, { message: '400 Bad request - malformed JSON body' });
    }
    if (e.type === 'entity.too.deep') {
      return writeErrorResponse(res, 400, { message: '400 Bad request - JSON body nested too deeply' });
    }
    if (e.type === 'entity.too.large' || e.code === 'LIMIT_FIELD_VALUE' || e.status === 413) {
      return writeErrorResponse(res, 413, { message: statusMessage(413) });
    }
    if (e.code === 'LIMIT_UNEXPECTED_FILE' || e.code === 'LIMIT_FILE_COUNT') {
      return writeErrorResponse(res, 400, { message: '400 Bad request - unexpected file upload' });
    }
    const status = typeof e.status === 'number' && e.status >= 400 && e.status < 500 ? e.status : 400;
    return writeErrorResponse(res, status, { message: `${statusMessage(status)} - unreadable request body` });
  };

  const parseBody: RequestHandler = (req, res, next) => {
    // Git smart HTTP and the runner's artifact/trace uploads stream their own bodies.
    if (!req.path.startsWith('/api/') && !req.path.startsWith('/oauth/')) return next();
    const done = parseErrors(res, next);
    const type = (req.headers['content-type'] || '').toLowerCase();
    if (type.startsWith('multipart/form-data')) {
      if (Number(req.headers['content-length']) > maxBytes) return done({ type: 'entity.too.large' });
      return multipart(req, res, done);
    }
    if (type.startsWith('application/x-www-form-urlencoded')) return urlencoded(req, res, done);
    return json(req, res, (err?: unknown) => done(jsonBodyParsed(req, err)));
  };

  // hostHandler: requests for other host names (GitLab Pages sites), answered before CORS, bodies and routes
  return [requestLog, ...(opts.hostHandler ? [opts.hostHandler] : []), cors(opts.corsOrigins ?? []), normaliseUrl, jsonContentType, parseBody];
}
