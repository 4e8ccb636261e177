import { ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, Server } from 'node:http';
import { AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { adminCommands } from '../src/admin/users-admin';
import { createApp } from '../src/app.factory';
import { parseArgs, runChecks } from '../src/cli';
import { AppConfig, loadConfig } from '../src/config/config';
import { DataFolderLock, LockHolder } from '../src/database/data-folder-lock';
import { MIGRATIONS } from '../src/database/migrations';
import { buildIfStale } from './helpers/build';
import { captureStdout } from './helpers/stdout';

const REPO = process.cwd();

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

describe('admin CLI', () => {
  let dir: string;
  let config: AppConfig;
  const stdout = captureStdout();

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'glv3-cli-'));
    config = loadConfig({
      DATA_DIR: dir,
      DATABASE_URL: '',
      EMBEDDED_DB_DIR: join(dir, 'db'),
      LOG_LEVEL: 'silent',
      ROOT_PASSWORD: 'root-password-for-cli',
      SECRET_KEY: 'test-secret-key-test-secret-key-0123456789',
    });
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('parses --name value and --name=value and flags', () => {
    expect(parseArgs(['restore', '--file', 'a.tgz', '--force'])).toEqual({ command: 'restore', opts: { file: 'a.tgz', force: true } });
    expect(parseArgs(['create-admin', '--username=ops', '--email', 'o@x'])).toEqual({
      command: 'create-admin',
      opts: { username: 'ops', email: 'o@x' },
    });
    expect(() => parseArgs(['backup', 'stray'])).toThrow(/unexpected argument/);
  });

  it('check: one line per check; the migrations line fails on a new database, passes after migrating', async () => {
    expect(await runChecks(config)).toBe(false);
    expect(stdout.text).toMatch(/^database: ok$/m);
    expect(stdout.text).toMatch(/^migrations: FAILED: \d+ pending/m);
    expect(stdout.text).toMatch(/^data_dir: ok$/m);
    expect(stdout.text).toMatch(/^git: ok$/m);
    expect(stdout.text).toMatch(/^secret_key: ok$/m);
    // the SSH host keys the server presents, generated into DATA_DIR on first use, with their fingerprints
    expect(stdout.text).toMatch(/^ssh_host_keys: ok$/m);
    expect(stdout.text).toMatch(/^ {2}ed25519 SHA256:[A-Za-z0-9+/]{43}$/m);
    expect(stdout.text).toMatch(/^ {2}rsa SHA256:[A-Za-z0-9+/]{43}$/m);
  }, 120_000);

  it('check fails on an unreachable database', async () => {
    const bad = loadConfig({ DATA_DIR: dir, DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none', LOG_LEVEL: 'silent', SECRET_KEY: 'x'.repeat(40) });
    expect(await runChecks(bad)).toBe(false);
    expect(stdout.text).toMatch(/^database: FAILED: /m);
  });

  it('create-admin and reset-password go through the users service; the accounts sign in', async () => {
    expect(await adminCommands(config, 'create-admin', { username: 'ops', email: 'ops@example.com', password: 'ops-password-1' })).toBe(0);
    expect(stdout.text).toMatch(/created administrator ops/);
    expect(await adminCommands(config, 'create-admin', { username: 'ops', email: 'other@example.com', password: 'ops-password-1' })).toBe(1);
    stdout.clear();
    expect(await adminCommands(config, 'reset-password', { username: 'OPS' })).toBe(0);
    const generated = /password: (\S+)/.exec(stdout.text)?.[1];
    expect(generated).toBeDefined();
    expect(await adminCommands(config, 'reset-password', { username: 'nobody' })).toBe(1);
    expect(await runChecks(config)).toBe(true);

    const app = await createApp(config);
    try {
      const http = request(app.app.getHttpServer());
      await http.post('/api/v3/session').send({ login: 'ops', password: 'ops-password-1' }).expect(401);
      const s = await http.post('/api/v3/session').send({ login: 'ops', password: generated }).expect(201);
      expect(s.body.is_admin).toBe(true);
    } finally {
      await app.close();
    }
  }, 180_000);

  describe('beside a running server on the embedded default (the README runs `check` exactly then)', () => {
    let folder: string;
    let cfg: AppConfig;
    const last = MIGRATIONS[MIGRATIONS.length - 1].name;

    beforeEach(() => {
      folder = mkdtempSync(join(tmpdir(), 'glv3-cli-held-'));
      mkdirSync(join(folder, 'db'));
      cfg = loadConfig({
        DATA_DIR: folder,
        DATABASE_URL: '',
        EMBEDDED_DB_DIR: join(folder, 'db'),
        LOG_LEVEL: 'silent',
        SECRET_KEY: 'test-secret-key-test-secret-key-0123456789',
        SSH_ENABLED: 'false',
      });
    });
    afterEach(() => rmSync(folder, { recursive: true, force: true }));

    /** Holds the data folder as a server would, answering `details` on the lock; runs `check`. */
    async function checkHeldBy(details: Pick<LockHolder, 'listening' | 'migration'>): Promise<boolean> {
      const lock = await DataFolderLock.acquire(join(folder, 'db'), 'server', () => details);
      try {
        return await runChecks(cfg);
      } finally {
        await lock.release();
      }
    }

    it("asks the server where its lock says it listens: its readiness is the database's, its migrations are this build's", async () => {
      const ready: Server = createHttpServer((req, res) => res.end(req.url === '/-/readiness' ? '{"status":"ok"}' : 'no'));
      await new Promise<void>((r) => ready.listen(0, '127.0.0.1', r));
      const port = (ready.address() as AddressInfo).port;
      try {
        expect(await checkHeldBy({ listening: { host: '0.0.0.0', port }, migration: last })).toBe(true);
        expect(stdout.text).toContain(
          `database: ok (in use by the running server (pid ${process.pid}), which answers ready on http://127.0.0.1:${port}/-/readiness)\n` +
            'migrations: ok (applied by the running server at its start)\n',
        );
        expect(stdout.text).toMatch(/^data_dir: ok$/m);
        // a server built before this build's last migration: restart it
        stdout.clear();
        expect(await checkHeldBy({ listening: { host: '127.0.0.1', port }, migration: MIGRATIONS[MIGRATIONS.length - 2].name })).toBe(false);
        expect(stdout.text).toMatch(/^database: ok \(in use by the running server/m);
        expect(stdout.text).toContain(
          `migrations: FAILED: 1 of this build not applied by the running server (${last}): restart it, it applies them at start\n`,
        );
      } finally {
        await new Promise((r) => ready.close(r));
      }
    });

    it('fails when the server answers not ready, does not answer, or does not listen yet', async () => {
      const notReady: Server = createHttpServer((_req, res) => {
        res.statusCode = 503;
        res.end('{"status":"failed","checks":{"database":"failed"}}');
      });
      await new Promise<void>((r) => notReady.listen(0, '127.0.0.1', r));
      const port = (notReady.address() as AddressInfo).port;
      try {
        expect(await checkHeldBy({ listening: { host: '127.0.0.1', port }, migration: last })).toBe(false);
        expect(stdout.text).toContain(
          `database: FAILED: in use by the running server (pid ${process.pid}), which answers 503 on http://127.0.0.1:${port}/-/readiness: {"status":"failed","checks":{"database":"failed"}}\n`,
        );
      } finally {
        await new Promise((r) => notReady.close(r));
      }
      stdout.clear();
      const closed = await freePort();
      expect(await checkHeldBy({ listening: { host: '127.0.0.1', port: closed }, migration: last })).toBe(false);
      expect(stdout.text).toMatch(
        new RegExp(
          `^database: FAILED: in use by the running server \\(pid ${process.pid}\\), which does not answer on http://127\\.0\\.0\\.1:${closed}/-/readiness \\(.*ECONNREFUSED.*\\)$`,
          'm',
        ),
      );
      stdout.clear();
      expect(await checkHeldBy({})).toBe(false);
      expect(stdout.text).toMatch(/^database: FAILED: data folder .* is in use by another server \(pid \d+\); .* \(it does not listen yet: starting\?\)$/m);
      expect(stdout.text).toMatch(/^migrations: FAILED: not checked \(the database is in use\)$/m);
    });

    it('the built CLI beside the built server (`npm start`): exit 0, the database line names the server and its readiness', async () => {
      await buildIfStale();
      const port = await freePort();
      const env = {
        PATH: process.env.PATH ?? '',
        HOME: folder,
        DATA_DIR: './data',
        DATABASE_URL: '',
        PORT: String(port),
        SECRET_KEY: 'cli-secret-key-cli-secret-key-0123456789',
        ROOT_PASSWORD: 'cli-root-password',
        SSH_ENABLED: 'false',
        LOG_LEVEL: 'warn',
      };
      const server: ChildProcess = spawn(process.execPath, [join(REPO, 'dist/main.js')], { cwd: folder, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let log = '';
      server.stdout!.on('data', (d: Buffer) => (log += d.toString()));
      server.stderr!.on('data', (d: Buffer) => (log += d.toString()));
      try {
        const deadline = Date.now() + 120_000;
        while (!/"msg":"listening"/.test(log)) {
          if (server.exitCode !== null || Date.now() > deadline) throw new Error(`server did not start: ${log}`);
          await new Promise((r) => setTimeout(r, 200));
        }
        const check = await new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
          const c = spawn(process.execPath, [join(REPO, 'dist/cli.js'), 'check'], { cwd: folder, env, stdio: ['ignore', 'pipe', 'pipe'] });
          let out = '';
          let err = '';
          c.stdout.on('data', (d: Buffer) => (out += d.toString()));
          c.stderr.on('data', (d: Buffer) => (err += d.toString()));
          c.on('close', (code) => resolve({ code, out, err }));
        });
        expect({ code: check.code, err: check.err }).toEqual({ code: 0, err: '' });
        expect(check.out).toContain(
          `database: ok (in use by the running server (pid ${server.pid}), which answers ready on http://127.0.0.1:${port}/-/readiness)\n` +
            'migrations: ok (applied by the running server at its start)\n',
        );
        expect(check.out).not.toMatch(/FAILED/);
      } finally {
        server.kill('SIGTERM');
        await new Promise((r) => (server.exitCode !== null ? r(null) : server.once('exit', r)));
      }
    }, 400_000);
  });
});
