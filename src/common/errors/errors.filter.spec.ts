import { BadRequestException } from '@nestjs/common';
import type { Request } from 'express';
import { RunnerApiError } from '../../ci/builds/builds.service';
import { Logger } from '../logging/logger';
import { Conflict, DomainError, ErrorWithBody, Forbidden, MethodNotAllowed, MissingAttribute, NotFound, OAuthError, ValidationFailed } from './domain-errors';
import { errorBody } from './error-response';
import { ErrorsFilter } from './errors.filter';

/** Errors rule 3 and ../shared/docs/spec-decisions.md #32: a string `message` begins with the status; the body is an object with `message`. */
describe('ErrorsFilter', () => {
  const filter = new ErrorsFilter(new Logger({ logLevel: 'silent' }));
  const req = { method: 'GET', path: '/x' } as Request;
  const map = (e: unknown) => filter.map(e, req);

  it('puts the status before a message that lacks it, whoever threw it', () => {
    expect(map(new ErrorWithBody(400, { message: 'Branch already exists' })).body).toEqual({ message: '400 Branch already exists' });
    expect(map(new Conflict('Release already exists')).body).toEqual({ message: '409 Release already exists' });
    expect(map(new Conflict('Label already exists')).body).toEqual({ message: '409 Label already exists' });
    expect(map(new Conflict('Email has already been taken'))).toMatchObject({ status: 409, body: { message: '409 Email has already been taken' } });
  });

  it('leaves a message that already begins with its status as it is', () => {
    expect(map(new NotFound('Branch')).body).toEqual({ message: '404 Branch Not Found' });
    expect(map(new MissingAttribute('token')).body).toEqual({ message: '400 (Bad request) "token" not given' });
    expect(map(new Forbidden(undefined, '403 Forbidden: Must be admin to use sudo')).body).toEqual({ message: '403 Forbidden: Must be admin to use sudo' });
    expect(map(new Forbidden(undefined, '403 Your project limit is 10 projects! Please contact your administrator to increase it')).body).toEqual({
      message: '403 Your project limit is 10 projects! Please contact your administrator to increase it',
    });
  });

  it('turns a bare array or string body, or an array message, into an object with a string message', () => {
    expect(map(new ErrorWithBody(403, ['Your project limit is 3 projects! Please contact your administrator to increase it'])).body).toEqual({
      message: '403 Your project limit is 3 projects! Please contact your administrator to increase it',
    });
    expect(map(new ErrorWithBody(422, 'Unprocessable')).body).toEqual({ message: '422 Unprocessable' });
    expect(map(new ErrorWithBody(409, { message: ['Cannot Create: This merge request already exists: ["t"]'] })).body).toEqual({
      message: '409 Cannot Create: This merge request already exists: ["t"]',
    });
  });

  it('a transaction aborted by a deadlock or a serialization failure is a 503 to retry, not a 500', () => {
    for (const code of ['40P01', '40001']) {
      expect(map(Object.assign(new Error('deadlock detected'), { driverError: { code } }))).toEqual({
        status: 503,
        body: { message: '503 Service Unavailable - the request collided with a concurrent change, try again' },
        headers: { 'Retry-After': '1' },
      });
    }
    expect(map(Object.assign(new Error('boom'), { driverError: { code: '42P01' } })).status).toBe(500);
  });

  it('keeps a validation field map as a map (rule 2)', () => {
    expect(map(new ValidationFailed({ title: ['is invalid'] })).body).toEqual({ message: { title: ['is invalid'] } });
  });

  it('a conflict on named fields is the string naming the first field (decisions 24 and 32)', () => {
    expect(map(new Conflict({ name: ['has already been taken'], path: ['has already been taken'] })).body).toEqual({
      message: '409 Name has already been taken',
    });
    expect(map(new Conflict({ path: ['has already been taken'] })).body).toEqual({ message: '409 Path has already been taken' });
    expect(map(new Conflict()).body).toEqual({ message: '409 Conflict' });
  });

  it("leaves bodies that are not GitLab messages alone: OAuth errors, the runner API's {} and {error}", () => {
    expect(map(new OAuthError(400, 'invalid_grant', 'bad')).body).toEqual({ error: 'invalid_grant', error_description: 'bad' });
    expect(map(new RunnerApiError(404, {})).body).toEqual({});
    expect(map(new RunnerApiError(416, { error: '416 Range Not Satisfiable' })).body).toEqual({ error: '416 Range Not Satisfiable' });
  });

  it('answers HTTP exceptions and unknown errors with a status message', () => {
    expect(map(new BadRequestException('x'))).toEqual({ status: 400, body: { message: '400 Bad request' } });
    expect(map(new Error('boom'))).toMatchObject({ status: 500, body: { message: '500 Internal Server Error' } });
  });

  it('every domain error class answers an object whose string message starts with its status', () => {
    class Odd extends DomainError {
      readonly status = 418;
      body() {
        return { message: "I'm a teapot" };
      }
    }
    for (const e of [new Odd(), new NotFound(), new Forbidden('x'), new Conflict('y'), new MethodNotAllowed('Tag name invalid')]) {
      const { status, body } = map(e);
      expect((body as { message: string }).message).toMatch(new RegExp(`^${status} `));
    }
  });
});

describe('errorBody', () => {
  it('is idempotent and leaves success statuses and empty bodies alone', () => {
    const once = errorBody(409, { message: 'Label already exists' });
    expect(errorBody(409, once)).toEqual(once);
    expect(errorBody(304, undefined)).toBeUndefined();
    expect(errorBody(200, 'x')).toBe('x');
  });
});
