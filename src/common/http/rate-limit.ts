import { Inject, Injectable } from '@nestjs/common';
import type { Request, RequestHandler } from 'express';
import { APP_CONFIG, AppConfig } from '../../config/config';
import { SecretsService } from '../crypto/secrets.service';
import { writeErrorResponse } from '../errors/error-response';
import { Logger } from '../logging/logger';
import { RateLimitRepository } from './rate-limit.repository';

/** The credential a request carries, whichever way it is sent (header, query, body, Basic/Bearer). */
function credentialOf(req: Request): string | undefined {
  const pick = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);
  const q = req.query as Record<string, unknown>;
  const b = (req.body ?? {}) as Record<string, unknown>;
  return (
    pick(req.headers['private-token']) ??
    pick(req.headers.authorization) ??
    pick(q.private_token) ??
    pick(q.access_token) ??
    pick(q.token) ??
    pick(b.private_token) ??
    pick(b.token)
  );
}

/**
 * The optional request rate limit (off by default): at most `RATE_LIMIT_PER_IP` requests per client
 * IP and `RATE_LIMIT_PER_TOKEN` per credential in each `RATE_LIMIT_PERIOD` seconds; past it, 429 with
 * `Retry-After`. Counted in the database (one statement per request), so that the limit holds across
 * instances. When both limits are 0 the middleware is not installed at all (no cost).
 * Health and metrics (`/-/...`) are never limited. If the count cannot be taken, the request passes.
 */
@Injectable()
export class RateLimiter {
  private sincePrune = 0;

  constructor(
    private readonly counters: RateLimitRepository,
    private readonly secrets: SecretsService,
    private readonly logger: Logger,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  get enabled(): boolean {
    return this.config.rateLimit.perIp > 0 || this.config.rateLimit.perToken > 0;
  }

  middleware(): RequestHandler {
    const { perIp, perToken, periodSeconds } = this.config.rateLimit;
    return (req, res, next) => {
      if (req.path.startsWith('/-/')) return next();
      const limits = new Map<string, number>();
      if (perIp > 0) limits.set(this.secrets.digest(`rate-ip\u0000${req.ip ?? ''}`), perIp);
      const credential = perToken > 0 ? credentialOf(req) : undefined;
      if (credential) limits.set(this.secrets.digest(`rate-token\u0000${credential}`), perToken);
      if (limits.size === 0) return next();
      this.counters
        .hit([...limits.keys()], periodSeconds)
        .then((counts) => {
          const over = counts.filter((c) => c.requests > (limits.get(c.key) ?? Infinity));
          if (++this.sincePrune >= 1000) {
            this.sincePrune = 0;
            void this.counters
              .prune(periodSeconds)
              .catch((e: unknown) => this.logger.warn('rate limit prune failed', { error: e instanceof Error ? e.message : String(e) }));
          }
          if (over.length === 0) return next();
          const retryAfter = Math.max(...over.map((c) => c.resetIn));
          writeErrorResponse(res, 429, { message: '429 Too Many Requests' }, { 'Retry-After': String(retryAfter) });
        })
        .catch((e: unknown) => {
          this.logger.warn('rate limit count failed', { error: e instanceof Error ? e.message : String(e) });
          next();
        });
    };
  }
}
