import { Client } from 'pg';
import { captureStdout } from '../helpers/stdout';
import { startTestApp, TestApp, TestUser } from '../helpers/test-app';

const API = '/api/v3';
const pg = !!process.env.DATABASE_URL;
const UNCHECKED = { message: '503 Service Unavailable - the credentials could not be checked, try again' };

/**
 * Issue 36, item 10: a credential lookup the database cannot answer is a 503, logged with the request
 * id — never a 401 (git over HTTP took a failed OAuth token lookup for a bad token: `.catch(() =>
 * undefined)`; a failed password sign-in the same way) and never an anonymous request (a public API
 * route served a caller whose token could not be checked as nobody). The database fails for real: a
 * second connection holds an ACCESS EXCLUSIVE lock on the table the lookup reads, and the lookup
 * runs into DB_STATEMENT_TIMEOUT (1 s).
 */
(pg ? describe : describe.skip)('security: a credential lookup that fails answers 503, never 401 or anonymous (PostgreSQL)', () => {
  let t: TestApp;
  let alice: TestUser;
  let path: string;
  const stdout = captureStdout();

  /** Runs `fn` while another connection holds `table` locked (every read of it waits, then times out). */
  async function whileLocked<T>(table: string, fn: () => Promise<T>): Promise<T> {
    const sql = new Client({ connectionString: t.config.databaseUrl });
    await sql.connect();
    try {
      await sql.query('BEGIN');
      await sql.query(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
      return await fn();
    } finally {
      await sql.query('ROLLBACK').catch(() => undefined);
      await sql.end();
    }
  }

  const basic = (login: string, secret: string) => `Basic ${Buffer.from(`${login}:${secret}`).toString('base64')}`;
  const infoRefs = (auth: string) => t.http.get(`/${path}.git/info/refs?service=git-upload-pack`).set('Authorization', auth);

  /** The error log line of the request, by its id. */
  function logged(requestId: string): Record<string, unknown> | undefined {
    return stdout.text
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((l) => l.msg === 'service unavailable' && l.request_id === requestId);
  }

  /** A new OAuth token, never looked up yet (a lookup that succeeded is remembered for a few seconds). */
  const freshOauthToken = async (): Promise<string> =>
    (await t.http.post('/oauth/token').send({ grant_type: 'password', username: alice.username, password: alice.password }).expect(200)).body.access_token;

  function expectUnavailable(res: { status: number; body: unknown; headers: Record<string, string> }): void {
    expect(res.status).toBe(503);
    expect(res.body).toEqual(UNCHECKED);
    expect(res.headers['retry-after']).toBe('5');
    expect(res.headers['www-authenticate']).toBeUndefined();
    const line = logged(res.headers['x-request-id']);
    expect(line).toMatchObject({ level: 'error', reason: 'the credentials could not be checked, try again' });
    expect(String(line?.error)).toMatch(/statement timeout/);
  }

  beforeAll(async () => {
    t = await startTestApp({ DB_STATEMENT_TIMEOUT: '1', LOG_LEVEL: 'error' });
    alice = await t.createUser({ username: 'alice-lookup' });
    const p = await t.http.post(`${API}/projects`).set('PRIVATE-TOKEN', alice.token).send({ name: 'locked', visibility_level: 0 }).expect(201);
    path = p.body.path_with_namespace;
  });
  afterAll(() => t?.close());

  it('git over HTTP with an OAuth token (oauth2) whose lookup fails: 503 and a log line with the request id, not the 401 challenge; the same token works once the database answers', async () => {
    const oauthToken = await freshOauthToken();
    const res = await whileLocked('oauth_access_tokens', () => infoRefs(basic('oauth2', oauthToken)));
    expectUnavailable(res);
    await infoRefs(basic('oauth2', oauthToken)).expect(200);
    // a token that is really wrong is still the challenge
    await infoRefs(basic('oauth2', 'not-a-token')).expect(401);
  });

  it('git over HTTP with a password whose sign-in fails in the database: 503, not 401; the password works once it answers', async () => {
    const res = await whileLocked('login_attempts', () => infoRefs(basic(alice.username, alice.password)));
    expectUnavailable(res);
    await infoRefs(basic(alice.username, alice.password)).expect(200);
    await infoRefs(basic(alice.username, 'wrong-password')).expect(401);
  });

  it('a public API route with a bearer token whose lookup fails: 503, not served anonymously', async () => {
    const oauthToken = await freshOauthToken();
    const res = await whileLocked('oauth_access_tokens', () => t.http.get(`${API}/licenses`).set('Authorization', `Bearer ${oauthToken}`));
    expectUnavailable(res);
    await t.http.get(`${API}/licenses`).set('Authorization', `Bearer ${oauthToken}`).expect(200);
    // a stale token on a public route is still ignored, as before
    await t.http.get(`${API}/licenses`).set('Authorization', 'Bearer not-a-token').expect(200);
  });

  it('a private API route with a private token whose lookup fails: 503 with the same words', async () => {
    const bob = await t.createUser({ username: 'bob-lookup' }); // a token never looked up yet
    const res = await whileLocked('users', () => t.http.get(`${API}/user`).set('PRIVATE-TOKEN', bob.token));
    expectUnavailable(res);
    await t.http.get(`${API}/user`).set('PRIVATE-TOKEN', bob.token).expect(200);
  });
});
