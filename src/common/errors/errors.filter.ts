import { ArgumentsHost, Catch, ExceptionFilter, HttpException } from '@nestjs/common';
import type { Request, Response } from 'express';
import { Logger } from '../logging/logger';
import { DomainError, ServiceUnavailable } from './domain-errors';
import { errorBody, statusMessage, writeErrorResponse } from './error-response';

const INPUT_ERRORS: Record<string, string> = {
  '22021': 'invalid characters in input',
  '22P05': 'invalid characters in input',
  '22P02': 'invalid input syntax',
  '22003': 'number out of range',
  '22007': 'invalid date or time',
  '22008': 'date or time out of range',
};

/**
 * The one mapping from errors to GitLab v3 bodies: a string `message` always begins with the status
 * (errorBody). Unknown errors: 500, logged with the request id.
 */
@Catch()
export class ErrorsFilter implements ExceptionFilter {
  constructor(private readonly logger: Logger) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const ctx = host.switchToHttp();
    const req = ctx.getRequest<Request>();
    const res = ctx.getResponse<Response>();
    const { status, body, headers } = this.map(exception, req);
    writeErrorResponse(res, status, body, headers);
  }

  map(exception: unknown, req: Request): { status: number; body: unknown; headers?: Record<string, string> } {
    if (exception instanceof ServiceUnavailable) {
      const failure = exception.failure;
      this.logger.error('service unavailable', {
        request_id: (req as Request & { id?: string }).id,
        method: req.method,
        path: req.path,
        reason: exception.detail,
        error: failure instanceof Error ? (failure.stack ?? failure.message) : String(failure),
      });
    }
    if (exception instanceof DomainError) {
      // every domain error's message starts with its status, whatever its thrower wrote (decision 32)
      return { status: exception.status, body: errorBody(exception.status, exception.body()), headers: exception.headers() };
    }
    if (exception instanceof HttpException) {
      const status = exception.getStatus();
      if (status < 500) return { status, body: { message: statusMessage(status) } };
    }
    const pgCode = (exception as { driverError?: { code?: string }; code?: string })?.driverError?.code;
    if (pgCode === '57014') {
      // statement_timeout (DB_STATEMENT_TIMEOUT): an answer, not a hang
      return { status: 503, body: { message: '503 Service Unavailable - the database did not answer in time' } };
    }
    if (pgCode === '40P01' || pgCode === '40001') {
      // a deadlock or serialization failure between concurrent transactions: nothing was written, and
      // the same request sent again succeeds — a transient answer the client can retry, not a 500
      this.logger.warn('transaction aborted by a concurrent one', {
        request_id: (req as Request & { id?: string }).id,
        method: req.method,
        path: req.path,
        code: pgCode,
      });
      return {
        status: 503,
        body: { message: '503 Service Unavailable - the request collided with a concurrent change, try again' },
        headers: { 'Retry-After': '1' },
      };
    }
    if (pgCode && INPUT_ERRORS[pgCode]) {
      // Input PostgreSQL cannot take (a NUL byte, an out-of-range number): the caller's fault, not ours.
      return { status: 400, body: { message: `400 Bad request - ${INPUT_ERRORS[pgCode]}` } };
    }
    const e = exception as { status?: number; type?: string };
    if (e && typeof e.status === 'number' && e.status >= 400 && e.status < 500) {
      // body-parser / multer errors that reach a handler
      return { status: e.status, body: { message: statusMessage(e.status) } };
    }
    this.logger.error('unhandled error', {
      request_id: (req as Request & { id?: string }).id,
      method: req.method,
      path: req.path,
      error: exception instanceof Error ? (exception.stack ?? exception.message) : String(exception),
    });
    return { status: 500, body: { message: '500 Internal Server Error', request_id: (req as Request & { id?: string }).id } };
  }
}
