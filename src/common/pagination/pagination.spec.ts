import { Params } from '../params/params';
import { DEFAULT_PER_PAGE, MAX_PER_PAGE, Paginated, paginateAll, paginationHeaders, pageRequest } from './pagination';

/** ../shared/docs/gitlab-compat.md §4 (kaminari 0.16 + GitLab's pagination helper) and ../shared/docs/spec-decisions.md's Link override. */
describe('pageRequest', () => {
  it('defaults to page 1 of 20', () => {
    expect(pageRequest({})).toEqual({ page: 1, perPage: DEFAULT_PER_PAGE, offset: 0 });
    expect(DEFAULT_PER_PAGE).toBe(20);
  });

  it('reads strings and numbers, from a DTO-like object or Params', () => {
    expect(pageRequest({ page: '3', per_page: '10' })).toEqual({ page: 3, perPage: 10, offset: 20 });
    expect(pageRequest({ page: 2, per_page: 5 })).toEqual({ page: 2, perPage: 5, offset: 5 });
    expect(pageRequest(new Params({ page: ' 4 ', per_page: '25' }))).toEqual({ page: 4, perPage: 25, offset: 75 });
  });

  it('takes 0, negative or non-numeric pages as page 1', () => {
    for (const page of ['0', '-1', 'abc', '', '1.5', null, true, {}]) {
      expect(pageRequest({ page }).page).toBe(1);
    }
  });

  it('takes 0 or non-numeric per_page as 20, and caps it at 100', () => {
    for (const per_page of ['0', 'abc', '', '-5']) expect(pageRequest({ per_page }).perPage).toBe(20);
    expect(pageRequest({ per_page: '100' }).perPage).toBe(100);
    expect(pageRequest({ per_page: '101' }).perPage).toBe(MAX_PER_PAGE);
    expect(pageRequest({ per_page: 100000 }).perPage).toBe(100);
  });

  it('uses the last value when a client repeats the parameter (clients re-append their own)', () => {
    expect(pageRequest({ page: ['1', '2'], per_page: ['50', '3'] })).toEqual({ page: 2, perPage: 3, offset: 3 });
  });

  it('treats a huge page as past the end, not as page 1, and keeps the offset exact', () => {
    const r = pageRequest({ page: '99999999999999', per_page: '100' });
    expect(r.page).toBeGreaterThan(1);
    expect(Number.isSafeInteger(r.offset)).toBe(true);
    expect(r.offset).toBe((r.page - 1) * 100);
  });
});

