import { Injectable, NestMiddleware } from '@nestjs/common';
import express, { NextFunction, Request, Response } from 'express';
import { writeErrorResponse } from '../../common/errors/error-response';
import { jsonBodyParsed } from '../../common/http/http-pipeline';

// a full-trace PUT carries the whole trace (runners cap it at 4 MB by default; allow headroom)
const json = express.json({ limit: '32mb', type: ['application/json'], strict: false });
const urlencoded = express.urlencoded({ extended: true, limit: '32mb', parameterLimit: 200 });

/** `PATCH builds/:id/trace.txt` (any case, doubled slashes: as the router matches it): its body is the raw trace part. */
const TRACE_PATCH = /^\/+ci\/+api\/+v1\/+builds\/+[^/]+\/+trace\.txt\/*$/i;

/**
 * Bodies of the runner API: JSON (every runner call, DELETE included) and form bodies are parsed
 * here; trace parts and artifact uploads (multipart) are left to their handlers, which stream them.
 * A trace part is raw bytes whatever its Content-Type says: parsing it here would consume the stream
 * its handler then waits on (the request would never be answered).
 */
@Injectable()
export class RunnerApiBodyMiddleware implements NestMiddleware {
  use(req: Request, res: Response, next: NextFunction): void {
    if (req.method === 'PATCH' && TRACE_PATCH.test(req.originalUrl.split('?')[0])) return next();
    const done = (err?: unknown) => {
      if (!err) return next();
      const e = err as { type?: string; status?: number };
      if (e.type === 'entity.too.large') return writeErrorResponse(res, 413, { message: '413 Request Entity Too Large' });
      if (e.type === 'entity.too.deep') return writeErrorResponse(res, 400, { message: '400 Bad request - JSON body nested too deeply' });
      return writeErrorResponse(res, 400, { message: '400 Bad request - malformed JSON body' });
    };
    const type = (req.headers['content-type'] || '').toLowerCase();
    if (type.startsWith('application/json')) {
      return json(req, res, (err?: unknown) => done(jsonBodyParsed(req, err)));
    }
    if (type.startsWith('application/x-www-form-urlencoded')) return urlencoded(req, res, done);
    next();
  }
}
