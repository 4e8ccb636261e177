import type { Test } from 'supertest';
import { startTestApp, TestApp, TestUser } from './helpers/test-app';

/**
 * Errors rule 3 and ../shared/docs/spec-decisions.md #32: every error body is an object with `message`, and a string
 * `message` begins with the status and a space; validation failures keep a field map.
 */
const API = '/api/v3';
const V1 = '/ci/api/v1';

describe('Error messages begin with the status', () => {
  let t: TestApp;
  let limited: TestUser;
  let P: string;

  const as = (req: Test, token = t.root.token) => req.set('PRIVATE-TOKEN', token);
  /** Every error answer seen, checked together at the end. */
  const seen: Array<{ what: string; status: number; body: unknown }> = [];
  async function expectError(what: string, req: Test, status: number, message: string): Promise<void> {
    const res = await req;
    seen.push({ what, status: res.status, body: res.body });
    expect({ what, status: res.status, body: res.body }).toEqual({ what, status, body: { message } });
  }

  beforeAll(async () => {
    t = await startTestApp();
    limited = await t.createUser({ username: 'limited', projects_limit: 1 });
    const p = await as(t.http.post(`${API}/projects`))
      .send({ name: 'errs' })
      .expect(201);
    P = `${API}/projects/${p.body.id}`;
    await as(t.http.post(`${P}/repository/files`))
      .send({ file_path: 'a.txt', branch_name: 'master', content: 'a', commit_message: 'a' })
      .expect(201);
    await as(t.http.post(`${P}/repository/tags`))
      .send({ tag_name: 'v1', ref: 'master' })
      .expect(201);
  });

  afterAll(async () => {
    await t?.close();
  });

  it('duplicate user: 409 naming the field', async () => {
    await expectError(
      'duplicate username',
      as(t.http.post(`${API}/users`)).send({ username: 'limited', email: 'x@example.com', name: 'X', password: 'password-x' }),
      409,
      '409 Username has already been taken',
    );
    await expectError(
      'duplicate email',
      as(t.http.post(`${API}/users`)).send({ username: 'other', email: 'user1@example.com', name: 'X', password: 'password-x' }),
      409,
      '409 Email has already been taken',
    );
  });

  it('project name taken: 409 with the string naming the field; the projects limit: 403 with the real limit', async () => {
    await expectError('project name taken', as(t.http.post(`${API}/projects`)).send({ name: 'errs' }), 409, '409 Name has already been taken');
    await as(t.http.post(`${API}/projects`), limited.token)
      .send({ name: 'one' })
      .expect(201);
    await expectError(
      'projects limit',
      as(t.http.post(`${API}/projects`), limited.token).send({ name: 'two' }),
      403,
      '403 Your project limit is 1 projects! Please contact your administrator to increase it',
    );
  });

  it('files API: traversal and unchanged content', async () => {
    await expectError(
      'traversal',
      as(t.http.post(`${P}/repository/files`)).send({ file_path: 'x/../../etc/passwd', branch_name: 'master', content: 'a', commit_message: 'm' }),
      400,
      '400 Your changes could not be committed, because the file name cannot include directory traversal. ',
    );
    await expectError(
      'unchanged',
      as(t.http.put(`${P}/repository/files`)).send({ file_path: 'a.txt', branch_name: 'master', content: 'a', commit_message: 'm' }),
      400,
      '400 Your changes could not be committed because the content is unchanged',
    );
  });

  it('branches: a bad ref, a missing branch', async () => {
    await expectError('bad ref', as(t.http.post(`${P}/repository/branches`)).send({ branch_name: 'b', ref: 'nope' }), 400, '400 Invalid reference name');
    await expectError(
      'branch exists',
      as(t.http.post(`${P}/repository/branches`)).send({ branch_name: 'master', ref: 'master' }),
      400,
      '400 Branch already exists',
    );
    await expectError('missing branch', as(t.http.get(`${P}/repository/branches/nope`)), 404, '404 Branch Not Found');
    await expectError('delete missing branch', as(t.http.delete(`${P}/repository/branches/nope`)), 404, '404 Branch Not Found');
  });

  it('tags and releases: creation failures, missing tags and releases, a release that exists', async () => {
    await expectError('missing tag', as(t.http.get(`${P}/repository/tags/nope`)), 404, '404 Tag Not Found');
    await expectError('delete missing tag', as(t.http.delete(`${P}/repository/tags/nope`)), 404, '404 Tag Not Found');
    await expectError('tag exists', as(t.http.post(`${P}/repository/tags`)).send({ tag_name: 'v1', ref: 'master' }), 405, '405 Tag v1 already exists');
    await expectError('tag target', as(t.http.post(`${P}/repository/tags`)).send({ tag_name: 'v2', ref: 'nope' }), 405, '405 Target nope is invalid');
    await expectError('release of a missing tag', as(t.http.post(`${P}/repository/tags/nope/release`)).send({ description: 'd' }), 404, '404 Tag Not Found');
    await expectError('missing release', as(t.http.put(`${P}/repository/tags/v1/release`)).send({ description: 'd' }), 404, '404 Release Not Found');
    await as(t.http.post(`${P}/repository/tags/v1/release`))
      .send({ description: 'd' })
      .expect(201);
    await expectError('release exists', as(t.http.post(`${P}/repository/tags/v1/release`)).send({ description: 'd' }), 409, '409 Release already exists');
  });

  it('a duplicate label', async () => {
    await as(t.http.post(`${P}/labels`))
      .send({ name: 'bug', color: '#ff0000' })
      .expect(201);
    await expectError('label exists', as(t.http.post(`${P}/labels`)).send({ name: 'bug', color: '#ff0000' }), 409, '409 Label already exists');
  });

  it('a merge request from a branch into itself: 422 as an object with the message', async () => {
    await expectError(
      'same branch MR',
      as(t.http.post(`${P}/merge_requests`)).send({ source_branch: 'master', target_branch: 'master', title: 'x' }),
      422,
      '422 You can not use same project/branch for source and target',
    );
  });

  it('runner API: every route missing its token answers 400 "token" not given', async () => {
    const json = (req: Test, body: object = {}) => req.set('Content-Type', 'application/json').send(JSON.stringify(body));
    const notGiven = '400 (Bad request) "token" not given';
    await expectError('register runner', json(t.http.post(`${V1}/runners/register.json`)), 400, notGiven);
    await expectError('delete runner', json(t.http.delete(`${V1}/runners/delete`)), 400, notGiven);
    await expectError('request a build', json(t.http.post(`${V1}/builds/register.json`), { info: {} }), 400, notGiven);
    await expectError('request a build, blank token', json(t.http.post(`${V1}/builds/register`), { token: ' ' }), 400, notGiven);
    await expectError('update a build', json(t.http.put(`${V1}/builds/1.json`), { state: 'success' }), 400, notGiven);
    await expectError('verify (builds/-1)', json(t.http.put(`${V1}/builds/-1`)), 400, notGiven);
    await expectError('trace', t.http.patch(`${V1}/builds/1/trace.txt`).set('Content-Range', '0-1').set('Content-Type', 'text/plain').send('x'), 400, notGiven);
    await expectError('upload artifacts', t.http.post(`${V1}/builds/1/artifacts`), 400, notGiven);
    await expectError('download artifacts', t.http.get(`${V1}/builds/1/artifacts`), 400, notGiven);
    await expectError('remove artifacts', t.http.delete(`${V1}/builds/1/artifacts`), 400, notGiven);
    // an unknown token is still 403 (the runner's "forbidden")
    await expectError('request a build, unknown token', json(t.http.post(`${V1}/builds/register.json`), { token: 'nope' }), 403, '403 Forbidden');
  });

  it('every error seen answers an object whose message starts with its status, or a field map', () => {
    expect(seen.length).toBeGreaterThan(20);
    for (const { what, status, body } of seen) {
      const message = (body as { message?: unknown }).message;
      const ok = typeof message === 'string' ? message.startsWith(`${status} `) : typeof message === 'object' && message !== null && !Array.isArray(message);
      expect({ what, ok }).toEqual({ what, ok: true });
    }
  });
});
