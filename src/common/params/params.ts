import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';
import { InvalidAttribute, MissingAttribute } from '../errors/domain-errors';

type Raw = Record<string, unknown>;

const TRUE = /^(true|t|1|yes|y|on)$/i;
const FALSE = /^(false|f|0|no|n|off)$/i;
const INT = /^[+-]?\d{1,15}$/;

/**
 * Request inputs read alike from the query string, urlencoded or multipart forms and JSON bodies
 * (the body wins over the query string). `null` means "not given" (clients resend unset fields
 * as null). Readers throw the GitLab errors: missing → `"x" not given`, wrong type → `"x" is invalid`.
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

  /** The value, or undefined when absent or null. Arrays in a scalar position take their last item. */
  private value(name: string): unknown {
    if (!Object.prototype.hasOwnProperty.call(this.raw, name)) return undefined;
    const v = this.raw[name];
    return v === null ? undefined : v;
  }

  has(name: string): boolean {
    return this.value(name) !== undefined;
  }

  private scalar(name: string): string | number | boolean | undefined {
    let v = this.value(name);
    if (Array.isArray(v)) v = v[v.length - 1];
    if (v === undefined || v === null) return undefined;
    if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return v;
    throw new InvalidAttribute(name);
  }

  /** A string; with `required`, absence or a blank value is `"name" not given`. */
  string(name: string, opts: { required?: boolean; trim?: boolean } = {}): string | undefined {
    const v = this.scalar(name);
    if (v === undefined || (opts.required && String(v).trim() === '')) {
      if (opts.required) throw new MissingAttribute(name);
      return undefined;
    }
    const s = String(v);
    return opts.trim ? s.trim() : s;
  }

  requireString(name: string): string {
    return this.string(name, { required: true }) as string;
  }

  /** true/false/1/0/yes/no (any case); anything else is `"name" is invalid`. */
  bool(name: string, opts: { required?: boolean } = {}): boolean | undefined {
    const v = this.scalar(name);
    if (v === undefined || v === '') {
      if (opts.required) throw new MissingAttribute(name);
      return undefined;
    }
    if (typeof v === 'boolean') return v;
    const s = String(v).trim();
    if (TRUE.test(s)) return true;
    if (FALSE.test(s)) return false;
    throw new InvalidAttribute(name);
  }

  int(name: string, opts: { required?: boolean } = {}): number | undefined {
    const v = this.scalar(name);
    if (v === undefined || v === '') {
      if (opts.required) throw new MissingAttribute(name);
      return undefined;
    }
    if (typeof v === 'number' && Number.isSafeInteger(v)) return v;
    if (typeof v === 'string' && INT.test(v.trim())) return Number(v.trim());
    throw new InvalidAttribute(name);
  }

  /** Repeated parameters, `name[]`, JSON arrays or a comma-separated string; items trimmed, blanks dropped. */
  stringArray(name: string): string[] | undefined {
    const v = this.value(name);
    if (v === undefined) return undefined;
    const items = Array.isArray(v) ? v : [v];
    const out: string[] = [];
    for (const item of items) {
      if (item === null || item === undefined) continue;
      if (typeof item !== 'string' && typeof item !== 'number') throw new InvalidAttribute(name);
      for (const part of String(item).split(',')) {
        const t = part.trim();
        if (t) out.push(t);
      }
    }
    return out;
  }

  intArray(name: string): number[] | undefined {
    const items = this.stringArray(name);
    if (items === undefined) return undefined;
    return items.map((s) => {
      if (!INT.test(s)) throw new InvalidAttribute(name);
      return Number(s);
    });
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

/** Reads a positive integer path id; anything else is treated as absent (404 for the resource). */
export function parseId(raw: string | undefined): number | undefined {
  if (raw === undefined || !/^\d{1,10}$/.test(raw)) return undefined;
  const n = Number(raw);
  return n > 0 && n <= 2147483647 ? n : undefined;
}

/** A case-insensitive LIKE pattern matching `text` anywhere, with `%`, `_` and `\` taken literally. */
export function containsPattern(text: string): string {
  return `%${text.toLowerCase().replace(/[\\%_]/g, (c) => '\\' + c)}%`;
}
