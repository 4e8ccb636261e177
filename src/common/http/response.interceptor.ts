import { CallHandler, ExecutionContext, Inject, Injectable, NestInterceptor } from '@nestjs/common';
import type { Request, Response } from 'express';
import { map, Observable } from 'rxjs';
import { APP_CONFIG, AppConfig } from '../../config/config';
import { Paginated, paginationHeaders } from '../pagination/pagination';
import { sendListWithEtag } from './etag';

/**
 * The one global interceptor, shaping what a handler returns into the response:
 * - a `Paginated` result becomes its items, with the Link / X-* pagination headers, serialised here
 *   with their ETag (etag.ts: `If-None-Match` → 304);
 * - a bare value (`true` for block/unblock and project delete, as GitLab answers) is sent as JSON,
 *   where Nest would send primitives as text/html; `undefined` stays an empty body.
 * One interceptor rather than two: each one costs every request an rxjs pipe and an async-context
 * bind (seen in CPU profiles of the hot reads).
 */
@Injectable()
export class ResponseInterceptor implements NestInterceptor {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  intercept(ctx: ExecutionContext, next: CallHandler): Observable<unknown> {
    return next.handle().pipe(
      map((result: unknown) => {
        if (result instanceof Paginated) {
          const req = ctx.switchToHttp().getRequest<Request>();
          const res = ctx.switchToHttp().getResponse<Response>();
          const headers = paginationHeaders(this.config.externalUrl, req.path, req.query, result.total, result.page);
          for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
          return sendListWithEtag(req, res, result.items as unknown[]);
        }
        if (result === undefined || (typeof result === 'object' && result !== null)) return result;
        const res = ctx.switchToHttp().getResponse<Response>();
        if (res.headersSent) return result;
        res.setHeader('Content-Type', 'application/json');
        return JSON.stringify(result);
      }),
    );
  }
}
