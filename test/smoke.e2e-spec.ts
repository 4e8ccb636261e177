import { startTestApp, TestApp } from './helpers/test-app';

describe('smoke', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('GET /user returns the current user with its private token', async () => {
    const res = await t.http.get('/api/v3/user').set('PRIVATE-TOKEN', t.root.token).expect(200);
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.body).toMatchObject({ username: 'root', is_admin: true, private_token: t.root.token });
  });
});
