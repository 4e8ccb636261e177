import { ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { buildIfStale } from './helpers/build';

/**
 * The embedded database is a single-process database: its data folder is locked by the process that
 * opens it (DataFolderLock), so a second server or an admin CLI command on the same folder is refused
 * (instead of silently writing beside the first and losing its writes), and a crashed holder never
 * leaves the lock stuck. Real processes from dist/ (built when stale, as `npm start` does) on the
 * real embedded database.
 */
const REPO = process.cwd();
const ROOT_PASSWORD = 'lock-root-password';
const API = '/api/v3';
const IN_USE = (pid: number) =>
  new RegExp(
    `^data folder \\./data/db is in use by another server \\(pid ${pid}\\); stop it, or set DATABASE_URL to share a PostgreSQL database between instances\\n$`,
  );

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

describe('embedded data folder lock (real processes)', () => {
  let home: string;
  const children: ChildProcess[] = [];

  const env = (port = 0) => ({
    PATH: process.env.PATH ?? '',
    HOME: home,
    DATA_DIR: './data',
    DATABASE_URL: '',
    PORT: String(port),
    HOST: '127.0.0.1',
    EXTERNAL_URL: `http://127.0.0.1:${port}`,
    SECRET_KEY: 'lock-secret-key-lock-secret-key-0123456789',
    ROOT_PASSWORD,
    SSH_ENABLED: 'false',
    LOG_LEVEL: 'warn',
  });

  /** Runs a process in `home` to its end: exit code, stdout, stderr. */
  function run(args: string[], extra: Record<string, string> = {}, timeoutMs = 120_000): Promise<{ code: number | null; out: string; err: string }> {
    return new Promise((resolve, reject) => {
      const c = spawn(process.execPath, args, { cwd: home, env: { ...env(), ...extra }, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      const timer = setTimeout(() => c.kill('SIGKILL'), timeoutMs);
      c.stdout.on('data', (d: Buffer) => (out += d.toString()));
      c.stderr.on('data', (d: Buffer) => (err += d.toString()));
      c.on('error', reject);
      c.on('close', (code) => {
        clearTimeout(timer);
        resolve({ code, out, err });
      });
    });
  }

  /** Starts the built server on the shared data folder and waits for readiness. */
  async function startServer(): Promise<{ child: ChildProcess; port: number; http: () => ReturnType<typeof request> }> {
    const port = await freePort();
    const child = spawn(process.execPath, [join(REPO, 'dist/main.js')], { cwd: home, env: env(port), stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(child);
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const deadline = Date.now() + 120_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`server exited: ${out}`);
      if (
        await request(`http://127.0.0.1:${port}`)
          .get('/-/readiness')
          .then(
            (r) => r.status === 200,
            () => false,
          )
      )
        break;
      if (Date.now() > deadline) throw new Error(`server did not start: ${out}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    return { child, port, http: () => request(`http://127.0.0.1:${port}`) };
  }

  const exited = (c: ChildProcess) =>
    new Promise<void>((resolve) => (c.exitCode !== null || c.signalCode !== null ? resolve() : c.once('exit', () => resolve())));

  beforeAll(async () => {
    await buildIfStale();
    home = mkdtempSync(join(tmpdir(), 'glv3-lock-'));
  }, 400_000);
  afterAll(() => {
    for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
    if (home) rmSync(home, { recursive: true, force: true });
  });

  it('a second server and every CLI command are refused while a server holds the folder; after kill -9 a new server starts with every acknowledged write', async () => {
    const first = await startServer();
    const pid = first.child.pid!;
    const token: string = (await first.http().post(`${API}/session`).send({ login: 'root', password: ROOT_PASSWORD }).expect(201)).body.private_token;
    const project = (await first.http().post(`${API}/projects`).set('PRIVATE-TOKEN', token).send({ name: 'locked' }).expect(201)).body;
    const one = (await first.http().post(`${API}/projects/${project.id}/issues`).set('PRIVATE-TOKEN', token).send({ title: 'one' }).expect(201)).body;
    expect(one.iid).toBe(1);

    // a second server on the same folder: one line naming the holder, no stack trace, non-zero exit
    const second = await run([join(REPO, 'dist/main.js')], { PORT: String(await freePort()) });
    expect(second.code).toBe(1);
    expect(second.err).toMatch(IN_USE(pid));
    expect(second.out).not.toMatch(/listening/);

    // every CLI command that opens the database is refused the same way (not "created administrator alice")
    const commands = [
      ['migrate'],
      ['create-admin', '--username', 'alice', '--email', 'alice@example.com', '--password', 'alice-password-1'],
      ['reset-password', '--username', 'root', '--password', 'changed-password-1'],
      ['backup', '--file', join(home, 'b.tar.gz')],
      ['restore', '--file', join(home, 'b.tar.gz'), '--force'],
    ];
    for (const args of commands) {
      const r = await run([join(REPO, 'dist/cli.js'), ...args]);
      expect({ args, code: r.code, err: r.err, out: r.out }).toEqual({ args, code: 1, err: expect.stringMatching(IN_USE(pid)), out: '' });
    }
    // `check` asks the holder instead (where its lock says it listens): its database is the server's
    const check = await run([join(REPO, 'dist/cli.js'), 'check']);
    expect(check.code).toBe(0);
    expect(check.out).toContain(
      `database: ok (in use by the running server (pid ${pid}), which answers ready on http://127.0.0.1:${first.port}/-/readiness)\n` +
        'migrations: ok (applied by the running server at its start)\n',
    );
    expect(check.out).toMatch(/^data_dir: ok$/m);
    expect(check.out).toMatch(/^secret_key: ok$/m);

    // the holder kept serving meanwhile, and kept counting
    const two = (await first.http().post(`${API}/projects/${project.id}/issues`).set('PRIVATE-TOKEN', token).send({ title: 'two' }).expect(201)).body;
    expect(two.iid).toBe(2);

    // a crash never leaves the lock stuck: after kill -9 the next server starts, with every acknowledged write
    first.child.kill('SIGKILL');
    await exited(first.child);
    const next = await startServer();
    const issues = (await next.http().get(`${API}/projects/${project.id}/issues`).set('PRIVATE-TOKEN', token).expect(200)).body;
    expect(issues.map((i: { iid: number; title: string }) => [i.iid, i.title]).sort()).toEqual([
      [1, 'one'],
      [2, 'two'],
    ]);
    expect((await next.http().get(`${API}/users?username=alice`).set('PRIVATE-TOKEN', token).expect(200)).body).toEqual([]);
    // the old password still signs in: the refused reset-password changed nothing
    await next.http().post(`${API}/session`).send({ login: 'root', password: ROOT_PASSWORD }).expect(201);
    const three = (await next.http().post(`${API}/projects/${project.id}/issues`).set('PRIVATE-TOKEN', token).send({ title: 'three' }).expect(201)).body;
    expect(three.iid).toBe(3);

    // the new holder is the one named now; once it stops cleanly, the CLI gets the folder
    const refused = await run([join(REPO, 'dist/cli.js'), 'migrate']);
    expect(refused.err).toMatch(IN_USE(next.child.pid!));
    next.child.kill('SIGTERM');
    await exited(next.child);
    const created = await run([
      join(REPO, 'dist/cli.js'),
      'create-admin',
      '--username',
      'alice',
      '--email',
      'alice@example.com',
      '--password',
      'alice-password-1',
    ]);
    expect({ code: created.code, err: created.err }).toEqual({ code: 0, err: '' });
    expect(created.out).toMatch(/created administrator alice/);
  }, 600_000);

  it('processes starting at the same moment on a new DATA_DIR all end up with the one secret key on disk', async () => {
    const dataDir = join(home, 'fresh');
    const at = Date.now() + 3000;
    // each waits for the same instant, then reads (or creates) the key as the server and the CLI do
    const script = `
      const { loadConfig } = require(${JSON.stringify(join(REPO, 'dist/config/config.js'))});
      while (Date.now() < ${at}) {}
      process.stdout.write(loadConfig({ DATA_DIR: ${JSON.stringify(dataDir)}, DATABASE_URL: '' }).secretKey.toString('hex'));`;
    const results = await Promise.all(Array.from({ length: 8 }, () => run(['-e', script], { SECRET_KEY: '' })));
    const { readFileSync } = await import('node:fs');
    const onDisk = Buffer.from(readFileSync(join(dataDir, 'secret_key'), 'utf8').trim(), 'utf8').toString('hex');
    expect(results.map((r) => [r.code, r.err])).toEqual(Array(8).fill([0, '']));
    expect(onDisk.length).toBeGreaterThanOrEqual(64);
    expect(results.map((r) => r.out)).toEqual(Array(8).fill(onDisk));
  }, 120_000);
});
