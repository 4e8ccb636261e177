import { applyDecorators } from '@nestjs/common';
import { ApiProperty } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsOptional, ValidateBy, ValidationOptions } from 'class-validator';
import { BadRequest } from '../errors/domain-errors';
import { MAX_INT } from '../params/params';

/**
 * Field decorators for request DTOs. Each one declares the OpenAPI property, converts GitLab's loose
 * habits (string booleans, integer ids as strings, comma lists, an array where a scalar is expected)
 * and validates, in one line per field:
 *
 *   export class CreateMilestoneDto {
 *     @Str({ required: true }) title!: string;
 *     @Str() description?: string;
 *     @DateOnly() due_date?: string;
 *   }
 *
 * `null` means "not given" (clients resend unset fields as null), except on fields declared
 * `clearable`, where `null` or a blank value is kept as `null` ("clear it": `due_date: null`). A missing required field is `400 (Bad request) "x" not given`; a value of the wrong type or
 * format is `400 (Bad request) "x" is invalid` (see validation.pipe.ts). Property names are the wire
 * names (snake_case), so services read `dto.due_date` exactly as clients send it.
 */

/** The constraint name that the pipe maps to `"x" not given`. */
export const REQUIRED = 'gitlabRequired';
/** The constraint name that the pipe maps to `"x" is invalid`. */
export const INVALID = 'gitlabInvalid';
/** The constraint name that the pipe maps to the field map `{"x": ["is too long (maximum is N characters)"]}`. */
export const TOO_LONG = 'gitlabTooLong';

export interface FieldOptions {
  /** Absent, null or blank → `"x" not given`. */
  required?: boolean;
  /** `null` or a blank value means "clear it" and is kept as `null` (otherwise null is "not given"). */
  clearable?: boolean;
  /** With `required`: a blank string counts as given (only absent or null is `"x" not given`). */
  blank?: boolean;
  /** The exact 400 message for a bad value, where GitLab has its own (default `"x" is invalid`). */
  invalidMessage?: string;
  description?: string;
  /**
   * On a `@FieldMapErrors()` DTO: the field-map message for a bad value of this field (GitLab's model
   * message, e.g. `is not a number`); `is invalid` when not given. See `invalidFields`.
   */
  invalid?: string;
}

const TRUE = /^(true|t|1|yes|y|on)$/i;
const FALSE = /^(false|f|0|no|n|off)$/i;
const INT = /^[+-]?\d{1,15}$/;
/** Longest search term any list accepts (a longer one is `400 "search" is invalid`, never a slow scan). */
export const MAX_SEARCH_LENGTH = 255;

/** Sentinel left by a transform when the input cannot be converted: the validator then fails. */
const BAD = Symbol('invalid input');

function lastScalar(value: unknown): unknown {
  return Array.isArray(value) ? value[value.length - 1] : value;
}

/** Wraps a field's conversion: null (and, on clearable fields, a blank string) handled alike everywhere. */
function convert(opts: FieldOptions, fn: (v: unknown) => unknown): PropertyDecorator {
  return applyDecorators(
    Transform(({ value }) => {
      if (value === null) return opts.clearable ? null : undefined;
      if (opts.clearable && typeof value === 'string' && value.trim() === '') return null;
      return fn(value);
    }),
    fieldMapMessage(opts),
  );
}

function presence(opts: FieldOptions): PropertyDecorator {
  if (!opts.required) return IsOptional();
  return ValidateBy({
    name: REQUIRED,
    validator: {
      validate: (v: unknown) => v !== undefined && v !== null && (!!opts.blank || !(typeof v === 'string' && v.trim() === '')),
    },
  });
}

function check(test: (v: unknown) => boolean, opts: FieldOptions = {}, validationOptions?: ValidationOptions): PropertyDecorator {
  // the constraint's message is empty unless the field names GitLab's own (the pipe then answers with it)
  if (opts.invalidMessage !== undefined) validationOptions = { ...validationOptions, message: opts.invalidMessage };
  return ValidateBy({ name: INVALID, validator: { validate: (v: unknown) => v !== BAD && test(v) } }, validationOptions);
}

