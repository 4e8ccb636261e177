import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { ci } from './helpers/ci';
import { startTestApp, TestApp } from './helpers/test-app';

/** The app's JSON log lines (LOG_LEVEL=info), captured instead of printed. */
const logLines: Record<string, unknown>[] = [];
const realWrite = process.stdout.write.bind(process.stdout);

/** Sends `raw` on a new socket; with `readResponse`, reads one whole response (Content-Length) and closes at once. */
function exchange(port: number, raw: string, readResponse: boolean, untilFlushPkts = 0): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1');
    let data = Buffer.alloc(0);
    s.on('error', reject);
    s.on('connect', () => {
      s.write(raw);
      if (!readResponse) {
        // the client gives up before any answer (the body it announced never comes)
        setTimeout(() => {
          s.destroy();
          resolve('');
        }, 50);
      }
    });
    s.on('data', (d: Buffer) => {
      data = Buffer.concat([data, d]);
      const head = data.indexOf('\r\n\r\n');
      if (head === -1) return;
      const headers = data.subarray(0, head).toString();
      const chunked = /transfer-encoding: chunked/i.test(headers);
      const length = Number(/content-length: (\d+)/i.exec(headers)?.[1] ?? 0);
      // a git client stops reading at the advertisement's last flush-pkt (`0000`), before the final chunk
      const flushes = data.subarray(head).toString().split('0000').length - 1;
      const complete =
        untilFlushPkts > 0 ? flushes >= untilFlushPkts : chunked ? data.subarray(data.length - 5).toString() === '0\r\n\r\n' : data.length >= head + 4 + length;
      if (complete) {
        s.destroy(); // right after reading the body
        resolve(data.subarray(0, head).toString());
      }
    });
  });
}

async function waitForLines(pred: (l: Record<string, unknown>) => boolean, n: number): Promise<Record<string, unknown>[]> {
  for (let i = 0; i < 200; i++) {
    const lines = logLines.filter(pred);
    if (lines.length >= n) return lines;
    await new Promise((r) => setTimeout(r, 10));
  }
  return logLines.filter(pred);
}

function metricCount(text: string, route: string, status: number): number {
  const m = new RegExp(`http_request_duration_seconds_count\\{method="GET",route="${route.replace(/\//g, '\\/')}",status="${status}"\\} (\\d+)`).exec(text);
  return m ? Number(m[1]) : 0;
}

