import { Json, LEVEL, planning } from '../helpers/planning';
import { startTestApp, TestApp, TestUser } from '../helpers/test-app';

/**
 * A fork is never more visible than its source (issue 22, item 2; GitLab's
 * `visibility_level_allowed_as_fork`): raising a fork above its source is 400 with GitLab's field
 * message, and restricting a source lowers its forks, and their forks, in the same transaction.
 */
describe('security: fork visibility', () => {
  let t: TestApp;
  let api: ReturnType<typeof planning>;
  let owner: TestUser;
  let reporter: TestUser;
  let other: TestUser;
  let stranger: TestUser;
  let seq = 0;

  const msg = (level: string) => ({ message: { visibility_level: [`${level} is not allowed since the fork source project has lower visibility.`] } });

  async function project(u: TestUser, visibility_level: number): Promise<Json> {
    return (
      await api
        .post(u, '/projects')
        .send({ name: `fv-${++seq}`, visibility_level })
        .expect(201)
    ).body;
  }
  async function fork(u: TestUser, id: number): Promise<Json> {
    return (await api.post(u, `/projects/fork/${id}`).expect(201)).body;
  }
  async function levelOf(id: number): Promise<number> {
    return (await t.sql<{ v: number }>(`SELECT visibility_level AS v FROM projects WHERE id = $1`, [id]))[0].v;
  }

  beforeAll(async () => {
    t = await startTestApp();
    api = planning(t);
    owner = await t.createUser({ username: 'fvowner' });
    reporter = await t.createUser({ username: 'fvreporter' });
    other = await t.createUser({ username: 'fvother' });
    stranger = await t.createUser({ username: 'fvstranger' });
    for (const u of [owner, reporter, other]) await api.put(t.root, `/users/${u.id}`).send({ projects_limit: 100 }).expect(200);
  });

  afterAll(() => t.close());

  it('a reporter who forks a private project cannot make the fork internal or public (400, field map); it stays unreadable to others', async () => {
    const source = await project(owner, 0);
    await api.post(owner, `/projects/${source.id}/members`).send({ user_id: reporter.id, access_level: LEVEL.reporter }).expect(201);
    const f = await fork(reporter, source.id);
    expect(f).toMatchObject({ visibility_level: 0, forked_from_project: { id: source.id } });
    expect((await api.put(reporter, `/projects/${f.id}`).send({ visibility_level: 20 }).expect(400)).body).toEqual(msg('public'));
    expect((await api.put(reporter, `/projects/${f.id}`).send({ visibility_level: 10 }).expect(400)).body).toEqual(msg('internal'));
    expect((await api.put(reporter, `/projects/${f.id}`).send({ public: true }).expect(400)).body).toEqual(msg('public'));
    // other changes in the refused request are not applied either
    await api.put(reporter, `/projects/${f.id}`).send({ description: 'leaked', visibility_level: 20 }).expect(400);
    expect(await levelOf(f.id)).toBe(0);
    await api.get(stranger, `/projects/${f.id}`).expect(404);
    expect((await api.get(reporter, `/projects/${f.id}`).expect(200)).body.description).not.toBe('leaked');
    // the same level as the source, or an unchanged one, is fine
    await api.put(reporter, `/projects/${f.id}`).send({ visibility_level: 0, description: 'still private' }).expect(200);
  });

  it('a fork may go down and back up to its source level, not above', async () => {
    const source = await project(owner, 10);
    const f = await fork(other, source.id);
    expect(f.visibility_level).toBe(10);
    await api.put(other, `/projects/${f.id}`).send({ visibility_level: 0 }).expect(200);
    await api.put(other, `/projects/${f.id}`).send({ visibility_level: 10 }).expect(200);
    expect((await api.put(other, `/projects/${f.id}`).send({ visibility_level: 20 }).expect(400)).body).toEqual(msg('public'));
    expect(await levelOf(f.id)).toBe(10);
    // an administrator is bound too: the rule is about the data, not the caller
    expect((await api.put(t.root, `/projects/${f.id}`).send({ visibility_level: 20 }).expect(400)).body).toEqual(msg('public'));
  });

  it('restricting a source lowers its forks and their forks (never raises one); the forks become unreadable to strangers', async () => {
    const source = await project(owner, 20);
    const f1 = await fork(other, source.id);
    const f2 = await fork(reporter, f1.id); // a fork of the fork
    const quiet = await fork(stranger, source.id);
    await api.put(stranger, `/projects/${quiet.id}`).send({ visibility_level: 0 }).expect(200);
    expect([await levelOf(f1.id), await levelOf(f2.id)]).toEqual([20, 20]);

    await api.put(owner, `/projects/${source.id}`).send({ visibility_level: 10 }).expect(200);
    expect([await levelOf(f1.id), await levelOf(f2.id), await levelOf(quiet.id)]).toEqual([10, 10, 0]);

    await api.put(owner, `/projects/${source.id}`).send({ visibility_level: 0 }).expect(200);
    expect([await levelOf(f1.id), await levelOf(f2.id), await levelOf(quiet.id)]).toEqual([0, 0, 0]);
    expect((await api.get(other, `/projects/${f1.id}`).expect(200)).body.visibility_level).toBe(0);
    await api.get(stranger, `/projects/${f1.id}`).expect(404);
    await api.get(stranger, `/projects/${f2.id}`).expect(404);

    // making the source public again does not raise the forks
    await api.put(owner, `/projects/${source.id}`).send({ visibility_level: 20 }).expect(200);
    expect([await levelOf(f1.id), await levelOf(f2.id)]).toEqual([0, 0]);
    // and a fork's fork is bound by its own source (the fork), not only by the root
    await api.put(other, `/projects/${f1.id}`).send({ visibility_level: 10 }).expect(200);
    expect((await api.put(reporter, `/projects/${f2.id}`).send({ visibility_level: 20 }).expect(400)).body).toEqual(msg('public'));
  });

  it('a fork made of a source whose visibility was just lowered takes the lower level', async () => {
    const source = await project(owner, 20);
    await api.put(owner, `/projects/${source.id}`).send({ visibility_level: 10 }).expect(200);
    expect((await fork(other, source.id)).visibility_level).toBe(10);
  });

  it('a fork whose source was deleted is free to change its visibility', async () => {
    const source = await project(owner, 0);
    await api.post(owner, `/projects/${source.id}/members`).send({ user_id: other.id, access_level: LEVEL.reporter }).expect(201);
    const f = await fork(other, source.id);
    await api.del(owner, `/projects/${source.id}`).expect(200);
    await api.put(other, `/projects/${f.id}`).send({ visibility_level: 20 }).expect(200);
  });

  it('concurrent "raise the fork" and "restrict the source" never leave a fork above its source', async () => {
    for (let round = 0; round < 8; round++) {
      const source = await project(owner, 20);
      const f = await fork(other, source.id);
      await api.put(other, `/projects/${f.id}`).send({ visibility_level: 10 }).expect(200);
      const [raise, restrict] = await Promise.all([
        api.put(other, `/projects/${f.id}`).send({ visibility_level: 20 }),
        api.put(owner, `/projects/${source.id}`).send({ visibility_level: 0 }),
      ]);
      expect([200, 400]).toContain(raise.status);
      expect(restrict.status).toBe(200);
      expect(await levelOf(source.id)).toBe(0);
      expect(await levelOf(f.id)).toBe(0);
    }
  });
});
