import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { createApp } from '../src/app.factory';
import { loadConfig } from '../src/config/config';
import { ci } from './helpers/ci';
import { startTestApp, TestApp } from './helpers/test-app';
import { createTestDatabase } from './helpers/test-db';

type Line = Record<string, unknown>;

/** Captures the JSON lines the logger writes to stdout while `fn` runs. */
async function captured<T>(fn: () => Promise<T>): Promise<{ lines: Line[]; raw: string; result: T }> {
  const write = process.stdout.write.bind(process.stdout);
  let raw = '';
  process.stdout.write = (chunk: string | Uint8Array) => {
    raw += chunk.toString();
    return true;
  };
  try {
    const result = await fn();
    await new Promise((r) => setTimeout(r, 50)); // 'finish' handlers of the last responses
    const lines = raw
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Line);
    return { lines, raw, result };
  } finally {
    process.stdout.write = write;
  }
}

const requestLines = (lines: Line[], path: string) => lines.filter((l) => l.msg === 'request' && String(l.path).startsWith(path));

describe('request log levels and fields', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ LOG_LEVEL: 'debug' });
  });
  afterAll(() => t?.close());

  it("a runner's empty poll is logged at debug; a poll with a bad token and ordinary API requests at info, with the user", async () => {
    const runner = await ci(t).registerRunner();
    const { lines } = await captured(async () => {
      await ci(t).api.requestBuild(runner.token).expect(404);
      await ci(t).api.requestBuild('no-such-runner-token').expect(403);
      await t.http.get('/api/v3/user').set('PRIVATE-TOKEN', t.root.token).expect(200);
    });
    const polls = requestLines(lines, '/ci/api/v1/builds/register');
    expect(polls.map((l) => [l.level, l.status])).toEqual([
      ['debug', 404],
      ['info', 403],
    ]);
    expect(requestLines(lines, '/api/v3/user')).toEqual([expect.objectContaining({ level: 'info', status: 200, user_id: t.root.id, user: 'root' })]);
  });

  it('health probes and metrics scrapes that answer 200 are logged at debug', async () => {
    const { lines } = await captured(async () => {
      await t.http.get('/-/health').expect(200);
      await t.http.get('/-/readiness').expect(200);
      await t.http.get('/-/metrics').expect(200);
    });
    expect(['/-/health', '/-/readiness', '/-/metrics'].map((p) => requestLines(lines, p).map((l) => [l.level, l.status]))).toEqual([
      [['debug', 200]],
      [['debug', 200]],
      [['debug', 200]],
    ]);
  });

  it("git's first unauthenticated info/refs (the 401 challenge) is logged at debug; authenticated git requests at info with the user", async () => {
    const project = (await t.http.post('/api/v3/projects').set('PRIVATE-TOKEN', t.root.token).send({ name: 'logged' }).expect(201)).body;
    const path = `/root/logged.git/info/refs?service=git-upload-pack`;
    const { lines } = await captured(async () => {
      await t.http.get(path).expect(401);
      await t.http.get(path).auth('root', 'wrong-password').expect(401);
      await t.http.get(path).auth('root', t.root.password).expect(200);
      await t.http.get(path).auth('root', t.root.token).expect(200);
    });
    expect(project.path_with_namespace).toBe('root/logged');
    expect(requestLines(lines, '/root/logged.git/').map((l) => [l.level, l.status, l.user, l.user_id])).toEqual([
      ['debug', 401, null, null],
      ['info', 401, null, null], // wrong credentials are worth a line
      ['info', 200, 'root', t.root.id],
      ['info', 200, 'root', t.root.id],
    ]);
    // at the default level the challenge leaves no line at all
    const info = await startTestApp({ LOG_LEVEL: 'info' });
    try {
      const quiet = await captured(() => info.http.get('/root/none.git/info/refs?service=git-upload-pack').expect(401));
      expect(requestLines(quiet.lines, '/root/none.git/')).toEqual([]);
    } finally {
      await info.close();
    }
  });
});

describe('the generated root password', () => {
  it('is written to DATA_DIR/initial_root_password (0600) and never to the log, which names the file', async () => {
    const db = process.env.DATABASE_URL ? await createTestDatabase() : undefined; // a database without users
    const dataDir = mkdtempSync(join(tmpdir(), 'glv3-rootpw-'));
    const config = loadConfig({
      DATA_DIR: dataDir,
      EMBEDDED_DB_DIR: 'memory://',
      DATABASE_URL: db?.url ?? '',
      LOG_LEVEL: 'debug',
      SSH_ENABLED: 'false',
      ROOT_PASSWORD: '',
      SECRET_KEY: 'test-secret-key-test-secret-key-0123456789',
    });
    try {
      const {
        raw,
        lines,
        result: app,
      } = await captured(async () => {
        const a = await createApp(config);
        try {
          const file = join(dataDir, 'initial_root_password');
          const password = /^Password: (\S+)$/m.exec(readFileSync(file, 'utf8'))![1];
          // the password in the file is root's
          await request(a.app.getHttpServer()).post('/api/v3/session').send({ login: 'root', password }).expect(201);
          return { file, password };
        } finally {
          await a.close();
        }
      });
      expect(statSync(app.file).mode & 0o777).toBe(0o600);
      expect(app.password.length).toBeGreaterThanOrEqual(16);
      expect(raw).not.toContain(app.password);
      expect(lines).toContainEqual(expect.objectContaining({ level: 'warn', msg: expect.stringContaining(app.file), password_file: app.file }));
    } finally {
      await db?.release();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
