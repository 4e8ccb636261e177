import { createParamDecorator, ExecutionContext, Injectable, PipeTransform } from '@nestjs/common';
import type { Request } from 'express';
import { InvalidAttribute } from '../errors/domain-errors';

/** PostgreSQL's `integer` maximum: ids and iids beyond it cannot exist. */
export const MAX_INT = 2147483647;
/** An id in a path segment: digits only (no sign, no blanks), at most ten of them (see `parseId`). */
export const PATH_ID = /^\d{1,10}$/;

type Raw = Record<string, unknown>;

/**
 * Request inputs read alike from the query string, urlencoded or multipart forms and JSON bodies
 * (the body wins over the query string). `null` means "not given" (clients resend unset fields
 * as null). The global pipe turns them into the handler's DTO (common/dto); the guard reads its
 * credentials (`private_token`, `sudo`) from them with `string`.
 */
export class Params {
  constructor(readonly raw: Raw) {}

  static fromRequest(req: Request): Params {
    const body = req.body && typeof req.body === 'object' && !Array.isArray(req.body) ? (req.body as Raw) : {};
    const query = (req.query ?? {}) as Raw;
    const merged: Raw = {};
    for (const src of [query, body]) {
      for (const [k, v] of Object.entries(src)) {
        const key = k.endsWith('[]') ? k.slice(0, -2) : k;
        // JSON.parse keeps "__proto__" as an own key; assigning it would swap the prototype
        if (key !== '__proto__') merged[key] = v;
      }
    }
    return new Params(merged);
  }

  /** A string (numbers and booleans as their text; of an array, the last item); `"name" is invalid` for an object. */
  string(name: string): string | undefined {
    if (!Object.prototype.hasOwnProperty.call(this.raw, name)) return undefined;
    let v = this.raw[name];
    if (Array.isArray(v)) v = v[v.length - 1];
    if (v === undefined || v === null) return undefined;
    if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return String(v);
    throw new InvalidAttribute(name);
  }
}

/** Marks the handler parameter that the global `GitlabValidationPipe` turns into a DTO (or `Params`). */
export const INPUT = 'gitlab:input';

const InputParam = createParamDecorator((_: unknown, ctx: ExecutionContext): Record<string, unknown> => {
  const req = ctx.switchToHttp().getRequest<Request & { input_?: Record<string, unknown> }>();
  if (!req.input_) req.input_ = Params.fromRequest(req).raw;
  return req.input_;
});

/**
 * Handler parameter: the request's inputs (query string, form or JSON body alike), as the DTO class
 * the parameter is typed with — validated and converted by the global pipe (common/dto).
 */
export const Input = (): ParameterDecorator => InputParam(INPUT);

/** Reads a positive integer path id (digits only, 1..2^31-1); anything else is undefined. */
export function parseId(raw: string | undefined): number | undefined {
  if (raw === undefined || !PATH_ID.test(raw)) return undefined;
  const n = Number(raw);
  return n > 0 && n <= MAX_INT ? n : undefined;
}

/** The id the pipe hands on for a path segment that cannot name a row: no table has a row 0. */
export const NO_ROW = 0;

/**
 * `@Param('issue_id', IdParam) id: number`: a path id parsed at the edge. A segment that is not an
 * id (`abc`, `-1`, `1.5`, beyond PostgreSQL's integer) becomes `NO_ROW`, so the service looks it up
 * like any id of no row and answers its own `404 X Not Found` at the point it did before — after the
 * project is resolved, so `404 Project Not Found` still comes first.
 */
@Injectable()
export class IdParam implements PipeTransform<string, number> {
  transform(value: string): number {
    return parseId(value) ?? NO_ROW;
  }
}

/** A path segment naming a row by id or by name (a label's id or title): either part absent when it cannot. */
export interface IdOrName {
  id?: number;
  name?: string;
}

/**
 * `@Param('label_id', IdOrNameParam)`: the segment as an id (when it is one) and as a name (unless it
 * holds a NUL byte, which no stored name has and PostgreSQL cannot compare).
 */
@Injectable()
export class IdOrNameParam implements PipeTransform<string, IdOrName> {
  transform(value: string): IdOrName {
    return { id: parseId(value), name: value.includes('\u0000') ? undefined : value };
  }
}

/**
 * `@Param('user_id', NumberParam)`: the segment as JavaScript reads a number (`Number`), or null —
 * for the echo of `DELETE .../members/:user_id` on a non-member (`{"message":"Access revoked","id":…}`),
 * which repeats what the client sent (`1e3` → 1000, `1.5` → 1.5).
 */
@Injectable()
export class NumberParam implements PipeTransform<string, number | null> {
  transform(value: string): number | null {
    return Number(value) || null;
  }
}

/** A case-insensitive LIKE pattern matching `text` anywhere, with `%`, `_` and `\` taken literally. */
export function containsPattern(text: string): string {
  return `%${text.toLowerCase().replace(/[\\%_]/g, (c) => '\\' + c)}%`;
}
