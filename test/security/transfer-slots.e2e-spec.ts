import { ClientRequest, IncomingHttpHeaders, request as httpRequest } from 'node:http';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GitCli } from '../helpers/git-cli';
import { startTestApp, TestApp, TestUser } from '../helpers/test-app';

const API = '/api/v3';
const ZERO = '0'.repeat(40);
const pkt = (s: string) => (s.length + 4).toString(16).padStart(4, '0') + s;

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * Issue 36, item 3: idle clients must not hold the git transfer slots (GIT_MAX_TRANSFERS). Over smart
 * HTTP, a POST's request (an upload-pack request whole, a push's list of ref updates) is read before a
 * slot (or a push's lock) is taken, bounded in size (10 MiB, 413) and time (GIT_HTTP_REQUEST_TIMEOUT,
 * 408); and the slots are shared between clients (a user, an anonymous address): one of them runs at
 * most GIT_MAX_TRANSFERS_PER_CLIENT and waits at most GIT_MAX_QUEUED_PER_CLIENT.
 *
 * Here: 4 slots (2 per client), a queue of 4 (1 per client), 5 s of wait, 6 s for a request to arrive.
 */
describe('security: idle or greedy git clients cannot hold every transfer slot', () => {
  let t: TestApp;
  let dir: string;
  let cli: GitCli;
  let alice: TestUser; // owns the public project
  let bob: TestUser; // clones while others hold on
  let pub: string; // public: anonymous clones
  let priv: string; // private, bob a reporter: clones as alice or bob, never anonymous
  let seq = 0;

  const basic = (u: TestUser) => `Basic ${Buffer.from(`${u.username}:${u.token}`).toString('base64')}`;

  /** A raw smart HTTP POST: its headers at once, its body as the caller writes it. */
  function post(
    path: string,
    service: 'upload-pack' | 'receive-pack',
    user?: TestUser,
    headers: Record<string, string> = {},
  ): { req: ClientRequest; answer: Promise<Answer> } {
    const req = httpRequest({
      host: '127.0.0.1',
      port: cli.port,
      method: 'POST',
      path: `/${path}.git/git-${service}`,
      headers: {
        ...(user ? { Authorization: basic(user) } : {}),
        'Content-Type': `application/x-git-${service}-request`,
        'Transfer-Encoding': 'chunked',
        ...headers,
      },
    });
    const answer = new Promise<Answer>((resolve) => {
      req.on('response', (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString('latin1')));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
        res.on('error', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      });
      req.on('error', () => resolve({ status: 0, headers: {}, body: '' }));
    });
    req.flushHeaders();
    return { req, answer };
  }

  /** An anonymous upload-pack POST that sends one 4-byte chunk every 200 ms and never ends. */
  function trickle(path: string): { answer: Promise<Answer>; stop: () => void } {
    const { req, answer } = post(path, 'upload-pack');
    const timer = setInterval(() => req.write('0032'), 200);
    void answer.then(() => clearInterval(timer));
    return {
      answer,
      stop: () => {
        clearInterval(timer);
        req.destroy();
      },
    };
  }

  /** A push of `user` whose list of ref updates arrives whole, and whose pack never does: it holds (or waits for) a slot. */
  function heldPush(path: string, user: TestUser): { answer: Promise<Answer>; stop: () => void } {
    const { req, answer } = post(path, 'receive-pack', user);
    req.write(pkt(`${ZERO} ${'1'.repeat(40)} refs/heads/held-${++seq}\0report-status\n`) + '0000');
    return { answer, stop: () => req.destroy() };
  }

  async function metric(name: string): Promise<number> {
    const res = await t.http.get('/-/metrics').expect(200);
    const m = new RegExp(`^${name.replace(/[{}"]/g, (c) => `\\${c}`)} (\\d+)$`, 'm').exec(res.text);
    return m ? Number(m[1]) : 0;
  }

  async function until(name: string, value: number): Promise<void> {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const v = await metric(name);
      if (v === value) return;
      if (Date.now() > deadline) throw new Error(`${name} stayed ${v}, expected ${value}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  const project = async (owner: TestUser, name: string, visibility = 0) =>
    (await t.http.post(`${API}/projects`).set('PRIVATE-TOKEN', owner.token).send({ name, visibility_level: visibility }).expect(201)).body
      .path_with_namespace as string;

  const clone = (path: string, user: TestUser) => cli.run(['clone', '-q', cli.url(path, user.username, user.token), join(dir, `clone-${++seq}`)]);

  beforeAll(async () => {
    t = await startTestApp({
      GIT_MAX_TRANSFERS: '4',
      GIT_MAX_QUEUED: '4',
      GIT_QUEUE_TIMEOUT: '5',
      GIT_HTTP_REQUEST_TIMEOUT: '6',
    });
    expect(t.config.gitTransfers).toEqual({ maxRunning: 4, maxQueued: 4, queueTimeoutMs: 5_000 });
    dir = mkdtempSync(join(tmpdir(), 'glv3-transfer-slots-'));
    cli = await GitCli.listen(t, dir);
    alice = await t.createUser({ username: 'alice-slots', projects_limit: 100 });
    bob = await t.createUser({ username: 'bob-slots' });
    pub = await project(alice, 'open', 20);
    const work = join(dir, 'work');
    await cli.ok(['init', '-q', work]);
    await cli.commit(work, { 'README.md': '# open\n' }, 'first');
    await cli.ok(['push', '-q', cli.url(pub, alice.username, alice.token), 'master'], work);
    const p = await t.http.post(`${API}/projects`).set('PRIVATE-TOKEN', alice.token).send({ name: 'closed', visibility_level: 0 }).expect(201);
    priv = p.body.path_with_namespace;
    await t.http.post(`${API}/projects/${p.body.id}/members`).set('PRIVATE-TOKEN', alice.token).send({ user_id: bob.id, access_level: 20 }).expect(201);
    await cli.ok(['push', '-q', cli.url(priv, alice.username, alice.token), 'master'], work);
  });

  afterAll(async () => {
    await t?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  afterEach(async () => {
    await until('git_transfers_running', 0);
    await until('git_transfers_queued', 0);
  });

  it('6 anonymous upload-pack POSTs trickling 4 bytes at a time hold no slot: a clone by another user succeeds at once; they are cut off with 408', async () => {
    const started = Date.now();
    const trickles = Array.from({ length: 6 }, () => trickle(pub));
    let answered = 0;
    for (const x of trickles) void x.answer.then(() => answered++);
    try {
      await new Promise((r) => setTimeout(r, 500));
      // no git runs for them, nothing waits
      expect(await metric('git_transfers_running')).toBe(0);
      expect(await metric('git_transfers_queued')).toBe(0);
      const r = await clone(priv, bob);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(readFileSync(join(dir, `clone-${seq}`, 'README.md'), 'utf8')).toBe('# open\n');
      expect(answered).toBe(0); // the trickles were still there all along
      // the request did not arrive in time: 408 with the reason, and the connection closes
      for (const answer of await Promise.all(trickles.map((x) => x.answer))) {
        expect(answer.status).toBe(408);
        expect(answer.headers['content-type']).toMatch(/^application\/json/);
        expect(answer.headers.connection).toBe('close');
        expect(JSON.parse(answer.body)).toEqual({
          message: '408 Request Timeout - the upload-pack request (its want and have lines) did not arrive within 6 seconds',
        });
      }
      expect(Date.now() - started).toBeGreaterThanOrEqual(5_900);
    } finally {
      for (const x of trickles) x.stop();
    }
  });

  it("a push whose list of ref updates trickles holds no slot and no lock: the same user's next push to the project lands", async () => {
    const { req, answer } = post(pub, 'receive-pack', alice);
    const timer = setInterval(() => req.write('f'), 200); // `ffff…`: one long pkt-line that never ends
    try {
      await new Promise((r) => setTimeout(r, 400));
      expect(await metric('git_transfers_running')).toBe(0);
      const work = join(dir, `push-${++seq}`);
      await cli.ok(['clone', '-q', cli.url(pub, alice.username, alice.token), work]);
      await cli.commit(work, { 'second.txt': 'two\n' }, 'second');
      const pushed = await cli.run(['push', '-q', 'origin', 'master'], work);
      expect(pushed.stderr).toBe('');
      expect(pushed.code).toBe(0);
      expect((await answer).status).toBe(408);
    } finally {
      clearInterval(timer);
      req.destroy();
    }
  });

  it('one user runs at most half of the slots and has at most its share of the queue waiting; another user clones at once', async () => {
    // a project each: a push also holds its repository's lock
    const targets = [await project(alice, 'held-1'), await project(alice, 'held-2'), await project(alice, 'held-3'), await project(alice, 'held-4')];
    const held: { stop: () => void }[] = [];
    try {
      const running = heldPush(targets[0], alice);
      held.push(running, heldPush(targets[1], alice));
      await until('git_transfers_running', 2);
      held.push(heldPush(targets[2], alice)); // alice's share of the slots (2 of 4) is taken: it waits
      await until('git_transfers_queued', 1);
      // alice's share of the queue (1 of 4) is taken too: refused at once, in words that say why
      const refused = await heldPush(targets[3], alice).answer;
      expect(refused.status).toBe(503);
      expect(refused.headers['retry-after']).toBe('5');
      expect(refused.body).toBe('fatal: too many git transfers of yours at once (the server shares its slots between users), try again later\n');
      expect(await metric('git_transfers_rejected_total{reason="client_share"}')).toBeGreaterThanOrEqual(1);
      // alice's ref advertisement is refused alike (git prints its text), bob's clone runs at once on a free slot
      const mine = await clone(priv, alice);
      expect(mine.code).not.toBe(0);
      expect(mine.stderr).toContain('remote: fatal: too many git transfers of yours at once');
      const started = Date.now();
      const r = await clone(priv, bob);
      expect(r.code).toBe(0);
      expect(Date.now() - started).toBeLessThan(4_000); // not after alice's transfers (nor the 5 s queue timeout)
      // alice's first push gives its slot back: her waiting one takes it
      running.stop();
      await until('git_transfers_queued', 0);
      expect(await metric('git_transfers_running')).toBe(2);
    } finally {
      for (const x of held) x.stop();
    }
  });

  it('an upload-pack request over 10 MiB is refused with 413 before git starts; one of 5 MB of haves is served', async () => {
    const line = pkt(`have ${'a'.repeat(40)}\n`); // 50 bytes
    const oneMiB = Buffer.from(line.repeat((1024 * 1024) / 50 + 1));
    const over = post(pub, 'upload-pack');
    for (let i = 0; i < 11 && !over.req.destroyed; i++) over.req.write(oneMiB);
    over.req.end();
    const refused = await over.answer;
    expect(refused.status).toBe(413);
    expect(refused.headers.connection).toBe('close');
    expect(JSON.parse(refused.body)).toEqual({
      message: '413 Request Entity Too Large - the upload-pack request (its want and have lines) is over 10 MiB',
    });

    // 100,000 haves (5 MB) are within the cap: git gets them and answers
    const sha = (await cli.ok(['ls-remote', cli.url(pub), 'refs/heads/master'])).split('\t')[0];
    const within = post(pub, 'upload-pack');
    within.req.end(Buffer.concat([Buffer.from(pkt(`want ${sha}\n`) + '0000'), Buffer.from(line.repeat(100_000)), Buffer.from(pkt('done\n'))]));
    const served = await within.answer;
    expect(served.status).toBe(200);
    expect(served.headers['content-type']).toBe('application/x-git-upload-pack-result');
    expect(served.body).toContain('PACK');
  });
});
