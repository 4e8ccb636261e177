import { existsSync } from 'node:fs';
import { createServer, Server } from 'node:http';
import type { Browser, Page } from 'puppeteer-core';
import { ROOT_PASSWORD, startTestApp, TestApp } from './helpers/test-app';

/**
 * CORS in a real browser: headless Chromium (Debian's chromium-headless-shell, driven by
 * puppeteer-core) loads a page from a second origin listed in CORS_ORIGINS; the page signs in, lists
 * projects with PRIVATE-TOKEN and reads the exposed pagination headers. The same page served from an
 * origin that is not listed is refused by the browser. Skipped, with the reason logged, on a machine
 * without a Chromium binary (`.ci/run` installs chromium-headless-shell).
 */

const CANDIDATES = [process.env.CHROME_BIN, '/usr/bin/chromium-headless-shell', '/usr/bin/chromium', '/usr/bin/chromium-browser'];
const CHROMIUM = CANDIDATES.find((p): p is string => !!p && existsSync(p));
const SKIP_REASON = `no Chromium binary found (looked for ${CANDIDATES.filter(Boolean).join(', ')}; set CHROME_BIN or install chromium-headless-shell)`;

/** The front end: a page whose script calls the API on another origin, the way a browser app does. */
const PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><title>front</title></head>
<body>
<script>
  // Each call answers what the page could read, or the error the browser threw.
  async function attempt(fn) {
    try { return { ok: true, value: await fn() }; } catch (e) { return { ok: false, error: String(e && e.name) + ': ' + String(e && e.message) }; }
  }
  window.signIn = (api, login, password) => attempt(async () => {
    const r = await fetch(api + '/api/v3/session', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ login, password }),
    });
    return { status: r.status, body: await r.json() };
  });
  window.listProjects = (api, headers, init) => attempt(async () => {
    const r = await fetch(api + '/api/v3/projects?per_page=2&order_by=id&sort=asc', { headers, ...(init || {}) });
    const body = await r.json();
    return {
      status: r.status,
      total: r.headers.get('X-Total'),
      totalPages: r.headers.get('X-Total-Pages'),
      nextPage: r.headers.get('X-Next-Page'),
      link: r.headers.get('Link'),
      names: Array.isArray(body) ? body.map((p) => p.name) : body,
    };
  });
</script>
<p>front end</p>
</body></html>`;

function serve(): Promise<{ server: Server; origin: string }> {
  const server = createServer((req, res) => {
    if (req.url === '/' || req.url === '/index.html') {
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
      res.end(PAGE);
    } else {
      res.writeHead(404).end();
    }
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve({ server, origin: `http://127.0.0.1:${(server.address() as { port: number }).port}` })),
  );
}

interface Attempt<T> {
  ok: boolean;
  value?: T;
  error?: string;
}
interface Listing {
  status: number;
  total: string | null;
  totalPages: string | null;
  nextPage: string | null;
  link: string | null;
  names: unknown;
}
type Front = Window & {
  signIn(api: string, login: string, password: string): Promise<Attempt<{ status: number; body: { private_token: string } }>>;
  listProjects(api: string, headers: Record<string, string>, init?: RequestInit): Promise<Attempt<Listing>>;
};

