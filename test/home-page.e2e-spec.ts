import { startTestApp, TestApp } from './helpers/test-app';

/** `GET /` is a small HTML page about the server (no JSON 404); every other unknown path stays JSON 404. */
describe('the page at /', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t?.close());

  it('GET / is an HTML page: server name and version, the API document, how to sign in and clone', async () => {
    const res = await t.http.get('/').expect(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.text).toMatch(/^<!doctype html>/);
    expect(res.text).toContain('<h1>gitlab-v3-server 0.1.0</h1>');
    expect(res.text).toContain('<a href="/api/v3/openapi.json"><code>http://gitlab.test/api/v3/openapi.json</code></a>');
    expect(res.text).toContain('curl -X POST http://gitlab.test/api/v3/session -d login=root -d password=...');
    expect(res.text).toContain('git clone http://gitlab.test/&lt;namespace&gt;/&lt;project&gt;.git');
    expect(res.text).not.toMatch(/<script|<img|<link|<iframe/i);
    // the document it points to is there
    await t.http.get('/api/v3/openapi.json').expect(200);
  });

  it('is served with the API headers plus a CSP that allows nothing but its inline styles; HEAD answers the headers only', async () => {
    const res = await t.http.get('/').expect(200);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.headers['content-security-policy']).toBe(
      "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    );
    expect(res.headers['x-frame-options']).toBe('DENY');
    expect(res.headers['referrer-policy']).toBe('no-referrer');
    const head = await t.http.head('/').expect(200);
    expect(head.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(head.headers['content-length']).toBe(String(Buffer.byteLength(res.text)));
    expect(head.text ?? '').toBe('');
  });

  it('GET / only: other methods on / and other unknown paths stay JSON 404', async () => {
    for (const res of [await t.http.post('/'), await t.http.delete('/'), await t.http.get('/nowhere'), await t.http.get('/index.html')]) {
      expect(res.status).toBe(404);
      expect(res.headers['content-type']).toBe('application/json');
      expect(res.body).toEqual({ message: '404 Not Found' });
    }
  });
});
