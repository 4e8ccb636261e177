import http from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { expectSchema } from './helpers/schema';
import { EXTERNAL_URL, startTestApp, TestApp, TestUser } from './helpers/test-app';

const USERS = '/api/v3/users';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Captures the app's JSON log lines (LOG_LEVEL=info) instead of printing them. */
const logLines: Record<string, unknown>[] = [];
const realWrite = process.stdout.write.bind(process.stdout);

async function logLineFor(requestId: string): Promise<Record<string, unknown>> {
  for (let i = 0; i < 100; i++) {
    const line = logLines.find((l) => l.msg === 'request' && l.request_id === requestId);
    if (line) return line;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`no log line for request ${requestId}`);
}

/** Sends a body with `Transfer-Encoding: chunked` (no Content-Length), as streaming clients do. */
function postChunked(
  port: number,
  path: string,
  contentType: string,
  chunks: string[],
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: unknown }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path, method: 'POST', headers: { 'Content-Type': contentType } });
    let answered = false;
    req.on('response', (res) => {
      answered = true;
      let data = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (data += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: JSON.parse(data) }));
    });
    req.on('error', (e) => {
      if (!answered) reject(e);
    });
    (async () => {
      for (const c of chunks) {
        if (answered || req.destroyed) return;
        if (!req.write(c)) await new Promise((r) => req.once('drain', r));
      }
      req.end();
    })().catch(() => undefined);
  });
}

function parseLink(link: string): { url: string; rel: string }[] {
  return link.split(', ').map((part) => {
    const m = /^<([^>]+)>; rel="(prev|next|first|last)"$/.exec(part);
    if (!m) throw new Error(`bad Link entry: ${part}`);
    return { url: m[1], rel: m[2] };
  });
}