if (!CHROMIUM) {
  console.warn(`cors-browser.e2e-spec: skipped: ${SKIP_REASON}`);
  describe('CORS in a real browser (headless Chromium)', () => {
    it.skip(`skipped: ${SKIP_REASON}`, () => undefined);
  });
} else {
  describe('CORS in a real browser (headless Chromium)', () => {
    let t: TestApp;
    let api: string;
    let listed: { server: Server; origin: string };
    let unlisted: { server: Server; origin: string };
    let browser: Browser;
    let token: string;

    async function open(origin: string): Promise<Page> {
      const page = await browser.newPage();
      await page.goto(`${origin}/`, { waitUntil: 'load' });
      return page;
    }

    beforeAll(async () => {
      listed = await serve();
      unlisted = await serve();
      t = await startTestApp({ CORS_ORIGINS: `https://other.example, ${listed.origin}` });
      const server = t.app.app.getHttpServer();
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
      api = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
      for (const name of ['cors-one', 'cors-two', 'cors-three']) {
        await t.http.post('/api/v3/projects').set('PRIVATE-TOKEN', t.root.token).send({ name }).expect(201);
      }
      token = t.root.token;
      const puppeteer = await import('puppeteer-core');
      browser = await puppeteer.launch({
        executablePath: CHROMIUM,
        headless: 'shell',
        args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
      });
    }, 120_000);

    afterAll(async () => {
      await browser?.close();
      for (const s of [listed?.server, unlisted?.server]) if (s) await new Promise((r) => s.close(r));
      await t?.close();
    });

    it('a page on a listed origin signs in, lists projects with PRIVATE-TOKEN and reads X-Total and Link', async () => {
      const page = await open(listed.origin);
      const session = await page.evaluate((a: string, pw: string) => (window as unknown as Front).signIn(a, 'root', pw), api, ROOT_PASSWORD);
      expect(session.error).toBeUndefined();
      expect(session.value?.status).toBe(201);
      const privateToken = session.value!.body.private_token;
      expect(privateToken).toBe(token);

      const list = await page.evaluate((a: string, tk: string) => (window as unknown as Front).listProjects(a, { 'PRIVATE-TOKEN': tk }), api, privateToken);
      expect(list.error).toBeUndefined();
      expect(list.value).toMatchObject({ status: 200, total: '3', totalPages: '2', nextPage: '2', names: ['cors-one', 'cors-two'] });
      expect(list.value!.link).toContain('rel="next"');
      expect(list.value!.link).toContain('page=2');
      await page.close();
    });

    it('preflights allow Sudo, Authorization and Content-Type; errors stay readable', async () => {
      const page = await open(listed.origin);
      const user = await t.createUser();
      await t.http.post('/api/v3/projects').set('PRIVATE-TOKEN', user.token).send({ name: 'cors-sudo' }).expect(201);
      const sudo = await page.evaluate(
        (a: string, tk: string, u: string) => (window as unknown as Front).listProjects(a, { 'PRIVATE-TOKEN': tk, Sudo: u }),
        api,
        token,
        user.username,
      );
      expect(sudo.error).toBeUndefined();
      expect(sudo.value).toMatchObject({ status: 200, total: '1', names: ['cors-sudo'] });

      // an Authorization header passes the preflight: the API's own 401 reaches the page
      const bearer = await page.evaluate((a: string) => (window as unknown as Front).listProjects(a, { Authorization: 'Bearer not-a-token' }), api);
      expect(bearer.error).toBeUndefined();
      expect(bearer.value).toMatchObject({ status: 401, names: { message: '401 Unauthorized' } });
      await page.close();
    });

    it('credentials are never allowed: a fetch with credentials: include is refused by the browser', async () => {
      const page = await open(listed.origin);
      const r = await page.evaluate(
        (a: string, tk: string) => (window as unknown as Front).listProjects(a, { 'PRIVATE-TOKEN': tk }, { credentials: 'include' }),
        api,
        token,
      );
      expect(r.ok).toBe(false);
      expect(r.error).toMatch(/^TypeError/);
      await page.close();
    });

    it('the same page on an unlisted origin is refused by the browser', async () => {
      const page = await open(unlisted.origin);
      const session = await page.evaluate((a: string, pw: string) => (window as unknown as Front).signIn(a, 'root', pw), api, ROOT_PASSWORD);
      expect(session.ok).toBe(false);
      expect(session.error).toMatch(/^TypeError/);
      const list = await page.evaluate((a: string, tk: string) => (window as unknown as Front).listProjects(a, { 'PRIVATE-TOKEN': tk }), api, token);
      expect(list.ok).toBe(false);
      expect(list.error).toMatch(/^TypeError/);
      // a simple request (no preflight) is sent, but its answer is not handed to the page
      const simple = await page.evaluate((a: string) => (window as unknown as Front).listProjects(a, {}), api);
      expect(simple.ok).toBe(false);
      expect(simple.error).toMatch(/^TypeError/);
      await page.close();
    });
  });
}