function api(type: unknown, opts: FieldOptions, extra: Record<string, unknown> = {}): PropertyDecorator {
  const nullable = opts.clearable ? { nullable: true } : {}; // null clears the field (OpenAPI document)
  return ApiProperty({ type: type as never, required: !!opts.required, description: opts.description, ...nullable, ...extra });
}

/**
 * A string (numbers and booleans are taken as their text; of an array, the last item). No NUL bytes,
 * unless `allowNul`: then the service decides (a search term answers `400 Bad request - invalid
 * characters in input`, as PostgreSQL's refusal did).
 */
export function Str(
  opts: FieldOptions & {
    trim?: boolean;
    max?: number;
    /** The column's length: a longer value is 400 `{"x": ["is too long (maximum is N characters)"]}` (GitLab's model message). */
    maxLength?: number;
    enum?: readonly string[];
    allowNul?: boolean;
  } = {},
): PropertyDecorator {
  const test = (v: unknown) =>
    typeof v === 'string' &&
    (opts.allowNul || !v.includes('\0')) &&
    (opts.max === undefined || v.length <= opts.max) &&
    (opts.enum === undefined || opts.enum.includes(v));
  const maxLength = opts.maxLength;
  return applyDecorators(
    api(String, opts, { ...(opts.enum ? { enum: [...opts.enum] } : {}), ...(maxLength !== undefined ? { maxLength } : {}) }),
    ...(maxLength === undefined
      ? []
      : [
          ValidateBy({
            name: TOO_LONG,
            constraints: [maxLength],
            validator: {
              validate: (v: unknown) => typeof v !== 'string' || v.length <= maxLength,
              defaultMessage: () => `is too long (maximum is ${maxLength} characters)`,
            },
          }),
        ]),
    convert(opts, (value) => {
      const v = lastScalar(value);
      // `[null]` is null too (it reached the services as null: `bio: [null]` → 500)
      if (v === undefined || v === null) return v === null && opts.clearable ? null : undefined;
      if (typeof v === 'number' || typeof v === 'boolean') return String(v);
      if (typeof v !== 'string') return BAD;
      return opts.trim ? v.trim() : v;
    }),
    presence(opts),
    check(test, opts),
  );
}

const isBoolean = (v: unknown) => typeof v === 'boolean';

/** true/false/1/0/yes/no/on/off in any case, or a JSON boolean. A blank value is absent. */
export function Bool(opts: FieldOptions = {}): PropertyDecorator {
  return applyDecorators(
    api(Boolean, opts),
    convert(opts, (value) => {
      const v = lastScalar(value);
      if (v === undefined || v === null || v === '') return undefined;
      if (typeof v === 'boolean') return v;
      if (typeof v === 'number') return v === 1 ? true : v === 0 ? false : BAD;
      if (typeof v !== 'string') return BAD;
      const s = v.trim();
      return TRUE.test(s) ? true : FALSE.test(s) ? false : BAD;
    }),
    presence(opts),
    check(isBoolean, opts),
  );
}

/** An integer, from a JSON number or a string of digits. A blank value is absent. */
/** `zeroIsNull`: 0 means "clear it" too (`assignee_id=0` unassigns). */
export function Int(opts: FieldOptions & { min?: number; max?: number; zeroIsNull?: boolean } = {}): PropertyDecorator {
  const test = (v: unknown) => typeof v === 'number' && (opts.min === undefined || v >= opts.min) && (opts.max === undefined || v <= opts.max);
  return applyDecorators(
    api('integer', opts),
    convert(opts, (value) => {
      const n = toInt(lastScalar(value));
      return opts.zeroIsNull && n === 0 ? null : n;
    }),
    presence(opts),
    check(test, opts),
  );
}

