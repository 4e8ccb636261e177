import request from 'supertest';
import type TestAgent from 'supertest/lib/agent';
import { App, createApp } from '../src/app.factory';
import { startTestApp, TestApp, TestUser } from './helpers/test-app';

/**
 * `project_authorizations` (migration 1734200000000): the set of projects each user is a member of,
 * kept by triggers in the writing transaction. After every change through the API (or by hand in
 * SQL) the table must equal the memberships it derives from, and the project lists read from it.
 */
const API = '/api/v3';

/** The rows the table must hold, recomputed from the memberships. */
const EXPECTED = `
  SELECT user_id, project_id, max(level)::int AS access_level
    FROM (SELECT user_id, project_id, access_level AS level FROM project_members
          UNION ALL SELECT gm.user_id, p.id, gm.access_level FROM group_members gm JOIN projects p ON p.namespace_id = gm.namespace_id
          UNION ALL SELECT n.owner_id, p.id, 50 FROM projects p JOIN namespaces n ON n.id = p.namespace_id
                     WHERE n.kind = 'user' AND n.owner_id IS NOT NULL) s
   GROUP BY user_id, project_id ORDER BY 1, 2`;

type Row = { user_id: number; project_id: number; access_level: number };

describe('project_authorizations', () => {
  let t: TestApp;
  let alice: TestUser;
  let bob: TestUser;
  let carol: TestUser;

  const as = (u: TestUser) => ({
    get: (path: string, http: TestAgent = t.http) => http.get(`${API}${path}`).set('PRIVATE-TOKEN', u.token),
    post: (path: string, body: object = {}, http: TestAgent = t.http) => http.post(`${API}${path}`).set('PRIVATE-TOKEN', u.token).send(body),
    put: (path: string, body: object = {}, http: TestAgent = t.http) => http.put(`${API}${path}`).set('PRIVATE-TOKEN', u.token).send(body),
    del: (path: string, http: TestAgent = t.http) => http.delete(`${API}${path}`).set('PRIVATE-TOKEN', u.token),
  });
  const rows = (): Promise<Row[]> => t.sql<Row>(`SELECT user_id, project_id, access_level FROM project_authorizations ORDER BY 1, 2`);
  const levelOf = async (u: TestUser, projectId: number): Promise<number | undefined> =>
    (await rows()).find((r) => r.user_id === u.id && r.project_id === projectId)?.access_level;
  /** The table equals what the memberships say. */
  const expectExact = async () => expect(await rows()).toEqual(await t.sql<Row>(EXPECTED));
  /** Ids in the caller's member project list (`GET /projects`, per_page 100). */
  const listed = async (u: TestUser, http: TestAgent = t.http): Promise<number[]> =>
    (await as(u).get('/projects?per_page=100', http).expect(200)).body.map((p: { id: number }) => p.id).sort((a: number, b: number) => a - b);
  const createProject = async (owner: TestUser, body: object): Promise<number> => (await as(owner).post('/projects', body).expect(201)).body.id;
  const createGroup = async (owner: TestUser, path: string): Promise<number> => (await as(owner).post('/groups', { name: path, path }).expect(201)).body.id;

  beforeAll(async () => {
    t = await startTestApp();
    alice = await t.createUser();
    bob = await t.createUser();
    carol = await t.createUser();
  });
  afterAll(() => t.close());

  it('a project in a personal namespace gives its owner 50; nobody else gets a row', async () => {
    const p = await createProject(alice, { name: 'personal' });
    expect(await levelOf(alice, p)).toBe(50);
    expect(await levelOf(bob, p)).toBeUndefined();
    expect(await listed(alice)).toContain(p);
    expect(await listed(bob)).not.toContain(p);
    await expectExact();
  });

  it('project members: added, changed, removed', async () => {
    const p = await createProject(alice, { name: 'members' });
    await as(alice).post(`/projects/${p}/members`, { user_id: bob.id, access_level: 30 }).expect(201);
    expect(await levelOf(bob, p)).toBe(30);
    expect(await listed(bob)).toContain(p);
    await as(alice).put(`/projects/${p}/members/${bob.id}`, { access_level: 20 }).expect(200);
    expect(await levelOf(bob, p)).toBe(20);
    await expectExact();
    await as(alice).del(`/projects/${p}/members/${bob.id}`).expect(200);
    expect(await levelOf(bob, p)).toBeUndefined();
    expect(await listed(bob)).not.toContain(p);
    await expectExact();
  });

  it("group members reach every project of the group, new ones included; the highest level wins; removal keeps a direct membership's level", async () => {
    const g = await createGroup(alice, 'auth-group');
    const p1 = await createProject(alice, { name: 'g1', namespace_id: g });
    await as(alice).post(`/groups/${g}/members`, { user_id: bob.id, access_level: 20 }).expect(201);
    expect(await levelOf(bob, p1)).toBe(20);
    const p2 = await createProject(alice, { name: 'g2', namespace_id: g });
    expect(await levelOf(bob, p2)).toBe(20);
    expect(await listed(bob)).toEqual(expect.arrayContaining([p1, p2]));
    // a direct membership above the group's level wins; below it, the group's
    await as(alice).post(`/projects/${p1}/members`, { user_id: bob.id, access_level: 40 }).expect(201);
    expect(await levelOf(bob, p1)).toBe(40);
    await as(alice).put(`/groups/${g}/members/${bob.id}`, { access_level: 50 }).expect(200);
    expect(await levelOf(bob, p1)).toBe(50);
    expect(await levelOf(bob, p2)).toBe(50);
    await expectExact();
    await as(alice).del(`/groups/${g}/members/${bob.id}`).expect(200);
    expect(await levelOf(bob, p1)).toBe(40);
    expect(await levelOf(bob, p2)).toBeUndefined();
    expect(await listed(bob)).toContain(p1);
    expect(await listed(bob)).not.toContain(p2);
    await expectExact();
  });

  it('a transferred project leaves the old group members and reaches the new ones', async () => {
    const from = await createGroup(alice, 'auth-from');
    const to = await createGroup(alice, 'auth-to');
    await as(alice).post(`/groups/${from}/members`, { user_id: bob.id, access_level: 30 }).expect(201);
    await as(alice).post(`/groups/${to}/members`, { user_id: carol.id, access_level: 20 }).expect(201);
    const p = await createProject(alice, { name: 'moving', namespace_id: from });
    expect(await levelOf(bob, p)).toBe(30);
    expect(await levelOf(carol, p)).toBeUndefined();
    await as(t.root).post(`/groups/${to}/projects/${p}`).expect(201);
    expect(await levelOf(bob, p)).toBeUndefined();
    expect(await levelOf(carol, p)).toBe(20);
    expect(await listed(bob)).not.toContain(p);
    expect(await listed(carol)).toContain(p);
    await expectExact();
  });

  it('deleting a project, a group or a user removes their rows', async () => {
    const g = await createGroup(alice, 'auth-doomed');
    await as(alice).post(`/groups/${g}/members`, { user_id: bob.id, access_level: 30 }).expect(201);
    const p = await createProject(alice, { name: 'doomed', namespace_id: g });
    const q = await createProject(alice, { name: 'doomed-too', namespace_id: g });
    await as(alice).del(`/projects/${p}`).expect(200);
    expect((await rows()).filter((r) => r.project_id === p)).toEqual([]);
    await expectExact();
    await as(alice).del(`/projects/${q}`).expect(200);
    await as(alice).del(`/groups/${g}`).expect(200);
    expect((await rows()).filter((r) => r.project_id === q)).toEqual([]);
    await expectExact();

    const dave = await t.createUser();
    const mine = await createProject(dave, { name: 'daves' });
    const shared = await createProject(alice, { name: 'shared-with-dave' });
    await as(alice).post(`/projects/${shared}/members`, { user_id: dave.id, access_level: 30 }).expect(201);
    expect(await levelOf(dave, mine)).toBe(50);
    expect(await levelOf(dave, shared)).toBe(30);
    await as(t.root).del(`/users/${dave.id}`).expect(200);
    expect((await rows()).filter((r) => r.user_id === dave.id)).toEqual([]);
    await expectExact();
  });

  it('a blocked user keeps its rows and is refused by authentication; unblocked, it lists them again', async () => {
    const erin = await t.createUser();
    const p = await createProject(alice, { name: 'erins' });
    await as(alice).post(`/projects/${p}/members`, { user_id: erin.id, access_level: 30 }).expect(201);
    await as(t.root).put(`/users/${erin.id}/block`).expect(200);
    expect(await levelOf(erin, p)).toBe(30);
    await as(erin).get('/projects').expect(401);
    await as(t.root).put(`/users/${erin.id}/unblock`).expect(200);
    expect(await listed(erin)).toContain(p);
  });

  it('changes made by hand in SQL are applied too (membership rows, a namespace changing owner)', async () => {
    const p = await createProject(alice, { name: 'by-hand' });
    await t.sql(`INSERT INTO project_members (project_id, user_id, access_level) VALUES ($1, $2, 10)`, [p, carol.id]);
    expect(await levelOf(carol, p)).toBe(10);
    await t.sql(`UPDATE project_members SET access_level = 40 WHERE project_id = $1 AND user_id = $2`, [p, carol.id]);
    expect(await levelOf(carol, p)).toBe(40);
    await t.sql(`DELETE FROM project_members WHERE project_id = $1 AND user_id = $2`, [p, carol.id]);
    expect(await levelOf(carol, p)).toBeUndefined();
    const [ns] = await t.sql<{ namespace_id: number }>(`SELECT namespace_id FROM projects WHERE id = $1`, [p]);
    await t.sql(`UPDATE namespaces SET owner_id = NULL WHERE id = $1`, [ns.namespace_id]);
    // the creator keeps its own membership of the project (master)
    expect(await levelOf(alice, p)).toBe(40);
    await t.sql(`UPDATE namespaces SET owner_id = $1 WHERE id = $2`, [alice.id, ns.namespace_id]);
    expect(await levelOf(alice, p)).toBe(50);
    await expectExact();
  });

  const pg = !!process.env.DATABASE_URL;
  (pg ? describe : describe.skip)('on PostgreSQL', () => {
    let bApp: App;
    let b: TestAgent;
    beforeAll(async () => {
      bApp = await createApp(t.config);
      b = request(bApp.app.getHttpServer());
    });
    afterAll(() => bApp.close());

    it('a membership changed through instance A is seen by the very next list through B, and back', async () => {
      const g = await createGroup(alice, 'auth-two');
      const p = await createProject(alice, { name: 'two', namespace_id: g });
      for (let i = 0; i < 5; i++) {
        await as(alice).post(`/groups/${g}/members`, { user_id: carol.id, access_level: 20 }).expect(201);
        expect(await listed(carol, b)).toContain(p);
        await as(alice).del(`/groups/${g}/members/${carol.id}`, b).expect(200);
        expect(await listed(carol)).not.toContain(p);
        await as(alice).post(`/projects/${p}/members`, { user_id: carol.id, access_level: 30 }, b).expect(201);
        expect(await listed(carol)).toContain(p);
        await as(alice).del(`/projects/${p}/members/${carol.id}`).expect(200);
        expect(await listed(carol, b)).not.toContain(p);
      }
    });

    it('concurrent writes (group members added while projects are created in the group, over both instances) leave the table exact', async () => {
      const g = await createGroup(alice, 'auth-race');
      const users = await Promise.all(Array.from({ length: 6 }, () => t.createUser()));
      const results = await Promise.all([
        ...users.map((u, i) => as(alice).post(`/groups/${g}/members`, { user_id: u.id, access_level: 20 + 10 * (i % 3) }, i % 2 ? b : t.http)),
        ...Array.from({ length: 6 }, (_, i) => as(alice).post('/projects', { name: `race-${i}`, namespace_id: g }, i % 2 ? t.http : b)),
      ]);
      expect(results.map((r) => r.status)).toEqual(Array(12).fill(201));
      await expectExact();
      const projects = results.slice(6).map((r) => r.body.id as number);
      for (const u of users) expect(await listed(u, b)).toEqual(expect.arrayContaining(projects));
    });
  });
});
