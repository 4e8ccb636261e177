import { randomUUID } from 'node:crypto';
import express, { NextFunction, Request, RequestHandler, Response } from 'express';
import multer from 'multer';
import { statusMessage, writeErrorResponse } from '../errors/error-response';
import { Logger } from './logger';

export type ApiRequest = Request & { id: string; startedAt: bigint; userId?: number };

const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;
const QUERY_SECRETS = /([?&](?:private_token|access_token|token)=)[^&]*/gi;

/**
 * Express-level middleware that runs before Nest's router, in this order:
 * request id and the per-request JSON log line; URL normalisation (extra slashes, `.json`);
 * `Content-Type: application/json` without a charset; body parsing with GitLab-style errors.
 */
export function httpPipeline(logger: Logger, opts: { bodyLimit: string }): RequestHandler[] {
  const json = express.json({ limit: opts.bodyLimit, type: ['application/json', 'application/*+json'] });
  const urlencoded = express.urlencoded({ extended: true, limit: opts.bodyLimit, parameterLimit: 2000 });
  const multipart = multer({ limits: { fieldSize: 1024 * 1024, fields: 500, files: 0 } }).none();

  const requestLog: RequestHandler = (req, res, next) => {
    const r = req as ApiRequest;
    const incoming = req.headers['x-request-id'];
    r.id = typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    r.startedAt = process.hrtime.bigint();
    res.setHeader('X-Request-Id', r.id);
    res.on('finish', () => {
      logger.info('request', {
        request_id: r.id,
        method: req.method,
        path: (req.originalUrl || req.url).replace(QUERY_SECRETS, '$1[FILTERED]'),
        status: res.statusCode,
        duration_ms: Number((process.hrtime.bigint() - r.startedAt) / 1000n) / 1000,
        user_id: r.userId ?? null,
        remote_ip: req.ip,
      });
    });
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
    if (type.startsWith('multipart/form-data')) return multipart(req, res, done);
    if (type.startsWith('application/x-www-form-urlencoded')) return urlencoded(req, res, done);
    return json(req, res, done);
  };

  return [requestLog, normaliseUrl, jsonContentType, parseBody];
}
