import { CallHandler, ExecutionContext, Inject, Injectable, NestInterceptor } from '@nestjs/common';
import type { Request, Response } from 'express';
import { map, Observable } from 'rxjs';
import { APP_CONFIG, AppConfig } from '../../config/config';
import { Paginated, paginationHeaders } from './pagination';

/** Unwraps a `Paginated` result into its items and writes the Link / X-* headers. */
@Injectable()
export class PaginationInterceptor implements NestInterceptor {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  intercept(ctx: ExecutionContext, next: CallHandler): Observable<unknown> {
    return next.handle().pipe(
      map((result) => {
        if (!(result instanceof Paginated)) return result;
        const req = ctx.switchToHttp().getRequest<Request>();
        const res = ctx.switchToHttp().getResponse<Response>();
        const headers = paginationHeaders(
          this.config.externalUrl,
          req.path,
          req.query as Record<string, unknown>,
          result.total,
          result.page,
        );
        for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
        return result.items;
      }),
    );
  }
}
