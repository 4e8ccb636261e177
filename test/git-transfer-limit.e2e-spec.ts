import { ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { request as httpRequest, IncomingHttpHeaders } from 'node:http';
import { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApp, App } from '../src/app.factory';
import { AppConfig } from '../src/config/config';
import { SshServerService } from '../src/ssh/ssh-server.service';
import { GitCli } from './helpers/git-cli';
import { SshCli } from './helpers/ssh-cli';
import { startTestApp, TestApp } from './helpers/test-app';

const API = '/api/v3';
const BUSY = 'fatal: the server is busy: too many git transfers, try again later';

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** One server under test: its HTTP port, its SSH port and the clients bound to them. */
interface Server {
  app: App;
  http: GitCli;
  ssh: SshCli;
  port: number;
}

/**
 * The cap on concurrent git transfers (GIT_MAX_TRANSFERS, GIT_MAX_QUEUED, GIT_QUEUE_TIMEOUT), with
 * the stock git client over smart HTTP and the stock OpenSSH client. A transfer is held open by a
 * client that never finishes its request: a smart HTTP `git-receive-pack` POST that sends its list of
 * ref updates and never its pack (receive-pack waits for it), or an SSH `git-upload-pack` that sends
 * its wants and then nothing (upload-pack waits for its haves). (An upload-pack POST
 * whose body never ends holds no slot: its request is read before git starts — test/security/transfer-slots.)
 * Every held push goes to a project of its own: a push also holds its repository's write lock.
 */
describe('git transfer limit (GIT_MAX_TRANSFERS / GIT_MAX_QUEUED / GIT_QUEUE_TIMEOUT)', () => {
  let t: TestApp;
  let dir: string;
  let main: Server; // 1 running, 1 queued, 30 s wait
  let strict: Server; // 1 running, none queued
  let impatient: Server; // 1 running, 1 queued, 1 s wait
  let key: { file: string; pub: string };
  let path: string;
  /** Projects that held pushes go to, one each (a push holds its repository's lock). */
  const pushTargets: string[] = [];
  let pushSeq = 0;
  let cloneSeq = 0;
  const extra: App[] = [];

  const basic = () => `Basic ${Buffer.from(`root:${t.root.token}`).toString('base64')}`;
  const httpUrl = (s: Server) => s.http.url(path, 'root', t.root.token);
  const cloneHttp = (s: Server) => s.http.run(['clone', '-q', httpUrl(s), join(dir, `clone-${++cloneSeq}`)]);
  const cloneSsh = (s: Server) => s.ssh.git(key.file, ['clone', '-q', s.ssh.url(path), join(dir, `clone-${++cloneSeq}`)]);

  /**
   * A smart HTTP receive-pack POST that sends its list of ref updates (a new branch) and then nothing:
   * it holds (or waits for) a slot until `abort`. Each goes to the next of `pushTargets`.
   */
  function heldPost(s: Server): { answer: Promise<Answer>; abort: () => void } {
    const target = pushTargets[pushSeq++ % pushTargets.length];
    const req = httpRequest({
      host: '127.0.0.1',
      port: s.port,
      method: 'POST',
      path: `/${target}.git/git-receive-pack`,
      headers: { Authorization: basic(), 'Content-Type': 'application/x-git-receive-pack-request', 'Transfer-Encoding': 'chunked' },
    });
    const answer = new Promise<Answer>((resolve) => {
      req.on('response', (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString('utf8')));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
        res.on('error', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      });
      req.on('error', () => resolve({ status: 0, headers: {}, body: '' }));
    });
    const update = `${'0'.repeat(40)} ${'1'.repeat(40)} refs/heads/held-${pushSeq}\0report-status\n`;
    req.write(`${(update.length + 4).toString(16).padStart(4, '0')}${update}0000`);
    return { answer, abort: () => req.destroy() };
  }

  /**
   * An SSH `git-upload-pack` that sends its wants once the refs are advertised, then nothing (upload-pack
   * waits for its haves): it holds (or waits for) a slot until `abort`. (One that sends nothing at all
   * holds no slot: test/security/ssh-idle-channels.)
   */
  function heldSsh(s: Server): { exit: Promise<{ code: number | null; stderr: string }>; abort: () => void } {
    const child: ChildProcessWithoutNullStreams = spawn('ssh', [...s.ssh.args(key.file), 'git@127.0.0.1', `git-upload-pack '${path}.git'`], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LC_ALL: 'C', HOME: dir },
    });
    let stderr = '';
    let advertised = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
    child.stdin.on('error', () => undefined);
    child.stdout.on('data', (d: Buffer) => {
      if (advertised.endsWith('0000')) return;
      advertised += d.toString('latin1');
      if (!advertised.endsWith('0000')) return;
      const want = `want ${advertised.slice(4, 44)} multi_ack_detailed side-band-64k\n`; // the first ref's sha
      child.stdin.write(`${(want.length + 4).toString(16).padStart(4, '0')}${want}0000`);
    });
    const exit = new Promise<{ code: number | null; stderr: string }>((resolve) => child.on('close', (code) => resolve({ code, stderr })));
    return { exit, abort: () => child.kill('SIGKILL') };
  }

  async function metric(name: string): Promise<number> {
    const res = await t.http.get('/-/metrics').expect(200);
    const m = new RegExp(`^${name.replace(/[{}"]/g, (c) => `\\${c}`)} (\\d+)$`, 'm').exec(res.text);
    return m ? Number(m[1]) : 0;
  }

  /** Waits until the metric has the value (the limiter's state, process-wide: one scenario runs at a time). */
  async function until(name: string, value: number): Promise<void> {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const v = await metric(name);
      if (v === value) return;
      if (Date.now() > deadline) throw new Error(`${name} stayed ${v}, expected ${value}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  async function serve(app: App): Promise<Server> {
    await app.app.listen(0, '127.0.0.1');
    const port = (app.app.getHttpServer().address() as AddressInfo).port;
    return { app, port, http: new GitCli(dir, port), ssh: SshCli.of(app.app.get(SshServerService), dir) };
  }

  async function instance(limits: AppConfig['gitTransfers']): Promise<Server> {
    const app = await createApp({ ...t.config, gitTransfers: limits });
    extra.push(app);
    return serve(app);
  }

  const settled = <T>(p: Promise<T>) => {
    const state = { done: false };
    void p.then(() => (state.done = true));
    return state;
  };

  beforeAll(async () => {
    t = await startTestApp({
      SSH_ENABLED: 'true',
      SSH_PORT: '0',
      SSH_LISTEN: '127.0.0.1',
      GIT_MAX_TRANSFERS: '1',
      GIT_MAX_QUEUED: '1',
      GIT_QUEUE_TIMEOUT: '30',
    });
    expect(t.config.gitTransfers).toEqual({ maxRunning: 1, maxQueued: 1, queueTimeoutMs: 30_000 });
    dir = mkdtempSync(join(tmpdir(), 'glv3-transfers-'));
    main = await serve(t.app);
    strict = await instance({ maxRunning: 1, maxQueued: 0, queueTimeoutMs: 30_000 });
    impatient = await instance({ maxRunning: 1, maxQueued: 1, queueTimeoutMs: 1_000 });
    key = await main.ssh.keygen('root');
    await t.http.post(`${API}/user/keys`).set('PRIVATE-TOKEN', t.root.token).send({ title: 'laptop', key: key.pub }).expect(201);
    const res = await t.http.post(`${API}/projects`).set('PRIVATE-TOKEN', t.root.token).send({ name: 'busy', visibility_level: 0 }).expect(201);
    path = res.body.path_with_namespace;
    for (const name of ['held-a', 'held-b', 'held-c']) {
      const p = await t.http.post(`${API}/projects`).set('PRIVATE-TOKEN', t.root.token).send({ name, visibility_level: 0 }).expect(201);
      pushTargets.push(p.body.path_with_namespace);
    }
    const work = join(dir, 'work');
    await main.http.ok(['init', '-q', work]);
    await main.http.commit(work, { 'README.md': '# busy\n' }, 'first');
    await main.http.ok(['push', '-q', httpUrl(main), 'master'], work);
  });

  afterAll(async () => {
    for (const app of extra) await app.close();
    await t?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  afterEach(async () => {
    // every scenario gives its slots back: none leaks into the next
    await until('git_transfers_running', 0);
    await until('git_transfers_queued', 0);
  });

  it('over HTTP, a clone waits while the only slot is held, then succeeds once it is given back', async () => {
    const held = heldPost(main);
    await until('git_transfers_running', 1);
    const clone = cloneHttp(main);
    const state = settled(clone);
    await until('git_transfers_queued', 1);
    await new Promise((r) => setTimeout(r, 300));
    expect(state.done).toBe(false);
    held.abort(); // the held client goes away: its git is killed and its slot passes to the waiting clone
    const r = await clone;
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(readFileSync(join(dir, `clone-${cloneSeq}`, 'README.md'), 'utf8')).toBe('# busy\n');
  });

  it('over SSH, a clone waits while the only slot is held (by an HTTP transfer too: one limit), then succeeds', async () => {
    const held = heldSsh(main);
    await until('git_transfers_running', 1);
    const clone = cloneSsh(main);
    const state = settled(clone);
    await until('git_transfers_queued', 1);
    await new Promise((r) => setTimeout(r, 300));
    expect(state.done).toBe(false);
    held.abort();
    const r = await clone;
    expect(r.code).toBe(0);
    expect(readFileSync(join(dir, `clone-${cloneSeq}`, 'README.md'), 'utf8')).toBe('# busy\n');

    const viaHttp = heldPost(main);
    await until('git_transfers_running', 1);
    const second = cloneSsh(main);
    await until('git_transfers_queued', 1);
    viaHttp.abort();
    expect((await second).code).toBe(0);
  });

  it('GIT_MAX_QUEUED=0: a transfer that cannot start at once gets 503 with Retry-After and a text git shows; over SSH the message and exit 1', async () => {
    const before = await metric('git_transfers_rejected_total{reason="queue_full"}');
    const held = heldPost(strict);
    await until('git_transfers_running', 1);

    const refused = await heldPost(strict).answer; // answered at once, without its pack
    expect(refused.status).toBe(503);
    expect(refused.headers['retry-after']).toBe('5');
    expect(refused.headers['content-type']).toMatch(/^text\/plain/);
    expect(refused.body).toBe(`${BUSY}\n`);

    // git's first request (the ref advertisement) is refused too, so git prints the server's text
    const http = await cloneHttp(strict);
    expect(http.code).not.toBe(0);
    expect(http.stderr).toContain(`remote: ${BUSY}`);
    expect(http.stderr).toContain('503');

    const ssh = await cloneSsh(strict);
    expect(ssh.code).not.toBe(0);
    expect(ssh.stderr).toContain(BUSY);
    const raw = await heldSsh(strict).exit; // refused before git starts: the one line, exit 1
    expect(raw).toEqual({ code: 1, stderr: `${BUSY}\n` });

    expect(await metric('git_transfers_rejected_total{reason="queue_full"}')).toBeGreaterThanOrEqual(before + 4);
    held.abort();
    await until('git_transfers_running', 0);
    expect((await cloneHttp(strict)).code).toBe(0); // the slot came back
  });

  it('GIT_QUEUE_TIMEOUT: a transfer that waited too long is refused (503 / the SSH message)', async () => {
    const before = await metric('git_transfers_rejected_total{reason="timeout"}');
    const held = heldSsh(impatient);
    await until('git_transfers_running', 1);

    const started = Date.now();
    const waited = await heldPost(impatient).answer;
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(waited.status).toBe(503);
    expect(waited.headers['retry-after']).toBe('5');
    expect(waited.body).toBe(`${BUSY}\n`);

    // the advertisement passes (the queue has room); the pack request waits and is refused
    const http = await cloneHttp(impatient);
    expect(http.code).not.toBe(0);
    expect(http.stderr).toContain('503');

    const ssh = await cloneSsh(impatient);
    expect(ssh.code).not.toBe(0);
    expect(ssh.stderr).toContain(BUSY);

    expect(await metric('git_transfers_rejected_total{reason="timeout"}')).toBeGreaterThanOrEqual(before + 3);
    held.abort();
  });

  it('a client that goes away while it waits leaves the queue (HTTP and SSH): its place is free for the next', async () => {
    const held = heldPost(main);
    await until('git_transfers_running', 1);

    const gone = heldPost(main);
    await until('git_transfers_queued', 1);
    expect((await heldPost(main).answer).status).toBe(503); // the queue (1) is full
    gone.abort();
    await until('git_transfers_queued', 0);
    expect(await gone.answer).toEqual({ status: 0, headers: {}, body: '' });

    const goneSsh = heldSsh(main);
    await until('git_transfers_queued', 1);
    goneSsh.abort();
    await until('git_transfers_queued', 0);

    // the place is free: the next clone queues (not refused) and runs once the slot is given back
    const clone = cloneHttp(main);
    await until('git_transfers_queued', 1);
    held.abort();
    const r = await clone;
    expect(r.code).toBe(0);
    await until('git_transfers_running', 0);
    expect(await metric('git_transfers_queued')).toBe(0);
  });
});
