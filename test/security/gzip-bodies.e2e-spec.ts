import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { IncomingHttpHeaders, request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deflateSync, gzipSync } from 'node:zlib';
import { GitCli } from '../helpers/git-cli';
import { startTestApp, TestApp, TestUser } from '../helpers/test-app';

const API = '/api/v3';
const ZERO = '0'.repeat(40);
const MiB = 1024 * 1024;
const pkt = (s: string) => (s.length + 4).toString(16).padStart(4, '0') + s;

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * Issue 36, item 4: a gzip-compressed request body is capped by the size it inflates to, not by the
 * bytes sent (381 kB had become 128 MB of `want` lines for git). Git's POSTs: an upload-pack request
 * at 10 MiB inflated; a push (no size limit of its own) past 10 MiB only at 32 times the bytes sent
 * at most. The API's and the runner API's JSON and form bodies: body-parser's limits apply to the
 * inflated body (10 MB, 32 MB). The other raw bodies (trace PATCH, artifacts) are stored as sent,
 * never inflated.
 */
describe('security: gzip request bodies are capped by their inflated size', () => {
  let t: TestApp;
  let dir: string;
  let cli: GitCli;
  let alice: TestUser;
  let path: string;

  const basic = (u: TestUser) => `Basic ${Buffer.from(`${u.username}:${u.token}`).toString('base64')}`;

  /** One POST with a whole body (compressed by the caller), answered or cut off. */
  function send(target: string, headers: Record<string, string>, body: Buffer): Promise<Answer> {
    return new Promise<Answer>((resolve) => {
      const req = httpRequest({
        host: '127.0.0.1',
        port: cli.port,
        method: 'POST',
        path: target,
        headers: { ...headers, 'Content-Length': String(body.length) },
      });
      req.on('response', (res) => {
        let text = '';
        res.on('data', (d: Buffer) => (text += d.toString('latin1')));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
        res.on('error', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
      });
      req.on('error', () => resolve({ status: 0, headers: {}, body: '' }));
      req.end(body);
    });
  }

  const git = (service: 'upload-pack' | 'receive-pack', body: Buffer, user?: TestUser) =>
    send(
      `/${path}.git/git-${service}`,
      { 'Content-Type': `application/x-git-${service}-request`, 'Content-Encoding': 'gzip', ...(user ? { Authorization: basic(user) } : {}) },
      body,
    );

  /**
   * A pack of one blob of `size` zero bytes, its zlib stream made of stored (uncompressed) blocks: a
   * valid pack as large as its content, which `index-pack` reads to its end — and which gzip
   * compresses about a thousandfold.
   */
  function storedPack(size: number): Buffer {
    const header = Buffer.alloc(12);
    header.write('PACK', 0, 'latin1');
    header.writeUInt32BE(2, 4);
    header.writeUInt32BE(1, 8);
    // object header: type 3 (blob), size in 4 + 7n bits
    const sizeBytes: number[] = [];
    let n = size;
    let first = (3 << 4) | (n & 0x0f);
    n = Math.floor(n / 16);
    while (n > 0) {
      sizeBytes.push(first | 0x80);
      first = n & 0x7f;
      n = Math.floor(n / 128);
    }
    sizeBytes.push(first);
    const body = Buffer.concat([header, Buffer.from(sizeBytes), deflateSync(Buffer.alloc(size), { level: 0 })]);
    return Buffer.concat([body, createHash('sha1').update(body).digest()]);
  }

  beforeAll(async () => {
    t = await startTestApp();
    dir = mkdtempSync(join(tmpdir(), 'glv3-gzip-bodies-'));
    cli = await GitCli.listen(t, dir);
    alice = await t.createUser({ username: 'alice-gzip' });
    const res = await t.http.post(`${API}/projects`).set('PRIVATE-TOKEN', alice.token).send({ name: 'zipped', visibility_level: 20 }).expect(201);
    path = res.body.path_with_namespace;
    const work = join(dir, 'work');
    await cli.ok(['init', '-q', work]);
    await cli.commit(work, { 'README.md': '# zipped\n' }, 'first');
    await cli.ok(['push', '-q', cli.url(path, alice.username, alice.token), 'master'], work);
  });

  afterAll(async () => {
    await t?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('an upload-pack request that inflates past 10 MiB is refused with 413 (the 381 kB of the report: 128 MB of wants)', async () => {
    const sha = (await cli.ok(['ls-remote', cli.url(path), 'refs/heads/master'])).split('\t')[0];
    const wants = Buffer.from(pkt(`want ${sha}\n`).repeat((12 * MiB) / 50) + '0000' + pkt('done\n'));
    const body = gzipSync(wants);
    expect(body.length).toBeLessThan(400 * 1024);
    const refused = await git('upload-pack', body);
    expect(refused.status).toBe(413);
    expect(refused.headers.connection).toBe('close');
    expect(JSON.parse(refused.body)).toEqual({ message: '413 Request Entity Too Large - the gzip-compressed upload-pack request inflates to over 10 MiB' });

    // a gzip request within the cap is served as git sends it
    const fine = await git('upload-pack', gzipSync(Buffer.from(pkt(`want ${sha}\n`) + '0000' + pkt('done\n'))));
    expect(fine.status).toBe(200);
    expect(fine.body).toContain('PACK');
    // one that does not inflate is refused, not handed to git
    const broken = await git('upload-pack', Buffer.concat([gzipSync(wants).subarray(0, 200), Buffer.from('not gzip at all')]));
    expect(broken.status).toBe(400);
    expect(JSON.parse(broken.body)).toEqual({ message: '400 Bad request - the gzip-compressed request body does not inflate' });
  });

  it('a gzip push that inflates past 10 MiB at over 32 times its size is refused with 413 and moves no ref; a gzip push of a real pack lands', async () => {
    const sha = '1'.repeat(40);
    const commands = Buffer.from(pkt(`${ZERO} ${sha} refs/heads/bomb\0report-status\n`) + '0000');
    const bomb = gzipSync(Buffer.concat([commands, storedPack(24 * MiB)]));
    expect(bomb.length).toBeLessThan(MiB);
    const refused = await git('receive-pack', bomb, alice);
    expect(refused.status).toBe(413);
    expect(JSON.parse(refused.body)).toEqual({
      message: '413 Request Entity Too Large - the gzip-compressed push inflates to over 10 MiB at more than 32 times its compressed size',
    });
    const branches = await t.http
      .get(`${API}/projects/${encodeURIComponent(path)}/repository/branches`)
      .set('PRIVATE-TOKEN', alice.token)
      .expect(200);
    expect(branches.body.map((b: { name: string }) => b.name)).toEqual(['master']);

    // a real push, gzip-compressed (stock git never compresses one, other clients may): it lands
    const work = join(dir, 'work');
    const head = (await cli.ok(['rev-parse', 'HEAD'], work)).trim();
    const next = await cli.commit(work, { 'more.txt': 'more\n' }, 'second');
    const pack = execFileSync('git', ['pack-objects', '--stdout', '-q', '--revs'], { cwd: work, input: `${next}\n^${head}\n` });
    const push = Buffer.concat([Buffer.from(pkt(`${head} ${next} refs/heads/master\0report-status\n`) + '0000'), pack]);
    const landed = await git('receive-pack', gzipSync(push), alice);
    expect(landed.status).toBe(200);
    expect(landed.body).toContain('ok refs/heads/master');
  });

  it("the API's and the runner API's JSON and form bodies are capped by their inflated size (413)", async () => {
    const json = gzipSync(Buffer.from(JSON.stringify({ login: 'x', password: 'y', pad: 'a'.repeat(11 * MiB) })));
    const form = gzipSync(Buffer.from(`login=x&password=y&pad=${'a'.repeat(11 * MiB)}`));
    expect(json.length).toBeLessThan(MiB);
    for (const [type, body] of [
      ['application/json', json],
      ['application/x-www-form-urlencoded', form],
    ] as const) {
      const res = await send(`${API}/session`, { 'Content-Type': type, 'Content-Encoding': 'gzip' }, body);
      expect([type, res.status, JSON.parse(res.body)]).toEqual([type, 413, { message: '413 Request Entity Too Large' }]);
    }
    const runner = gzipSync(Buffer.from(JSON.stringify({ token: 'x', pad: 'a'.repeat(33 * MiB) })));
    const res = await send('/ci/api/v1/runners/register', { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' }, runner);
    expect(res.status).toBe(413);
    expect(JSON.parse(res.body)).toEqual({ message: '413 Request Entity Too Large' });
  });
});
