import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import type { Response } from 'express';
import { map, Observable } from 'rxjs';

/**
 * GitLab answers some calls with a bare JSON value (`true` for block/unblock and project delete).
 * Nest would send primitives as text/html; this sends them as JSON. `undefined` stays an empty body.
 */
@Injectable()
export class JsonResponseInterceptor implements NestInterceptor {
  intercept(ctx: ExecutionContext, next: CallHandler): Observable<unknown> {
    return next.handle().pipe(
      map((result) => {
        if (result === undefined || (typeof result === 'object' && result !== null)) return result;
        const res = ctx.switchToHttp().getResponse<Response>();
        if (res.headersSent) return result;
        res.setHeader('Content-Type', 'application/json');
        return JSON.stringify(result);
      }),
    );
  }
}