function toInt(v: unknown): unknown {
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v === 'number') return Number.isSafeInteger(v) ? v : BAD;
  if (typeof v === 'string' && INT.test(v.trim())) return Number(v.trim());
  return BAD;
}

function toList(value: unknown): unknown {
  if (value === undefined || value === null) return undefined;
  const items = Array.isArray(value) ? value : [value];
  const out: string[] = [];
  for (const item of items) {
    if (item === null || item === undefined) continue;
    if (typeof item !== 'string' && typeof item !== 'number') return BAD;
    for (const part of String(item).split(',')) {
      const t = part.trim();
      if (t) out.push(t);
    }
  }
  return out;
}

const isStringList = (v: unknown) => Array.isArray(v) && v.every((s) => typeof s === 'string' && !s.includes('\0'));

/** Repeated parameters, `name[]`, a JSON array or a comma-separated string; items trimmed, blanks dropped. */
export function List(opts: FieldOptions = {}): PropertyDecorator {
  return applyDecorators(api([String], opts), convert(opts, toList), presence(opts), check(isStringList, opts));
}

/** Like `List`, of integers (by default within PostgreSQL's int range, 0..2^31-1). */
export function IntList(opts: FieldOptions & { min?: number; max?: number } = {}): PropertyDecorator {
  const min = opts.min ?? 0;
  const max = opts.max ?? MAX_INT;
  const test = (v: unknown) => Array.isArray(v) && v.every((n) => Number.isSafeInteger(n) && n >= min && n <= max);
  return applyDecorators(
    api(['integer'], opts),
    convert(opts, (value) => {
      const list = toList(value);
      if (!Array.isArray(list)) return list;
      return list.every((s) => INT.test(String(s))) ? list.map(Number) : BAD;
    }),
    presence(opts),
    check(test, opts),
  );
}

/** An ISO 8601 date or date-time (years 0001–9999), kept as a `Date`. */
export function DateTime(opts: FieldOptions = {}): PropertyDecorator {
  return applyDecorators(
    api(String, opts, { format: 'date-time' }),
    convert(opts, (value) => {
      const v = lastScalar(value);
      if (v === undefined || v === null || v === '') return undefined;
      return parseIsoDate(v);
    }),
    presence(opts),
    check((v) => v instanceof Date, opts),
  );
}

/** A calendar date `YYYY-MM-DD`, kept as that string. */
export function DateOnly(opts: FieldOptions = {}): PropertyDecorator {
  return applyDecorators(
    api(String, opts, { format: 'date' }),
    convert(opts, (value) => {
      const v = lastScalar(value);
      if (v === undefined || v === null) return undefined;
      if (typeof v !== 'string') return BAD;
      const s = v.trim();
      if (s === '') return '';
      const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
      if (!m) return BAD;
      const d = new Date(Date.UTC(+m[1], +m[2] - 1, +m[3]));
      return d.getUTCMonth() === +m[2] - 1 && d.getUTCDate() === +m[3] && +m[1] >= 1 ? s : BAD;
    }),
    presence(opts),
    check((v) => typeof v === 'string', opts),
  );
}

/**
 * A search term or name looked up in the database, from a field declared `allowNul`: a NUL byte, which
 * PostgreSQL cannot store or compare, answers `400 Bad request - invalid characters in input`.
 */
export function lookupText(value: string): string {
  if (value.includes('\0')) throw new BadRequest('invalid characters in input');
  return value;
}

/** Any JSON value (a hash of strings, say); the service checks its shape. */
export function Raw(opts: FieldOptions = {}): PropertyDecorator {
  return applyDecorators(
    api(Object, opts),
    convert(opts, (v) => v),
    presence(opts),
    check(() => true),
  );
}

const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?)?$/i;