describe('request log and route metrics: every request once, also when the client closes at once', () => {
  let t: TestApp;
  let port: number;

  beforeAll(async () => {
    t = await startTestApp({ LOG_LEVEL: 'info' });
    const server = t.app.app.getHttpServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
    process.stdout.write = (chunk: string | Uint8Array, ...rest: unknown[]) => {
      const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString();
      for (const line of text.split('\n')) {
        if (line.startsWith('{')) {
          try {
            logLines.push(JSON.parse(line));
            continue;
          } catch {
            // not ours
          }
        }
      }
      return typeof rest[rest.length - 1] === 'function' ? ((rest[rest.length - 1] as () => void)(), true) : true;
    };
  });
  afterAll(async () => {
    process.stdout.write = realWrite;
    await t.close();
  });

  it('20 clients that close right after reading a response: 20 log lines with the status sent, 20 counted in the route metrics', async () => {
    const before = metricCount((await t.http.get('/-/metrics').expect(200)).text, '/api/v3/projects', 200);
    const heads = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        exchange(port, `GET /api/v3/projects HTTP/1.1\r\nHost: x\r\nPRIVATE-TOKEN: ${t.root.token}\r\nX-Request-Id: close-${i}\r\n\r\n`, true),
      ),
    );
    for (const h of heads) expect(h).toMatch(/^HTTP\/1\.1 200 /);
    const lines = await waitForLines((l) => l.msg === 'request' && String(l.request_id).startsWith('close-'), 20);
    expect(lines).toHaveLength(20);
    expect(new Set(lines.map((l) => l.request_id)).size).toBe(20);
    for (const l of lines) expect(l).toMatchObject({ method: 'GET', status: 200, path: '/api/v3/projects' });
    // a bad request closed at once is logged with its 401
    await exchange(port, `GET /api/v3/user HTTP/1.1\r\nHost: x\r\nX-Request-Id: close-401\r\n\r\n`, true);
    expect(await waitForLines((l) => l.request_id === 'close-401', 1)).toEqual([expect.objectContaining({ status: 401 })]);
    await new Promise((r) => setTimeout(r, 100));
    expect(logLines.filter((l) => String(l.request_id).startsWith('close-'))).toHaveLength(21); // once each
    const after = metricCount((await t.http.get('/-/metrics').expect(200)).text, '/api/v3/projects', 200);
    expect(after - before).toBe(20);
  });

  it('20 git clients that close right after the ref advertisement: 20 log lines with 200, 20 counted', async () => {
    const p = await t.http.post('/api/v3/projects').set('PRIVATE-TOKEN', t.root.token).send({ name: 'advertised' }).expect(201);
    await t.http
      .post(`/api/v3/projects/${p.body.id}/repository/files`)
      .set('PRIVATE-TOKEN', t.root.token)
      .send({ file_path: 'a.txt', branch_name: 'master', content: 'a', commit_message: 'a' })
      .expect(201);
    const auth = Buffer.from(`root:${t.root.token}`).toString('base64');
    const refsCount = async () => {
      const text = (await t.http.get('/-/metrics').expect(200)).text;
      return Number(/http_request_duration_seconds_count\{method="GET",route="[^"]*info\/refs[^"]*",status="200"\} (\d+)/.exec(text)?.[1] ?? 0);
    };
    const before = await refsCount();
    const heads = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        exchange(
          port,
          `GET /${p.body.path_with_namespace}.git/info/refs?service=git-upload-pack HTTP/1.1\r\nHost: x\r\nAuthorization: Basic ${auth}\r\nX-Request-Id: refs-${i}\r\n\r\n`,
          true,
          2,
        ),
      ),
    );
    for (const h of heads) expect(h).toMatch(/^HTTP\/1\.1 200 /);
    const lines = await waitForLines((l) => l.msg === 'request' && String(l.request_id).startsWith('refs-'), 20);
    expect(lines.map((l) => l.status)).toEqual(Array(20).fill(200));
    await new Promise((r) => setTimeout(r, 100));
    expect(logLines.filter((l) => String(l.request_id).startsWith('refs-'))).toHaveLength(20); // once each
    expect((await refsCount()) - before).toBe(20);
  });

  it('a client that hangs up in the middle of its body is logged once: the answer given (400 unreadable body), or 499 when none was', async () => {
    await exchange(
      port,
      `POST /api/v3/projects HTTP/1.1\r\nHost: x\r\nX-Request-Id: gone-1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"name":`,
      false,
    );
    // a runner's trace part, cut off: read by its handler, not by a body parser
    const c = ci(t);
    await c.project({ ...t.root }, 'job:\n  script: x\n');
    const runner = await c.registerRunner();
    const build = (await c.api.requestBuild(runner.token).expect(201)).body;
    await exchange(
      port,
      `PATCH /ci/api/v1/builds/${build.id}/trace.txt HTTP/1.1\r\nHost: x\r\nX-Request-Id: gone-2\r\nBUILD-TOKEN: ${build.token}\r\nContent-Type: text/plain\r\nContent-Range: 0-1000\r\nContent-Length: 1000\r\n\r\nabc`,
      false,
    );
    // nothing was answered before the client left: 499 (client closed request), and no server error
    expect(await waitForLines((l) => l.request_id === 'gone-2', 1)).toEqual([expect.objectContaining({ msg: 'request', method: 'PATCH', status: 499 })]);
    await new Promise((r) => setTimeout(r, 100));
    expect(logLines.filter((l) => l.level === 'error')).toEqual([]);
    await c.api.patchTrace(build.id, build.token, 0, 'whole').expect(202);
    const lines = await waitForLines((l) => l.request_id === 'gone-1', 1);
    expect(lines).toEqual([expect.objectContaining({ msg: 'request', method: 'POST', status: 400 })]);
    await new Promise((r) => setTimeout(r, 200));
    expect(logLines.filter((l) => l.request_id === 'gone-1')).toHaveLength(1);
  });
});
