import { Injectable } from '@nestjs/common';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { toDto } from '../../common/dto/validation.pipe';
import { ErrorsFilter } from '../../common/errors/errors.filter';
import { writeErrorResponse } from '../../common/errors/error-response';
import { logAtDebug } from '../../common/http/http-pipeline';
import { Logger } from '../../common/logging/logger';
import { Params } from '../../common/params/params';
import { RunnerTokenDto } from './dto/runner-api.dto';
import { RunnerApiBodyMiddleware } from './runner-api-body.middleware';
import { RunnerApiService } from './runner-api.service';

const PATH = '/ci/api/v1/builds/register';

/**
 * The runners' poll, `POST /ci/api/v1/builds/register`, answered before Nest's router — as GitLab
 * answers it in Workhorse, in front of Rails. Every runner calls it every few seconds whether or not
 * there is work, so it is the server's hottest route by far, and nearly always answers `404 {}`.
 * Profiled under 50 polling runners, most of its CPU went to the framework rather than to the poll:
 * Express's router walking ~250 route layers, the guard/interceptor/pipe chain (rxjs), and
 * class-validator building the DTO.
 *
 * Same behaviour as the controller route (which stays for the OpenAPI document and as the fallback
 * for methods this does not take): the runner API's body parser, the same DTO (`toDto`, as the
 * global pipe does), the same service call, and the one error mapping (ErrorsFilter.map). It runs
 * after the HTTP pipeline (request id, log line, metrics, URL normalisation, rate limit).
 */
@Injectable()
export class RunnerPollRoute {
  private readonly body = new RunnerApiBodyMiddleware();
  private readonly errors: ErrorsFilter;

  constructor(
    private readonly api: RunnerApiService,
    logger: Logger,
  ) {
    this.errors = new ErrorsFilter(logger);
  }

  middleware(): RequestHandler {
    return (req: Request, res: Response, next: NextFunction) => {
      if (req.method !== 'POST' || req.path !== PATH) return next();
      // the metrics' route label, as Express sets it for routed requests
      (req as Request & { route?: { path: string } }).route = { path: PATH };
      this.body.use(req, res, () => void this.answer(req, res));
    };
  }

  private async answer(req: Request, res: Response): Promise<void> {
    try {
      const dto = toDto(RunnerTokenDto, Params.fromRequest(req));
      const payload = await this.api.requestBuild(dto.token, dto.info);
      if (!payload) {
        logAtDebug(req); // the empty poll, every few seconds per runner: not worth an info line
        return writeErrorResponse(res, 404, {});
      }
      const json = JSON.stringify(payload);
      res.statusCode = 201;
      res.setHeader('Content-Type', 'application/json');
      res.setHeader('Content-Length', Buffer.byteLength(json));
      res.end(json);
    } catch (e) {
      const { status, body, headers } = this.errors.map(e, req);
      writeErrorResponse(res, status, body, headers);
    }
  }
}
