import { Params } from '../params/params';

export const DEFAULT_PER_PAGE = 20;
export const MAX_PER_PAGE = 100;
const MAX_PAGE = 1_000_000_000;

export interface PageRequest {
  page: number;
  perPage: number;
  offset: number;
}

export type PageParams = Params | { page?: unknown; per_page?: unknown };

/**
 * `page` (default 1) and `per_page` (default 20, max 100); bad values fall back to the defaults.
 * `defaultPerPage`/`maxPerPage` are for the lists clients read whole (see `paginateAll`).
 */
export function pageRequest(params: PageParams, defaultPerPage = DEFAULT_PER_PAGE, maxPerPage = MAX_PER_PAGE): PageRequest {
  const raw = (params instanceof Params ? params.raw : params) as Record<string, unknown>;
  const read = (name: string): number | undefined => {
    const v = raw[name];
    const s: unknown = Array.isArray(v) ? v[v.length - 1] : v;
    if (typeof s === 'number' && Number.isInteger(s)) return s;
    if (typeof s === 'string' && /^\d+$/.test(s.trim())) return Number(s.trim());
    return undefined;
  };
  // a huge page is past the end (an empty page), not page 1; clamped to keep the offset exact
  const page = Math.min(MAX_PAGE, Math.max(1, read('page') ?? 1));
  const asked = read('per_page');
  const perPage = asked !== undefined && asked >= 1 ? Math.min(asked, maxPerPage) : defaultPerPage;
  return { page, perPage, offset: (page - 1) * perPage };
}

/** A page of a list: services return it, the pagination interceptor writes the headers. */
export class Paginated<T> {
  constructor(
    readonly items: T[],
    readonly total: number,
    readonly page: PageRequest,
  ) {}

  map<U>(fn: (item: T) => U): Paginated<U> {
    return new Paginated(this.items.map(fn), this.total, this.page);
  }
}

/**
 * One page of a list held whole in memory (git-backed lists, a user's keys, a project's labels), with
 * the same `page`/`per_page` and headers as every list. `whole`: a list GitLab 8 answered unpaginated
 * and clients read from the first page only (tags, labels, keys ...): without `per_page` the first
 * page is the whole list (per_page = max(20, total)), and a `per_page` up to the total is honoured,
 * so the Link URLs (which carry that per_page) lead where they say.
 */
export function paginateAll<T>(items: T[], params: PageParams, opts: { whole?: boolean } = {}): Paginated<T> {
  const page = opts.whole ? pageRequest(params, Math.max(DEFAULT_PER_PAGE, items.length), Math.max(MAX_PER_PAGE, items.length)) : pageRequest(params);
  return new Paginated(items.slice(page.offset, page.offset + page.perPage), items.length, page);
}

const CREDENTIAL_PARAMS = new Set(['private_token', 'access_token', 'bearer_token']);

function encode(s: string): string {
  return encodeURIComponent(s).replace(/%20/g, '+');
}

/** Rails `to_query` style: keys sorted, arrays as `key[]=v`. */
function toQuery(params: Record<string, unknown>): string {
  const parts: string[] = [];
  for (const key of Object.keys(params).sort()) {
    const v = params[key];
    if (Array.isArray(v)) {
      for (const item of v) if (typeof item !== 'object') parts.push(`${encode(key)}%5B%5D=${encode(String(item))}`);
    } else if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') {
      parts.push(`${encode(key)}=${encode(String(v))}`);
    }
  }
  return parts.join('&');
}

/**
 * The spec's pagination headers. `Link` URLs are absolute (from EXTERNAL_URL), echo the request's
 * query parameters except credentials, and overwrite `page`/`per_page`.
 */
export function paginationHeaders(externalUrl: string, path: string, query: Record<string, unknown>, total: number, page: PageRequest): Record<string, string> {
  const totalPages = Math.ceil(total / page.perPage);
  const base: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(query)) {
    const key = k.endsWith('[]') ? k.slice(0, -2) : k;
    if (!CREDENTIAL_PARAMS.has(key)) base[key] = v;
  }
  const url = (p: number) => `${externalUrl}${path}?${toQuery({ ...base, page: String(p), per_page: String(page.perPage) })}`;
  const links: string[] = [];
  if (page.page > 1) links.push(`<${url(page.page - 1)}>; rel="prev"`);
  if (page.page < totalPages) links.push(`<${url(page.page + 1)}>; rel="next"`);
  links.push(`<${url(1)}>; rel="first"`);
  links.push(`<${url(totalPages)}>; rel="last"`);
  return {
    Link: links.join(', '),
    'X-Total': String(total),
    'X-Total-Pages': String(totalPages),
    'X-Per-Page': String(page.perPage),
    'X-Page': String(page.page),
    'X-Next-Page': page.page < totalPages ? String(page.page + 1) : '',
    'X-Prev-Page': page.page > 1 ? String(page.page - 1) : '',
  };
}