describe('paginationHeaders', () => {
  const BASE = 'http://www.example.com';

  it("writes GitLab's exact Link for one page (request spec: GET /issues?state=closed&per_page=3), without the token", () => {
    const h = paginationHeaders(BASE, '/api/v3/issues', { state: 'closed', per_page: '3', private_token: 'TOKEN' }, 2, pageRequest({ per_page: '3' }));
    expect(h.Link).toBe(
      '<http://www.example.com/api/v3/issues?page=1&per_page=3&state=closed>; rel="first", ' +
        '<http://www.example.com/api/v3/issues?page=1&per_page=3&state=closed>; rel="last"',
    );
    expect(h).toEqual({
      Link: h.Link,
      'X-Total': '2',
      'X-Total-Pages': '1',
      'X-Per-Page': '3',
      'X-Page': '1',
      'X-Next-Page': '',
      'X-Prev-Page': '',
    });
  });

  it('orders prev, next, first, last on a middle page, all absolute URLs', () => {
    const h = paginationHeaders(BASE, '/api/v3/projects/1/issues', { per_page: '2', page: '2' }, 5, pageRequest({ page: '2', per_page: '2' }));
    const rels = [...h.Link.matchAll(/<([^>]+)>; rel="(\w+)"/g)].map((m) => [m[2], new URL(m[1]).searchParams.get('page')]);
    expect(rels).toEqual([
      ['prev', '1'],
      ['next', '3'],
      ['first', '1'],
      ['last', '3'],
    ]);
    expect(h.Link.split(', ')).toHaveLength(4);
    expect(h['X-Next-Page']).toBe('3');
    expect(h['X-Prev-Page']).toBe('1');
    expect(h['X-Total-Pages']).toBe('3');
  });

  it('has no next on the last page and no prev on the first', () => {
    const last = paginationHeaders(BASE, '/api/v3/users', {}, 5, pageRequest({ page: '3', per_page: '2' }));
    expect(last.Link).not.toMatch(/rel="next"/);
    expect(last.Link).toMatch(/rel="prev"/);
    expect(last['X-Next-Page']).toBe('');
    const first = paginationHeaders(BASE, '/api/v3/users', {}, 5, pageRequest({ per_page: '2' }));
    expect(first.Link).not.toMatch(/rel="prev"/);
    expect(first.Link).toMatch(/rel="next"/);
  });

  it('with no results: 0 pages, and the last link has page=0', () => {
    const h = paginationHeaders(BASE, '/api/v3/projects', {}, 0, pageRequest({}));
    expect(h['X-Total']).toBe('0');
    expect(h['X-Total-Pages']).toBe('0');
    expect(h['X-Next-Page']).toBe('');
    expect(h.Link).toBe(
      '<http://www.example.com/api/v3/projects?page=1&per_page=20>; rel="first", ' + '<http://www.example.com/api/v3/projects?page=0&per_page=20>; rel="last"',
    );
  });

  it('echoes the query Rails-style: keys sorted, arrays as key[]=, page and per_page overwritten', () => {
    const h = paginationHeaders(
      BASE,
      '/api/v3/projects/1/builds',
      { 'scope[]': ['pending', 'running'], order_by: 'id', page: '7', per_page: '9', a: 'x y&z' },
      1,
      pageRequest({ per_page: '9' }),
    );
    const first = /<([^>]+)>; rel="first"/.exec(h.Link)![1];
    expect(first).toBe('http://www.example.com/api/v3/projects/1/builds?a=x+y%26z&order_by=id&page=1&per_page=9&scope%5B%5D=pending&scope%5B%5D=running');
  });

  it('never echoes credentials (private_token, access_token, bearer_token), but keeps sudo', () => {
    const h = paginationHeaders(BASE, '/api/v3/projects', { private_token: 'p', access_token: 'a', bearer_token: 'b', sudo: 'alice' }, 1, pageRequest({}));
    expect(h.Link).not.toMatch(/private_token|access_token|bearer_token/);
    expect(h.Link).toMatch(/sudo=alice/);
  });

  it('drops nested objects from the echoed query', () => {
    const h = paginationHeaders(BASE, '/api/v3/projects', { filter: { a: '1' } }, 1, pageRequest({}));
    expect(h.Link).not.toMatch(/filter/);
  });
});

describe('Paginated', () => {
  it('maps items and keeps the total and the page', () => {
    const page = pageRequest({ page: '2', per_page: '2' });
    const p = new Paginated([1, 2], 7, page).map((n) => ({ n }));
    expect(p.items).toEqual([{ n: 1 }, { n: 2 }]);
    expect(p.total).toBe(7);
    expect(p.page).toBe(page);
  });
});

describe('paginateAll', () => {
  const items = Array.from({ length: 150 }, (_, i) => i);

  it('pages a list held in memory like every list: 20 by default, per_page capped at 100', () => {
    const p = paginateAll(items, {});
    expect(p.items).toEqual(items.slice(0, 20));
    expect(p.total).toBe(150);
    expect(paginateAll(items, { page: '2', per_page: '1000' }).items).toEqual(items.slice(100, 150));
  });

  it('whole: the first page is the whole list without per_page, and a per_page up to the total is honoured', () => {
    const all = paginateAll(items, {}, { whole: true });
    expect(all.items).toEqual(items);
    expect(all.page).toEqual({ page: 1, perPage: 150, offset: 0 });
    expect(paginateAll(items, { per_page: '150' }, { whole: true }).items).toEqual(items);
    expect(paginateAll(items, { per_page: '0' }, { whole: true }).items).toEqual(items);
    expect(paginateAll(items, { per_page: '10', page: '3' }, { whole: true }).items).toEqual(items.slice(20, 30));
    expect(paginateAll(items, { page: '2' }, { whole: true }).items).toEqual([]);
  });

  it('whole: a short list reports per_page 20, and an empty one 0 pages', () => {
    expect(paginateAll([1, 2], {}, { whole: true }).page.perPage).toBe(20);
    const empty = paginateAll([], {}, { whole: true });
    expect(paginationHeaders('http://x', '/l', {}, empty.total, empty.page)['X-Total-Pages']).toBe('0');
  });
});
