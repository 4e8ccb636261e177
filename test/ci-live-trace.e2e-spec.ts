import { get as httpGet, IncomingMessage, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { TraceFollower } from '../src/ci/builds/trace-follower';
import { ci, Json, waitFor } from './helpers/ci';
import { planning } from './helpers/planning';
import { startTestApp, TestApp } from './helpers/test-app';

const YML = 'one:\n  script: make\ntwo:\n  script: make\nthree:\n  script: make\n';

interface Follow {
  res: IncomingMessage;
  events: { event: string; data: Json }[];
  text: () => string;
  ended: Promise<void>;
}

describe('live build trace (server-sent events)', () => {
  let t: TestApp;
  let c: ReturnType<typeof ci>;
  let pl: ReturnType<typeof planning>;
  let team: Awaited<ReturnType<ReturnType<typeof planning>['team']>>;
  let pid: number;
  let runnersToken: string;
  let runner: { id: number; token: string };
  let base: string;

  /** GET the trace with a raw HTTP client, parsing events as they arrive. */
  function follow(path: string, token: string, headers: Record<string, string> = { Accept: 'text/event-stream' }): Promise<Follow> {
    return new Promise((resolve, reject) => {
      const req = httpGet(`${base}/api/v3${path}`, { headers: { 'PRIVATE-TOKEN': token, ...headers } }, (res) => {
        const events: { event: string; data: Json }[] = [];
        let buf = '';
        const ended = new Promise<void>((done) => res.on('end', done).on('close', done));
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          buf += chunk;
          let i;
          while ((i = buf.indexOf('\n\n')) >= 0) {
            const block = buf.slice(0, i);
            buf = buf.slice(i + 2);
            const ev = /^event: (.*)$/m.exec(block)?.[1];
            const data = /^data: (.*)$/m.exec(block)?.[1];
            if (ev && data) events.push({ event: ev, data: JSON.parse(data) });
          }
        });
        resolve({
          res,
          events,
          ended,
          text: () =>
            events
              .filter((e) => e.event === 'trace')
              .map((e) => e.data.text)
              .join(''),
        });
      });
      req.on('error', reject);
    });
  }

  async function runningBuild(): Promise<Json> {
    const r = await c.api.requestBuild(runner.token).expect(201);
    return r.body;
  }

  beforeAll(async () => {
    t = await startTestApp();
    c = ci(t);
    pl = planning(t);
    team = await pl.team();
    const p = await pl.project(team, 0, { public_builds: false });
    pid = p.id;
    runnersToken = (await pl.get(team.owner, `/projects/${pid}`).expect(200)).body.runners_token;
    await pl
      .post(team.owner, `/projects/${pid}/repository/files`)
      .send({ file_path: '.gitlab-ci.yml', branch_name: 'master', content: YML, commit_message: 'ci' })
      .expect(201);
    await waitFor(async () => (await c.builds(pid)).length === 3, 'builds');
    runner = (await c.api.register({ token: runnersToken })).body;
    const server: Server = t.app.app.getHttpServer();
    if (!server.listening) await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }, 240_000);
  afterAll(async () => {
    t.app.app.getHttpServer().closeAllConnections();
    await t.close();
  });

  it('follows a running build while the runner appends (tokens masked), and ends when the build finishes', async () => {
    const b = await runningBuild();
    await c.api.patchTrace(b.id, b.token, 0, 'first line\n').expect(202);
    const f = await follow(`/projects/${pid}/builds/${b.id}/trace`, team.reporter.token);
    expect(f.res.statusCode).toBe(200);
    expect(f.res.headers['content-type']).toMatch(/^text\/event-stream/);
    await waitFor(async () => f.text() === 'first line\n', 'the stored part');
    let at = Buffer.byteLength('first line\n');
    for (const part of ['step 2\r\n', `token ${runnersToken} here\n`, 'ünïcode ✓\n']) {
      await c.api.patchTrace(b.id, b.token, at, part).expect(202);
      at += Buffer.byteLength(part);
    }
    await waitFor(async () => f.text().endsWith('ünïcode ✓\n'), 'the appended parts', 5000);
    expect(f.events.some((e) => e.event === 'end')).toBe(false);
    await c.api.update(b.id, { token: runner.token, state: 'success' }).expect(200);
    await f.ended;
    expect(f.text()).toBe('first line\nstep 2\r\ntoken xxxxxx here\nünïcode ✓\n');
    expect(f.events[f.events.length - 1]).toEqual({ event: 'end', data: { status: 'success' } });
    await waitFor(async () => t.app.app.get(TraceFollower).followers === 0, 'no follower left');
  });

  it('?follow=true also streams; a finished build sends its whole trace and ends at once', async () => {
    const [done] = (await c.builds(pid)).filter((x) => x.status === 'success');
    const f = await follow(`/projects/${pid}/builds/${done.id}/trace?follow=true`, team.developer.token, {});
    await f.ended;
    expect(f.res.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(f.text()).toContain('first line');
    expect(f.events.map((e) => e.event).pop()).toBe('end');
  });

  it('a client that goes away leaves nothing held; a canceled build ends its followers', async () => {
    const b = await runningBuild();
    const f = await follow(`/projects/${pid}/builds/${b.id}/trace`, team.reporter.token);
    await waitFor(async () => t.app.app.get(TraceFollower).followers === 1, 'a follower');
    f.res.destroy();
    await waitFor(async () => t.app.app.get(TraceFollower).followers === 0, 'the follower released');

    const g = await follow(`/projects/${pid}/builds/${b.id}/trace`, team.reporter.token);
    await waitFor(async () => t.app.app.get(TraceFollower).followers === 1, 'a follower');
    await pl.post(team.developer, `/projects/${pid}/builds/${b.id}/cancel`).expect(201);
    await g.ended;
    expect(g.events.pop()).toEqual({ event: 'end', data: { status: 'canceled' } });
  });

  it('errors: 401, 404 for outsiders and unknown builds, 400 for a bad follow value, guests 404/403 like the plain trace', async () => {
    const [b] = await c.builds(pid);
    await t.http.get(`/api/v3/projects/${pid}/builds/${b.id}/trace`).set('Accept', 'text/event-stream').expect(401);
    expect((await pl.get(team.stranger, `/projects/${pid}/builds/${b.id}/trace`).set('Accept', 'text/event-stream')).status).toBe(404);
    expect((await pl.get(team.reporter, `/projects/${pid}/builds/999999/trace?follow=true`)).body).toEqual({ message: '404 Build Not Found' });
    expect((await pl.get(team.reporter, `/projects/${pid}/builds/${b.id}/trace?follow=maybe`)).status).toBe(400);
    const plain = (await pl.get(team.guest, `/projects/${pid}/builds/${b.id}/trace`)).status;
    expect((await pl.get(team.guest, `/projects/${pid}/builds/${b.id}/trace`).set('Accept', 'text/event-stream')).status).toBe(plain);
    expect([403, 404]).toContain(plain); // private builds: a guest may not read them
  });
});
