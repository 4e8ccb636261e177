import { ci, Json } from '../helpers/ci';
import { startTestApp, TestApp } from '../helpers/test-app';

/**
 * Routes that read the raw request stream (trace PATCH, artifacts upload, git smart HTTP) and the
 * full-trace PUT answer every request whatever its Content-Type: no body parser may consume a stream
 * its handler then waits on. Each request has a short timeout: a hang fails the test.
 */
describe('security: routes that read the raw body answer whatever the Content-Type', () => {
  let t: TestApp;
  let c: ReturnType<typeof ci>;
  let build: Json;
  let project: Json;
  const TIMEOUT = { response: 5000, deadline: 60000 };

  beforeAll(async () => {
    t = await startTestApp();
    c = ci(t);
    const owner = await t.createUser();
    project = await c.project(owner, 'job:\n  script: x\n');
    const runner = await c.registerRunner();
    build = (await c.api.requestBuild(runner.token).expect(201)).body;
  });
  afterAll(() => t.close());

  const trace = async () =>
    (await t.sql<{ trace_size: number }>(`SELECT trace_size::int AS trace_size FROM ci_builds WHERE id = $1`, [build.id]))[0].trace_size;
  const patch = (start: number, type: string | undefined, body: string | Buffer) => {
    const r = t.http
      .patch(`/ci/api/v1/builds/${build.id}/trace.txt`)
      .timeout(TIMEOUT)
      .set('BUILD-TOKEN', build.token)
      .set('Content-Range', `${start}-${start + Buffer.byteLength(body)}`);
    if (type !== undefined) r.set('Content-Type', type);
    return r.send(body);
  };

  it('trace PATCH with a JSON, form, multipart, odd or missing Content-Type: 202, the bytes appended as sent', async () => {
    const parts: [string | undefined, string][] = [
      ['application/json', '{"a":1}'],
      ['application/json', '{"token":"not-the-build-token"}'],
      ['application/json', 'not json at all {'],
      ['application/json; charset=utf-8', 'null'],
      ['application/x-www-form-urlencoded', 'token=abc&x=1'],
      ['multipart/form-data; boundary=zzz', '--zzz\r\n'],
      ['application/octet-stream', '\u001b[31mred\u001b[0m'],
      [undefined, 'plain'],
    ];
    let size = await trace();
    let all = '';
    for (const [type, body] of parts) {
      const res = await patch(size, type, body);
      expect([type, res.status]).toEqual([type, 202]);
      size += Buffer.byteLength(body);
      all += body;
      expect(res.headers['range']).toBe(`0-${size}`);
    }
    const p = await t.http.get(`/api/v3/projects/${project.id}/builds/${build.id}/trace`).set('PRIVATE-TOKEN', t.root.token).buffer(true).expect(200);
    expect(p.text).toBe(all);
  });

  it('an oversized trace part (over 16 MB): 413 with a body, not a connection reset; the connection serves the next request', async () => {
    const size = await trace();
    const big = Buffer.alloc(16 * 1024 * 1024 + 10, 'a');
    const res = await patch(size, 'application/json', big).timeout({ response: 60000, deadline: 90000 });
    expect(res.status).toBe(413);
    expect(res.body).toEqual({ message: '413 Request Entity Too Large' });
    expect(await trace()).toBe(size);
    expect((await patch(size, 'text/plain', 'after')).status).toBe(202);
  });

  it('a trace PATCH with a wrong token and a body is answered (403), whatever the Content-Type', async () => {
    for (const type of ['text/plain', 'application/json', 'application/x-www-form-urlencoded']) {
      const res = await t.http
        .patch(`/ci/api/v1/builds/${build.id}/trace.txt`)
        .timeout(TIMEOUT)
        .set('BUILD-TOKEN', 'wrong')
        .set('Content-Type', type)
        .set('Content-Range', '0-3')
        .send('abc');
      expect([type, res.status]).toEqual([type, 403]);
    }
  });

  it('full-trace PUT and artifacts upload with unexpected Content-Types are answered', async () => {
    const put = await t.http.put(`/ci/api/v1/builds/${build.id}`).timeout(TIMEOUT).set('Content-Type', 'text/plain').send('{"state":"running"}');
    expect([400, 403]).toContain(put.status); // no runner token is read from a text body: answered, not parsed
    const form = await t.http.put(`/ci/api/v1/builds/${build.id}`).timeout(TIMEOUT).type('form').send({ token: 'nope', state: 'running' });
    expect(form.status).toBe(403);
    for (const type of ['application/json', 'application/x-www-form-urlencoded', 'text/plain']) {
      const res = await t.http
        .post(`/ci/api/v1/builds/${build.id}/artifacts`)
        .timeout(TIMEOUT)
        .set('BUILD-TOKEN', build.token)
        .set('Content-Type', type)
        .send(type === 'application/json' ? '{"file":"x"}' : 'file=x');
      expect([type, res.status, res.body]).toEqual([type, 400, { message: '400 (Bad request) "Missing artifacts file!" not given' }]);
    }
  });

  it('git smart HTTP POSTs with a JSON or form Content-Type are answered', async () => {
    for (const service of ['git-upload-pack', 'git-receive-pack']) {
      for (const type of ['application/json', 'application/x-www-form-urlencoded']) {
        const res = await t.http
          .post(`/${project.path}.git/${service}`)
          .timeout(TIMEOUT)
          .set('Authorization', 'Basic ' + Buffer.from(`root:${t.root.token}`).toString('base64'))
          .set('Content-Type', type)
          .send('{"a":1}');
        expect([service, type, res.status < 500]).toEqual([service, type, true]);
      }
    }
  });
});