/** Parses an ISO 8601 date or date-time exactly (no `Date.parse` guessing); BAD when it is not one. */
export function parseIsoDate(v: unknown): Date | typeof BAD {
  if (typeof v !== 'string') return BAD;
  const m = ISO.exec(v.trim());
  if (!m) return BAD;
  const [, y, mo, d, h = '0', mi = '0', s = '0', frac = '0', tz] = m;
  const year = +y;
  if (year < 1 || +mo < 1 || +mo > 12 || +d < 1 || +d > 31 || +h > 23 || +mi > 59 || +s > 59) return BAD;
  const ms = Math.round(Number('0.' + frac) * 1000);
  let t = Date.UTC(year, +mo - 1, +d, +h, +mi, +s, ms);
  const check = new Date(Date.UTC(year, +mo - 1, +d));
  if (check.getUTCDate() !== +d) return BAD;
  if (tz && tz.toUpperCase() !== 'Z') {
    const sign = tz[0] === '-' ? -1 : 1;
    const digits = tz.slice(1).replace(':', '');
    const offset = (+digits.slice(0, 2) * 60 + +(digits.slice(2) || '0')) * sign;
    t -= offset * 60_000;
  }
  const date = new Date(t);
  if (year < 100) date.setUTCFullYear(year);
  return date;
}

/**
 * A database id (1..2^31-1). `clearable` with `zeroIsNull` for references clients unset with
 * `assignee_id=`, `0` or null.
 */
export function Id(opts: FieldOptions & { zeroIsNull?: boolean } = {}): PropertyDecorator {
  return Int({ ...opts, min: 1, max: MAX_INT });
}

const FIELD_MAP = Symbol('gitlab:fieldMapErrors');
const INVALID_FIELDS = Symbol('gitlab:invalidFields');

/**
 * Class decorator for the DTOs of resources where GitLab answers a badly typed value with a field
 * map (`{"message":{"issues_enabled":["is invalid"]}}`, as projects and groups do) rather than
 * `"x" is invalid`: the pipe does not throw for those fields, it leaves them unset and records them;
 * the service merges `invalidFields(dto)` into its own validation map. Missing required fields are
 * still `"x" not given`.
 */
export function FieldMapErrors(): ClassDecorator {
  return (target) => {
    Object.defineProperty(target, FIELD_MAP, { value: true });
  };
}

export function usesFieldMap(cls: unknown): boolean {
  return !!(cls as Record<symbol, unknown>)[FIELD_MAP];
}

/** Records the fields that failed conversion on a `@FieldMapErrors()` DTO (called by the pipe). */
export function markInvalid(dto: object, fields: string[]): void {
  Object.defineProperty(dto, INVALID_FIELDS, { value: fields, enumerable: false });
}

/**
 * `{field: ['is invalid']}` (or the field's own `invalid` message) for every field of a
 * `@FieldMapErrors()` DTO that failed conversion.
 */
export function invalidFields(dto: object): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const f of ((dto as Record<symbol, unknown>)[INVALID_FIELDS] as string[] | undefined) ?? []) {
    out[f] = [messageFor(dto, f) ?? 'is invalid'];
  }
  return out;
}

/** Where a DTO class's prototype keeps its fields' `invalid` messages (an own map per class). */
const MESSAGES = Symbol('gitlab:invalidMessages');

function fieldMapMessage(opts: FieldOptions): PropertyDecorator {
  return (target, key) => {
    if (opts.invalid === undefined) return;
    const proto = target as Record<symbol, Record<string | symbol, string>>;
    if (!Object.prototype.hasOwnProperty.call(proto, MESSAGES)) Object.defineProperty(proto, MESSAGES, { value: {} });
    proto[MESSAGES][key] = opts.invalid;
  };
}

/** The `invalid` message declared for a field, looked up along the DTO's class chain. */
function messageFor(dto: object, field: string): string | undefined {
  for (let p = Object.getPrototypeOf(dto) as object | null; p; p = Object.getPrototypeOf(p) as object | null) {
    if (!Object.prototype.hasOwnProperty.call(p, MESSAGES)) continue;
    const message = (p as Record<symbol, Record<string, string>>)[MESSAGES][field];
    if (message !== undefined) return message;
  }
  return undefined;
}
