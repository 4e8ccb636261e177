import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { adminCommands } from '../src/admin/users-admin';
import { createApp } from '../src/app.factory';
import { parseArgs, runChecks } from '../src/cli';
import { AppConfig, loadConfig } from '../src/config/config';
import { captureStdout } from './helpers/stdout';

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
});
