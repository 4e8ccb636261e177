import { ExpressAdapter } from '@nestjs/platform-express';
import type { Request, Response } from 'express';
import { Paginated, paginationHeaders } from '../pagination/pagination';
import { sendListWithEtag } from './etag';

/**
 * What a handler returns, shaped into the response where Nest writes it (`reply`):
 * - a `Paginated` result becomes its items, with the Link / X-* pagination headers, serialised here
 *   with their ETag (etag.ts: `If-None-Match` → 304);
 * - a bare value (`true` for block/unblock and project delete, as GitLab answers) is sent as JSON,
 *   where Nest would send primitives as text/html; `undefined` stays an empty body.
 *
 * This was a global interceptor. Any interceptor makes Nest run every request through an rxjs
 * pipeline with two `AsyncResource.bind` calls (each builds a deprecation wrapper); with none, Nest
 * awaits the handler directly. The adapter's `reply` is the one place every handler's result passes.
 */
export function shapeResponse(externalUrl: string, res: Response, result: unknown): unknown {
  if (result instanceof Paginated) {
    const req = res.req as Request;
    const headers = paginationHeaders(externalUrl, req.path, req.query, result.total, result.page);
    for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
    return sendListWithEtag(req, res, result.items as unknown[]);
  }
  if (result === undefined || (typeof result === 'object' && result !== null)) return result;
  if (res.headersSent) return result;
  res.setHeader('Content-Type', 'application/json');
  return JSON.stringify(result);
}

export class ResponseAdapter extends ExpressAdapter {
  constructor(private readonly externalUrl: string) {
    super();
  }

  override reply(response: Response, body: unknown, statusCode?: number): unknown {
    return super.reply(response, shapeResponse(this.externalUrl, response, body), statusCode);
  }
}
