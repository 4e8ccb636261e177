import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase, TestDatabase } from './helpers/test-db';
import { buildIfStale } from './helpers/build';

/**
 * Start-up failures an operator can fix print one line (what failed, what to do) on stderr and exit
 * non-zero, without a stack trace. Real processes from dist/ (built when stale, as `npm start` does).
 */
const REPO = process.cwd();

function listen(): Promise<{ server: Server; port: number }> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => resolve({ server, port: (server.address() as { port: number }).port }));
  });
}

describe('start-up failures: one clear line, non-zero exit, no stack trace (real processes)', () => {
  let home: string;
  let db: TestDatabase | undefined;

  const run = (extra: Record<string, string>): Promise<{ code: number | null; out: string; err: string }> =>
    new Promise((resolve, reject) => {
      const env = {
        PATH: process.env.PATH ?? '',
        HOME: home,
        DATA_DIR: './data',
        DATABASE_URL: db?.url ?? '',
        HOST: '127.0.0.1',
        SECRET_KEY: 'startup-secret-key-startup-secret-key-0123',
        ROOT_PASSWORD: 'startup-root-password',
        SSH_ENABLED: 'false',
        LOG_LEVEL: 'warn',
        ...extra,
      };
      const c = spawn(process.execPath, [join(REPO, 'dist/main.js')], { cwd: home, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      const timer = setTimeout(() => c.kill('SIGKILL'), 120_000);
      c.stdout.on('data', (d: Buffer) => (out += d.toString()));
      c.stderr.on('data', (d: Buffer) => (err += d.toString()));
      c.on('error', reject);
      c.on('close', (code) => {
        clearTimeout(timer);
        resolve({ code, out, err });
      });
    });

  beforeAll(async () => {
    await buildIfStale();
    home = mkdtempSync(join(tmpdir(), 'glv3-startup-'));
    if (process.env.DATABASE_URL) db = await createTestDatabase();
  }, 400_000);
  afterAll(async () => {
    rmSync(home, { recursive: true, force: true });
    await db?.release();
  });

  it('a port already in use', async () => {
    const { server, port } = await listen();
    try {
      const r = await run({ PORT: String(port), EXTERNAL_URL: `http://127.0.0.1:${port}` });
      expect(r.code).toBe(1);
      expect(r.err).toBe(`cannot listen on 127.0.0.1:${port}: the port is already in use; stop the other process or set PORT to a free port\n`);
      expect(r.out).not.toMatch(/listening|\n\s+at /);
    } finally {
      server.close();
    }
  }, 180_000);

  it('a PostgreSQL database that cannot be reached (closed port): the URL without its password', async () => {
    const { server, port } = await listen();
    await new Promise((r) => server.close(r)); // a port that was just free: nothing listens there now
    const r = await run({ DATABASE_URL: `postgres://gitlab:s3cret-pw@127.0.0.1:${port}/gitlab`, PORT: '0' });
    expect(r.code).toBe(1);
    expect(r.err).toBe(
      `cannot connect to the database at postgres://gitlab:***@127.0.0.1:${port}/gitlab (connect ECONNREFUSED 127.0.0.1:${port}); ` +
        'start PostgreSQL or correct DATABASE_URL (unset it to use the embedded database)\n',
    );
    expect(r.out).not.toMatch(/listening|\n\s+at /);
    expect(r.err + r.out).not.toContain('s3cret-pw');
  }, 180_000);

  it('a setting that is not understood (here a misspelled LDAP key): refused at boot, named, never ignored', async () => {
    const servers = JSON.stringify([{ host: '127.0.0.1', port: 389, base: 'dc=example,dc=org', bind_dn: 'cn=gitlab', password: 'bind-s3cret', metod: 'tls' }]);
    const r = await run({ LDAP_SERVERS: servers, PORT: '0' });
    expect(r.code).toBe(1);
    expect(r.err).toBe(
      'invalid configuration: LDAP_SERVERS[0].metod is not a setting this server understands (did you mean method?): refused rather than ignored\n',
    );
    expect(r.out).not.toMatch(/listening|\n\s+at /);
    expect(r.err + r.out).not.toContain('bind-s3cret');
  }, 180_000);
});