describe('HTTP behaviour across the API', () => {
  let t: TestApp;
  let alice: TestUser;
  let totalUsers: number;
  let userIdsDesc: number[];

  beforeAll(async () => {
    jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array, ...rest: unknown[]) => {
      const s = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString();
      if (s.startsWith('{"time"')) {
        for (const line of s.split('\n').filter(Boolean)) logLines.push(JSON.parse(line));
        return true;
      }
      return (realWrite as (...a: unknown[]) => boolean)(chunk, ...rest);
    });
    t = await startTestApp({ LOG_LEVEL: 'info' });
    alice = await t.createUser({ username: 'alice', name: 'Alice Liddell' });
    for (let i = 0; i < 22; i++) await t.createUser();
    const rows = await t.sql<{ id: number }>('SELECT id FROM users ORDER BY id DESC');
    userIdsDesc = rows.map((r) => Number(r.id));
    totalUsers = userIdsDesc.length;
  }, 120_000);
  afterAll(async () => {
    await t.close();
    jest.restoreAllMocks();
  });

  const listUsers = (query = '') => t.http.get(`${USERS}${query}`).set('PRIVATE-TOKEN', t.root.token);

  describe('errors and routing', () => {
    it('an unknown route is 404 {"message":"404 Not Found"} as JSON', async () => {
      for (const path of ['/api/v3/no-such-thing', '/api/v3/users/1/no-such-sub', '/nowhere']) {
        const res = await t.http.get(path).set('PRIVATE-TOKEN', t.root.token).expect(404);
        expect(res.headers['content-type']).toBe('application/json');
        expect(res.body).toEqual({ message: '404 Not Found' });
      }
      const anon = await t.http.delete('/api/v3/no-such-thing').expect(404);
      expect(anon.body).toEqual({ message: '404 Not Found' });
    });

    it('NUL bytes and out-of-range numbers in inputs are 400 or 404, never 500', async () => {
      const root = (r: ReturnType<typeof t.http.get>) => r.set('PRIVATE-TOKEN', t.root.token);
      const search = await root(t.http.get('/api/v3/users?search=a%00b'));
      expect(search.status).toBe(400);
      expect(search.body.message).toMatch(/^400 Bad request/);
      const project = await root(t.http.get('/api/v3/projects/a%00b%2Fc'));
      expect(project.status).toBe(404);
      expect(project.body).toEqual({ message: '404 Project Not Found' });
      const sub = await root(t.http.get('/api/v3/projects/a%00b%2Fc/issues'));
      expect(sub.status).toBe(404);
      const created = await root(t.http.post('/api/v3/user/keys')).send({ title: 'nul\u0000title', key: 'ssh-ed25519 AAAA' });
      expect(created.status).toBe(400);
    });

    it('an unsupported method on a known path is 404 as well, not 500', async () => {
      const res = await t.http.patch('/api/v3/user').set('PRIVATE-TOKEN', t.root.token).expect(404);
      expect(res.body).toEqual({ message: '404 Not Found' });
    });

    it('a malformed JSON body is 400 with a message, never 500', async () => {
      for (const [method, path] of [
        ['post', '/api/v3/session'],
        ['put', '/api/v3/application/settings'],
        ['post', '/oauth/token'],
        ['post', '/api/v3/no-such-route'],
      ] as const) {
        const res = await t.http[method](path)
          .set('PRIVATE-TOKEN', t.root.token)
          .set('Content-Type', 'application/json')
          .send('{"login": "root", "password": ');
        expect(res.status).toBe(400);
        expect(res.headers['content-type']).toBe('application/json');
        expect(typeof res.body.message).toBe('string');
        expect(res.body.message).toMatch(/^400 /);
      }
    });

    it('a JSON body that is not an object is treated as no parameters', async () => {
      for (const body of ['[1, 2, 3]', '"just a string"', '42', 'null']) {
        const res = await t.http.post('/api/v3/session').set('Content-Type', 'application/json').send(body);
        expect(res.status).toBe(400);
        expect(typeof res.body.message).toBe('string');
      }
    });

    it('an empty JSON body reads as no parameters', async () => {
      const res = await t.http.post('/api/v3/session').set('Content-Type', 'application/json').send('').expect(400);
      expect(res.body).toEqual({ message: '400 (Bad request) "login" not given' });
    });

    it('JSON with a charset, form bodies and multipart bodies are all read', async () => {
      const creds = { login: 'alice', password: alice.password };
      let res = await t.http.post('/api/v3/session').set('Content-Type', 'application/json; charset=utf-8').send(JSON.stringify(creds)).expect(201);
      expect(res.body.username).toBe('alice');
      res = await t.http.post('/api/v3/session').type('form').send(creds).expect(201);
      expect(res.body.username).toBe('alice');
      res = await t.http.post('/api/v3/session').field('login', 'alice').field('password', alice.password).expect(201);
      expect(res.body.username).toBe('alice');
    });

    it('a JSON body over 10 MB is 413 Request Entity Too Large', async () => {
      const big = JSON.stringify({ login: 'root', password: 'x', filler: 'a'.repeat(11 * 1024 * 1024) });
      const res = await t.http.post('/api/v3/session').set('Content-Type', 'application/json').send(big);
      expect(res.status).toBe(413);
      expect(res.headers['content-type']).toBe('application/json');
      expect(res.body).toEqual({ message: '413 Request Entity Too Large' });
    });

    it('a form body over 10 MB is 413 too', async () => {
      const res = await t.http
        .post('/api/v3/session')
        .type('form')
        .send(`login=root&password=x&filler=${'a'.repeat(11 * 1024 * 1024)}`);
      expect(res.status).toBe(413);
      expect(res.body).toEqual({ message: '413 Request Entity Too Large' });
    });

    it('a multipart body over 10 MB is 413 too', async () => {
      let req = t.http.post('/api/v3/session').field('login', 'root').field('password', 'x');
      const chunk = 'a'.repeat(1000 * 1000);
      for (let i = 0; i < 11; i++) req = req.field(`filler${i}`, chunk);
      const res = await req;
      expect(res.status).toBe(413);
      expect(res.body).toEqual({ message: '413 Request Entity Too Large' });
    });

    describe('chunked bodies without Content-Length', () => {
      let port: number;
      beforeAll(async () => {
        const server = t.app.app.getHttpServer();
        if (!server.listening) await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
        port = (server.address() as AddressInfo).port;
      });

      it('a small chunked JSON body is read', async () => {
        const res = await postChunked(port, '/api/v3/session', 'application/json', ['{"login": "alice", ', `"password": "${alice.password}"}`]);
        expect(res.status).toBe(201);
        expect(res.body).toMatchObject({ username: 'alice' });
      });

      it('a chunked JSON body over 10 MB is 413', async () => {
        const mb = 'a'.repeat(1024 * 1024);
        const res = await postChunked(port, '/api/v3/session', 'application/json', [
          '{"login": "root", "password": "x", "filler": "',
          ...Array(11).fill(mb),
          '"}',
        ]);
        expect(res.status).toBe(413);
        expect(res.body).toEqual({ message: '413 Request Entity Too Large' });
      });

      it('a chunked multipart body over 10 MB is 413', async () => {
        const b = 'XBOUNDARYX';
        const field = (name: string, value: string) => `--${b}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
        const filler = 'a'.repeat(1000 * 1000);
        const res = await postChunked(port, '/api/v3/session', `multipart/form-data; boundary=${b}`, [
          field('login', 'root'),
          field('password', 'x'),
          ...Array.from({ length: 11 }, (_, i) => field(`filler${i}`, filler)),
          `--${b}--\r\n`,
        ]);
        expect(res.status).toBe(413);
        expect(res.headers['content-type']).toBe('application/json');
        expect(res.body).toEqual({ message: '413 Request Entity Too Large' });
      });

      it('a small chunked multipart body is read', async () => {
        const b = 'XBOUNDARYX';
        const field = (name: string, value: string) => `--${b}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
        const res = await postChunked(port, '/api/v3/session', `multipart/form-data; boundary=${b}`, [
          field('login', 'alice'),
          field('password', alice.password),
          `--${b}--\r\n`,
        ]);
        expect(res.status).toBe(201);
        expect(res.body).toMatchObject({ username: 'alice' });
      });
    });

    it('a body just under the limit is read normally', async () => {
      const body = JSON.stringify({ login: 'alice', password: alice.password, filler: 'a'.repeat(9 * 1024 * 1024) });
      const res = await t.http.post('/api/v3/session').set('Content-Type', 'application/json').send(body).expect(201);
      expect(res.body.username).toBe('alice');
    });

    it('a malformed percent-escape in the path is 400, not 500', async () => {
      for (const path of ['/api/v3/users/%E0%A4%A', '/api/v3/licenses/%ZZ']) {
        const res = await t.http.get(path).set('PRIVATE-TOKEN', t.root.token);
        expect({ path, status: res.status }).toEqual({ path, status: 400 });
        expect(res.headers['content-type']).toBe('application/json');
        expect(res.body.message).toMatch(/^400 /);
      }
    });

    it('sudo inside a JSON body applies like the query parameter', async () => {
      const res = await t.http
        .post('/api/v3/user/emails')
        .set('PRIVATE-TOKEN', t.root.token)
        .send({ sudo: 'alice', email: 'alice.sudo@example.com' })
        .expect(201);
      expect(res.body.email).toBe('alice.sudo@example.com');
      const mine = await t.http.get('/api/v3/user/emails').set('PRIVATE-TOKEN', alice.token).expect(200);
      expect(mine.body.map((e: { email: string }) => e.email)).toContain('alice.sudo@example.com');
    });

    it('odd query shapes are answered with 4xx or ignored, never 500', async () => {
      for (const q of ['?page[x]=1&per_page[]=5', '?search[a]=b', '?private_token[]=x', '?active=maybe', '?page=%ff', `?${'a'.repeat(5000)}=1`]) {
        const res = await listUsers(q);
        expect(res.status).toBeLessThan(500);
        expect(res.headers['content-type']).toBe('application/json');
      }
    });
  });

  describe('content type', () => {
    it('is exactly application/json on successes and errors', async () => {
      const responses = [
        await t.http.get('/api/v3/user').set('PRIVATE-TOKEN', t.root.token).expect(200),
        await listUsers().expect(200),
        await t.http.post('/api/v3/session').send({ login: 'alice', password: alice.password }).expect(201),
        await t.http.get('/api/v3/user').expect(401),
        await t.http.get('/api/v3/application/settings').set('PRIVATE-TOKEN', alice.token).expect(403),
        await t.http.get('/api/v3/users/999999').set('PRIVATE-TOKEN', t.root.token).expect(404),
        await t.http.put('/api/v3/application/settings').set('PRIVATE-TOKEN', t.root.token).send({ signup_enabled: 'x' }).expect(400),
        await t.http.post('/api/v3/session').send({}).expect(400),
        await t.http.get('/-/health').expect(200),
        await t.http.get('/api/v3/version').set('PRIVATE-TOKEN', t.root.token).expect(200),
        await t.http.post('/oauth/token').send({}).expect(400),
      ];
      for (const res of responses) expect(res.headers['content-type']).toBe('application/json');
    });
  });

  describe('URL normalisation', () => {
    it('the .json suffix routes like the plain path', async () => {
      let res = await t.http.get('/api/v3/user.json').set('PRIVATE-TOKEN', alice.token).expect(200);
      expect(res.body.username).toBe('alice');
      res = await t.http.get(`/api/v3/users/${alice.id}.json?private_token=${t.root.token}`).expect(200);
      expect(res.body.id).toBe(alice.id);
      res = await t.http.get('/api/v3/users.json?per_page=1').set('PRIVATE-TOKEN', t.root.token).expect(200);
      expect(res.body).toHaveLength(1);
    });

    it('extra and trailing slashes route like the single-slash path', async () => {
      for (const path of ['/api/v3//user/', '/api/v3/user/', '//api/v3/user', '/api//v3///user//']) {
        const res = await t.http.get(path).set('PRIVATE-TOKEN', alice.token);
        expect({ path, status: res.status }).toEqual({ path, status: 200 });
        expect(res.body.username).toBe('alice');
      }
      const res = await t.http.get(`/api/v3/users//${alice.id}/`).set('PRIVATE-TOKEN', t.root.token).expect(200);
      expect(res.body.id).toBe(alice.id);
    });

    it('writes route with extra slashes too', async () => {
      const res = await t.http.post('/api/v3//session/').send({ login: 'alice', password: alice.password }).expect(201);
      expect(res.body.username).toBe('alice');
    });
  });

  describe('pagination', () => {
    it('defaults: page 1, 20 per page, with all the headers', async () => {
      const res = await listUsers().expect(200);
      const pages = Math.ceil(totalUsers / 20);
      expect(totalUsers).toBeGreaterThan(20);
      expect(res.body.map((u: { id: number }) => u.id)).toEqual(userIdsDesc.slice(0, 20));
      expect(res.headers).toMatchObject({
        'x-total': String(totalUsers),
        'x-total-pages': String(pages),
        'x-per-page': '20',
        'x-page': '1',
        'x-next-page': '2',
        'x-prev-page': '',
      });
      expect(res.headers['link']).toBe(
        [
          `<${EXTERNAL_URL}/api/v3/users?page=2&per_page=20>; rel="next"`,
          `<${EXTERNAL_URL}/api/v3/users?page=1&per_page=20>; rel="first"`,
          `<${EXTERNAL_URL}/api/v3/users?page=${pages}&per_page=20>; rel="last"`,
        ].join(', '),
      );
    });

    it('a middle page has prev, next, first and last, in that order', async () => {
      const res = await listUsers('?per_page=5&page=2').expect(200);
      const pages = Math.ceil(totalUsers / 5);
      expect(res.body.map((u: { id: number }) => u.id)).toEqual(userIdsDesc.slice(5, 10));
      expect(res.headers).toMatchObject({ 'x-page': '2', 'x-per-page': '5', 'x-next-page': '3', 'x-prev-page': '1' });
      const links = parseLink(res.headers['link']);
      expect(links.map((l) => l.rel)).toEqual(['prev', 'next', 'first', 'last']);
      expect(links.map((l) => l.url)).toEqual([
        `${EXTERNAL_URL}/api/v3/users?page=1&per_page=5`,
        `${EXTERNAL_URL}/api/v3/users?page=3&per_page=5`,
        `${EXTERNAL_URL}/api/v3/users?page=1&per_page=5`,
        `${EXTERNAL_URL}/api/v3/users?page=${pages}&per_page=5`,
      ]);
    });

    it('the last page: X-Next-Page is empty and there is no next link', async () => {
      const pages = Math.ceil(totalUsers / 5);
      const res = await listUsers(`?per_page=5&page=${pages}`).expect(200);
      expect(res.body).toHaveLength(totalUsers - (pages - 1) * 5);
      expect(res.headers).toMatchObject({
        'x-page': String(pages),
        'x-next-page': '',
        'x-prev-page': String(pages - 1),
        'x-total-pages': String(pages),
      });
      expect(parseLink(res.headers['link']).map((l) => l.rel)).toEqual(['prev', 'first', 'last']);
    });

    it('a page past the end is empty', async () => {
      const res = await listUsers('?per_page=5&page=999').expect(200);
      expect(res.body).toEqual([]);
      expect(res.headers).toMatchObject({ 'x-page': '999', 'x-next-page': '', 'x-total': String(totalUsers) });
    });

    it('per_page is capped at 100', async () => {
      for (const v of ['100', '101', '1000', '1000000000000']) {
        const res = await listUsers(`?per_page=${v}`).expect(200);
        expect({ v, perPage: res.headers['x-per-page'] }).toEqual({ v, perPage: '100' });
        expect(res.body).toHaveLength(Math.min(totalUsers, 100));
        expect(res.headers['x-total-pages']).toBe('1');
      }
    });

    it('per_page=0, negative or junk means 20', async () => {
      for (const v of ['0', '-5', 'abc', '', '2.5', '1e2']) {
        const res = await listUsers(`?per_page=${v}`).expect(200);
        expect({ v, perPage: res.headers['x-per-page'] }).toEqual({ v, perPage: '20' });
        expect(res.body).toHaveLength(20);
      }
    });

    it('page=0, negative or junk means 1', async () => {
      for (const v of ['0', '-1', 'abc', '']) {
        const res = await listUsers(`?page=${v}&per_page=3`).expect(200);
        expect({ v, page: res.headers['x-page'] }).toEqual({ v, page: '1' });
        expect(res.headers['x-prev-page']).toBe('');
        expect(res.body.map((u: { id: number }) => u.id)).toEqual(userIdsDesc.slice(0, 3));
      }
    });

    it('a huge page number is an empty page, not page 1 and not an error', async () => {
      const res = await listUsers('?page=99999999999&per_page=100').expect(200);
      expect(res.body).toEqual([]);
      expect(res.headers['x-next-page']).toBe('');
    });

    it('repeated page/per_page parameters (clients re-append theirs) take the last value', async () => {
      const res = await listUsers('?per_page=20&page=1&per_page=5&page=2').expect(200);
      expect(res.headers).toMatchObject({ 'x-page': '2', 'x-per-page': '5' });
      expect(res.body.map((u: { id: number }) => u.id)).toEqual(userIdsDesc.slice(5, 10));
    });

    it('a list with zero results has X-Total-Pages 0', async () => {
      const res = await listUsers('?search=zz-no-such-user-zz').expect(200);
      expect(res.body).toEqual([]);
      expect(res.headers).toMatchObject({
        'x-total': '0',
        'x-total-pages': '0',
        'x-page': '1',
        'x-per-page': '20',
        'x-next-page': '',
        'x-prev-page': '',
      });
      expect(res.headers['link']).toBe(
        [
          `<${EXTERNAL_URL}/api/v3/users?page=1&per_page=20&search=zz-no-such-user-zz>; rel="first"`,
          `<${EXTERNAL_URL}/api/v3/users?page=0&per_page=20&search=zz-no-such-user-zz>; rel="last"`,
        ].join(', '),
      );
    });

    it('Link URLs are absolute, from EXTERNAL_URL, with keys sorted and other parameters echoed', async () => {
      const res = await t.http
        .get(`${USERS}?sudo=root&search=user&per_page=2&page=2&private_token=${t.root.token}`)
        .set('Host', 'internal-host:1234')
        .expect(200);
      const matching = await t.sql<{ n: number }>(
        `SELECT count(*)::int AS n FROM users WHERE lower(username) LIKE '%user%' OR lower(name) LIKE '%user%' OR lower(email) LIKE '%user%'`,
      );
      const pages = Math.ceil(Number(matching[0].n) / 2);
      expect(pages).toBeGreaterThan(2);
      const q = (p: number) => `${EXTERNAL_URL}/api/v3/users?page=${p}&per_page=2&search=user&sudo=root`;
      expect(res.headers['link']).toBe(`<${q(1)}>; rel="prev", <${q(3)}>; rel="next", <${q(1)}>; rel="first", <${q(pages)}>; rel="last"`);
      expect(res.headers['link']).not.toContain('internal-host');
    });

    it('Link never echoes private_token', async () => {
      const res = await t.http.get(`${USERS}?per_page=2&private_token=${t.root.token}`).expect(200);
      expect(res.headers['link']).not.toContain('private_token');
      expect(res.headers['link']).not.toContain(t.root.token);
      for (const l of parseLink(res.headers['link'])) expect(l.url.startsWith(`${EXTERNAL_URL}/api/v3/users?`)).toBe(true);
    });

    it('Link never echoes access_token', async () => {
      const grant = await t.http.post('/oauth/token').send({ grant_type: 'password', username: 'root', password: t.root.password }).expect(200);
      const token = grant.body.access_token as string;
      const res = await t.http.get(`${USERS}?per_page=2&search=user&access_token=${token}`).expect(200);
      expect(res.headers['link']).not.toContain('access_token');
      expect(res.headers['link']).not.toContain(token);
      expect(res.headers['link']).toContain('search=user');
    });

    it('Link encodes values and keeps array parameters', async () => {
      const res = await listUsers('?per_page=2&search=User%201&extra[]=a&extra[]=b%26c').expect(200);
      const first = parseLink(res.headers['link']).find((l) => l.rel === 'first')!;
      expect(first.url).toBe(`${EXTERNAL_URL}/api/v3/users?extra%5B%5D=a&extra%5B%5D=b%26c&page=1&per_page=2&search=User+1`);
    });

    it('Link uses the normalised path for .json and extra slashes', async () => {
      for (const path of ['/api/v3/users.json', '/api/v3//users/']) {
        const res = await t.http.get(`${path}?per_page=2`).set('PRIVATE-TOKEN', t.root.token).expect(200);
        for (const l of parseLink(res.headers['link'])) expect(l.url.startsWith(`${EXTERNAL_URL}/api/v3/users?`)).toBe(true);
      }
    });

    it('following rel="next" verbatim walks every item exactly once', async () => {
      const seen: number[] = [];
      let url: string | undefined = `${USERS}?per_page=7&search=`;
      let pages = 0;
      while (url) {
        const res: request.Response = await t.http.get(url).set('PRIVATE-TOKEN', t.root.token).expect(200);
        seen.push(...res.body.map((u: { id: number }) => u.id));
        const next = parseLink(res.headers['link']).find((l) => l.rel === 'next');
        url = next ? next.url.slice(EXTERNAL_URL.length) : undefined;
        if (++pages > 20) throw new Error('too many pages');
      }
      expect(pages).toBe(Math.ceil(totalUsers / 7));
      expect(seen).toEqual(userIdsDesc);
    });

    it('following X-Next-Page with page++ walks every item exactly once', async () => {
      const seen: number[] = [];
      let page = '1';
      while (page !== '') {
        const res = await listUsers(`?per_page=10&page=${page}`).expect(200);
        seen.push(...res.body.map((u: { id: number }) => u.id));
        page = res.headers['x-next-page'];
      }
      expect(seen).toEqual(userIdsDesc);
    });

    it('a normal user gets the same headers on GET /users', async () => {
      const res = await t.http.get(`${USERS}?per_page=3`).set('PRIVATE-TOKEN', alice.token).expect(200);
      expect(res.body).toHaveLength(3);
      expect(res.headers['x-total']).toBe(String(totalUsers));
      expect(res.headers['x-per-page']).toBe('3');
    });

    it('GET /namespaces is paginated the same way', async () => {
      const ns = await t.sql<{ id: number }>('SELECT id FROM namespaces ORDER BY id DESC');
      const res = await t.http.get('/api/v3/namespaces?per_page=4&page=2').set('PRIVATE-TOKEN', t.root.token).expect(200);
      expect(res.body.map((n: { id: number }) => n.id)).toEqual(ns.slice(4, 8).map((r) => Number(r.id)));
      expect(res.headers).toMatchObject({
        'x-total': String(ns.length),
        'x-total-pages': String(Math.ceil(ns.length / 4)),
        'x-per-page': '4',
        'x-page': '2',
        'x-prev-page': '1',
        'x-next-page': '3',
      });
      expect(parseLink(res.headers['link']).map((l) => l.rel)).toEqual(['prev', 'next', 'first', 'last']);
      expect(res.headers['link']).toContain(`<${EXTERNAL_URL}/api/v3/namespaces?page=3&per_page=4>; rel="next"`);
    });

    it('the username= form of GET /users is not paginated and returns at most one user', async () => {
      const res = await listUsers('?username=alice').expect(200);
      expect(res.body.map((u: { id: number }) => u.id)).toEqual([alice.id]);
    });
  });

  describe('health and version', () => {
    it('GET /-/health answers 200 without authentication', async () => {
      const res = await t.http.get('/-/health').expect(200);
      expect(res.body).toEqual({ status: 'ok' });
    });

    it('GET /-/readiness answers 200 without authentication once the database answers', async () => {
      const res = await t.http.get('/-/readiness').expect(200);
      expect(res.headers['content-type']).toBe('application/json');
      expect(res.body).toEqual({ status: 'ok', checks: { database: 'ok' } });
    });

    it('health endpoints ignore a bad token', async () => {
      await t.http.get('/-/health').set('PRIVATE-TOKEN', 'bogus').expect(200);
      await t.http.get('/-/readiness').set('Authorization', 'Bearer bogus').expect(200);
    });

    it('GET /api/v3/version needs authentication', async () => {
      const res = await t.http.get('/api/v3/version').expect(401);
      expect(res.body).toEqual({ message: '401 Unauthorized' });
    });

    it('GET /api/v3/version answers with the GitLab version for any user', async () => {
      const res = await t.http.get('/api/v3/version').set('PRIVATE-TOKEN', alice.token).expect(200);
      await expectSchema(res, 'Version');
      expect(res.body).toEqual({ version: expect.stringMatching(/^8\.\d+\.\d+/), revision: expect.any(String) });
      const json = await t.http.get('/api/v3/version.json').set('PRIVATE-TOKEN', alice.token).expect(200);
      expect(json.body).toEqual(res.body);
    });
  });

  describe('request ids and the request log', () => {
    it('every response carries an X-Request-Id', async () => {
      const responses = [
        await t.http.get('/-/health'),
        await t.http.get('/api/v3/user'),
        await t.http.get('/api/v3/user').set('PRIVATE-TOKEN', alice.token),
        await t.http.get('/api/v3/nothing-here'),
        await t.http.post('/api/v3/session').set('Content-Type', 'application/json').send('{oops'),
        await listUsers(),
        await t.http.get('/api/v3/licenses'),
        await t.http.post('/oauth/token').send({ grant_type: 'password', username: 'alice', password: 'wrong' }),
      ];
      const ids = responses.map((r) => r.headers['x-request-id']);
      for (const id of ids) expect(id).toMatch(UUID);
      expect(new Set(ids).size).toBe(ids.length);
    });

    it('a valid incoming X-Request-Id is echoed', async () => {
      for (const id of ['abc-123', 'trace.ID_42', 'a'.repeat(64)]) {
        const res = await t.http.get('/api/v3/user').set('PRIVATE-TOKEN', alice.token).set('X-Request-Id', id).expect(200);
        expect(res.headers['x-request-id']).toBe(id);
      }
      const err = await t.http.get('/api/v3/nothing-here').set('X-Request-Id', 'err-req-1').expect(404);
      expect(err.headers['x-request-id']).toBe('err-req-1');
    });

    it('an invalid incoming X-Request-Id is replaced', async () => {
      for (const id of ['has space', 'a'.repeat(65), 'semi;colon', '<script>']) {
        const res = await t.http.get('/-/health').set('X-Request-Id', id).expect(200);
        expect(res.headers['x-request-id']).toMatch(UUID);
      }
    });

    it('each request is logged once with its id, status and user, and without credentials', async () => {
      const res = await t.http.get(`/api/v3/user?private_token=${alice.token}&other=1`).set('X-Request-Id', 'log-check-1').expect(200);
      expect(res.body.username).toBe('alice');
      const line = await logLineFor('log-check-1');
      expect(line).toMatchObject({ level: 'info', method: 'GET', status: 200, user_id: alice.id });
      expect(typeof line.duration_ms).toBe('number');
      expect(line.path).toBe('/api/v3/user?private_token=[FILTERED]&other=1');
      expect(JSON.stringify(logLines)).not.toContain(alice.token);
      expect(logLines.filter((l) => l.request_id === 'log-check-1')).toHaveLength(1);
    });

    it('OAuth credentials and passwords never reach the log', async () => {
      const grant = await t.http
        .post('/oauth/token')
        .set('X-Request-Id', 'log-check-2')
        .send({ grant_type: 'password', username: 'alice', password: alice.password })
        .expect(200);
      const token = grant.body.access_token as string;
      await t.http.get(`/api/v3/user?access_token=${token}`).set('X-Request-Id', 'log-check-3').expect(200);
      await t.http.get('/api/v3/user').set('Authorization', `Bearer ${token}`).set('X-Request-Id', 'log-check-4').expect(200);
      const lines = await Promise.all(['log-check-2', 'log-check-3', 'log-check-4'].map(logLineFor));
      expect(lines[1].path).toBe('/api/v3/user?access_token=[FILTERED]');
      const all = JSON.stringify(logLines);
      expect(all).not.toContain(token);
      expect(all).not.toContain(grant.body.refresh_token);
      expect(all).not.toContain(alice.password);
    });

    it('write parameters sent in the query string (passwords, refresh tokens) are not logged', async () => {
      await t.http
        .post(`/api/v3/session?login=alice&password=${encodeURIComponent(alice.password)}`)
        .set('X-Request-Id', 'log-check-7')
        .expect(201);
      const grant = await t.http
        .post(`/oauth/token?grant_type=password&username=alice&password=${encodeURIComponent(alice.password)}`)
        .set('X-Request-Id', 'log-check-8')
        .expect(200);
      await t.http.post(`/oauth/token?grant_type=refresh_token&refresh_token=${grant.body.refresh_token}`).set('X-Request-Id', 'log-check-9').expect(200);
      const [session, token, refresh] = await Promise.all(['log-check-7', 'log-check-8', 'log-check-9'].map(logLineFor));
      expect(session.path).toBe('/api/v3/session?login=alice&password=[FILTERED]');
      expect(token.path).toBe('/oauth/token?grant_type=password&username=alice&password=[FILTERED]');
      expect(refresh.path).toBe('/oauth/token?grant_type=refresh_token&refresh_token=[FILTERED]');
      const all = JSON.stringify(logLines);
      expect(all).not.toContain(alice.password);
      expect(all).not.toContain(grant.body.refresh_token);
    });

    it('credentials whose parameter name is percent-encoded or bracketed are redacted too', async () => {
      const res = await t.http.get(`/api/v3/user?private%5Ftoken=${alice.token}`).set('X-Request-Id', 'log-check-10').expect(200);
      expect(res.body.username).toBe('alice');
      await t.http.get(`/api/v3/user?private_token[]=${alice.token}`).set('X-Request-Id', 'log-check-11').expect(200);
      const lines = await Promise.all(['log-check-10', 'log-check-11'].map(logLineFor));
      expect(lines[0].path).toBe('/api/v3/user?private%5Ftoken=[FILTERED]');
      expect(lines[1].path).toBe('/api/v3/user?private_token[]=[FILTERED]');
      expect(JSON.stringify(logLines)).not.toContain(alice.token);
    });

    it('failed requests are logged with their status', async () => {
      await t.http.get('/api/v3/application/settings').set('PRIVATE-TOKEN', alice.token).set('X-Request-Id', 'log-check-5').expect(403);
      await t.http.get('/api/v3/user').set('X-Request-Id', 'log-check-6').expect(401);
      expect(await logLineFor('log-check-5')).toMatchObject({ status: 403, user_id: alice.id });
      expect(await logLineFor('log-check-6')).toMatchObject({ status: 401, user_id: null });
    });
  });
});
