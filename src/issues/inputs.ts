import { InvalidAttribute, ValidationFailed } from '../common/errors/domain-errors';
import { Params } from '../common/params/params';

const ISO_TIME = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?\s*(?:Z|[+-]\d{2}(?::?\d{2})?)?)?$/i;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** An ISO 8601 timestamp input (`created_at`, `updated_at`); anything else is `"name" is invalid`. */
export function readTimestamp(p: Params, name: string): Date | undefined {
  const raw = p.string(name)?.trim();
  if (raw === undefined || raw === '') return undefined;
  if (!ISO_TIME.test(raw)) throw new InvalidAttribute(name);
  const d = new Date(/^\d{4}-\d{2}-\d{2}$/.test(raw) ? `${raw}T00:00:00Z` : raw.replace(' ', 'T'));
  if (Number.isNaN(d.getTime()) || d.getUTCFullYear() < 1970 || d.getUTCFullYear() > 9999) throw new InvalidAttribute(name);
  return d;
}

/** A calendar date `YYYY-MM-DD`; `null` or blank clears it (returns null); absent returns undefined. */
export function readDate(p: Params, name: string): string | null | undefined {
  if (!Object.prototype.hasOwnProperty.call(p.raw, name)) return undefined;
  const v = p.raw[name];
  if (v === null || (typeof v === 'string' && v.trim() === '')) return null;
  const raw = p.string(name)?.trim() ?? '';
  const m = DATE.exec(raw);
  if (!m) throw new InvalidAttribute(name);
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const date = new Date(Date.UTC(y, mo - 1, d));
  if (date.getUTCFullYear() !== y || date.getUTCMonth() !== mo - 1 || date.getUTCDate() !== d) throw new InvalidAttribute(name);
  return raw;
}

const MAX_INT = 2147483647;

/** A database id input (1 .. 2^31-1); anything else is `"name" is invalid`. */
export function readId(p: Params, name: string, opts: { required?: boolean } = {}): number | undefined {
  const n = p.int(name, opts);
  if (n === undefined) return undefined;
  if (n < 1 || n > MAX_INT) throw new InvalidAttribute(name);
  return n;
}

/** Integers for filters on int columns (`iid`): in range or `"name" is invalid`. */
export function readIntFilter(p: Params, name: string): number[] | undefined {
  const values = p.intArray(name);
  if (values?.some((v) => v < 0 || v > MAX_INT)) throw new InvalidAttribute(name);
  return values;
}

/**
 * An optional reference id that may be cleared: absent → undefined; null, blank or 0 → null
 * (clients unassign with `assignee_id=` or `0`); otherwise a positive integer.
 */
export function readClearableId(p: Params, name: string): number | null | undefined {
  if (!Object.prototype.hasOwnProperty.call(p.raw, name)) return undefined;
  const v = p.raw[name];
  if (v === null || (typeof v === 'string' && v.trim() === '')) return null;
  const n = p.int(name);
  if (n === undefined || n === 0) return null;
  if (n < 0 || n > MAX_INT) throw new InvalidAttribute(name);
  return n;
}

/** A title: required on create, never blank, at most 255 characters. */
export function readTitle(p: Params, opts: { required: boolean }): string | undefined {
  const title = opts.required ? p.requireString('title').trim() : p.string('title')?.trim();
  if (title === undefined) return undefined;
  if (title === '') throw new ValidationFailed({ title: ["can't be blank"] });
  if (title.length > 255) throw new ValidationFailed({ title: ['is too long (maximum is 255 characters)'] });
  return title;
}

/**
 * PostgreSQL text cannot hold NUL characters: an input carrying one is `"name" is invalid` (400)
 * rather than a database error. Checks every string (and strings in arrays) the request sent.
 */
export function rejectNul(p: Params): void {
  for (const [name, value] of Object.entries(p.raw)) {
    const values = Array.isArray(value) ? value : [value];
    if (values.some((v) => typeof v === 'string' && v.includes('\u0000'))) throw new InvalidAttribute(name);
  }
}
