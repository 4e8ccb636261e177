import { startTestApp, TestApp, TestUser } from './helpers/test-app';

/**
 * Conditional GETs of lists (issue 27, as GitLab answers its pollers): every JSON answer carries an
 * ETag computed from the caller's own body (Express's weak ETag: a hash of the bytes sent), and a
 * request whose `If-None-Match` holds it gets 304 with no body. The tag is a function of what this
 * caller is shown and nothing else, so it changes whenever anything the caller can see changes,
 * and a change the caller cannot see leaves it as it was.
 */
const API = '/api/v3';

describe('ETag and If-None-Match on lists', () => {
  let t: TestApp;
  let alice: TestUser;
  let bob: TestUser;
  let project: number;
  let hidden: number;

  const get = (u: TestUser, path: string, etag?: string) => {
    const r = t.http.get(`${API}${path}`).set('PRIVATE-TOKEN', u.token);
    return etag ? r.set('If-None-Match', etag) : r;
  };

  beforeAll(async () => {
    t = await startTestApp();
    alice = await t.createUser();
    bob = await t.createUser();
    project = (await t.http.post(`${API}/projects`).set('PRIVATE-TOKEN', alice.token).send({ name: 'etagged' }).expect(201)).body.id;
    hidden = (await t.http.post(`${API}/projects`).set('PRIVATE-TOKEN', alice.token).send({ name: 'hidden' }).expect(201)).body.id;
    await t.http.post(`${API}/projects/${project}/members`).set('PRIVATE-TOKEN', alice.token).send({ user_id: bob.id, access_level: 30 }).expect(201);
    for (const title of ['one', 'two']) {
      await t.http.post(`${API}/projects/${project}/issues`).set('PRIVATE-TOKEN', alice.token).send({ title }).expect(201);
    }
  });
  afterAll(() => t.close());

  for (const route of ['/projects', '/issues', `/projects/:id/issues`, `/projects/:id/merge_requests`, '/projects/:id/builds']) {
    it(`${route}: 304 with no body while unchanged, with the pagination headers`, async () => {
      const path = route.replace(':id', String(project));
      const first = await get(alice, path).expect(200);
      const tag = first.headers.etag;
      expect(tag).toMatch(/^W\/"[^"]+"$/);
      const again = await get(alice, path, tag).expect(304);
      expect(again.text ?? '').toBe('');
      expect(again.headers.etag).toBe(tag);
      expect(again.headers['x-total']).toBe(first.headers['x-total']);
      // another tag, or none: the whole answer
      await get(alice, path, 'W/"something-else"').expect(200);
    });
  }

  it('a change the caller can see gives a new tag and the new list', async () => {
    const first = await get(bob, `/projects/${project}/issues`).expect(200);
    await t.http.post(`${API}/projects/${project}/issues`).set('PRIVATE-TOKEN', alice.token).send({ title: 'three' }).expect(201);
    const changed = await get(bob, `/projects/${project}/issues`, first.headers.etag).expect(200);
    expect(changed.headers.etag).not.toBe(first.headers.etag);
    expect(changed.body).toHaveLength(first.body.length + 1);
    // an edit that keeps the count changes the tag too
    await t.http.put(`${API}/projects/${project}/issues/${changed.body[0].id}`).set('PRIVATE-TOKEN', alice.token).send({ title: 'three, edited' }).expect(200);
    const edited = await get(bob, `/projects/${project}/issues`, changed.headers.etag).expect(200);
    expect(edited.body[0].title).toBe('three, edited');
  });

  it("a change the caller cannot see leaves the caller's tag as it was", async () => {
    const first = await get(bob, '/projects').expect(200);
    expect(first.body.map((p: { id: number }) => p.id)).not.toContain(hidden);
    await t.http.put(`${API}/projects/${hidden}`).set('PRIVATE-TOKEN', alice.token).send({ description: 'changed out of sight' }).expect(200);
    await t.http.post(`${API}/projects/${hidden}/issues`).set('PRIVATE-TOKEN', alice.token).send({ title: 'out of sight' }).expect(201);
    await get(bob, '/projects', first.headers.etag).expect(304);
    await get(bob, '/issues', (await get(bob, '/issues').expect(200)).headers.etag).expect(304);
  });

  it("two users seeing different lists get different tags, and one's tag is no use to the other", async () => {
    const a = await get(alice, '/projects').expect(200);
    const b = await get(bob, '/projects').expect(200);
    expect(a.headers.etag).not.toBe(b.headers.etag);
    await get(bob, '/projects', a.headers.etag).expect(200);
    await get(alice, '/projects', b.headers.etag).expect(200);
  });

  it('a caller who lost access gets the error, not 304, with its old tag', async () => {
    const carol = await t.createUser();
    await t.http.post(`${API}/projects/${project}/members`).set('PRIVATE-TOKEN', alice.token).send({ user_id: carol.id, access_level: 30 }).expect(201);
    const first = await get(carol, `/projects/${project}/issues`).expect(200);
    await t.http.delete(`${API}/projects/${project}/members/${carol.id}`).set('PRIVATE-TOKEN', alice.token).expect(200);
    const gone = await get(carol, `/projects/${project}/issues`, first.headers.etag).expect(404);
    expect(gone.body).toEqual({ message: '404 Project Not Found' });
  });
});
