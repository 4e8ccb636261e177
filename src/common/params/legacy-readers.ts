import { InvalidAttribute } from '../errors/domain-errors';
import { Params } from './params';

/*
 * Readers for the code still on `Params` (notes, until its own house refactor turns it to DTOs,
 * where `@DateTime()` and the NUL check of `@Str()` replace them). Moved here unchanged from the
 * former src/issues/inputs.ts; delete this file with its last caller.
 */

const ISO_TIME = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?\s*(?:Z|[+-]\d{2}(?::?\d{2})?)?)?$/i;

/** An ISO 8601 timestamp input (`created_at`, `updated_at`); anything else is `"name" is invalid`. */
export function readTimestamp(p: Params, name: string): Date | undefined {
  const raw = p.string(name)?.trim();
  if (raw === undefined || raw === '') return undefined;
  if (!ISO_TIME.test(raw)) throw new InvalidAttribute(name);
  const d = new Date(/^\d{4}-\d{2}-\d{2}$/.test(raw) ? `${raw}T00:00:00Z` : raw.replace(' ', 'T'));
  if (Number.isNaN(d.getTime()) || d.getUTCFullYear() < 1970 || d.getUTCFullYear() > 9999) throw new InvalidAttribute(name);
  return d;
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
