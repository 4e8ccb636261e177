import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Test } from 'supertest';
import { GitService } from '../src/git/git.service';
import { expectSchema } from './helpers/schema';
import { EXTERNAL_URL, startTestApp, TestApp, TestUser } from './helpers/test-app';

const API = '/api/v3';
const PATH_FORMAT_MESSAGE = "can contain only letters, digits, '_', '-' and '.'. Cannot start with '-', '.' or end in '.', '.git' or '.atom'.";

type Json = Record<string, any>;

describe('groups and members', () => {
  let t: TestApp;
  let git: GitService;
  let owner: TestUser;
  let master: TestUser;
  let developer: TestUser;
  let outsider: TestUser;

  const as = (u: TestUser | string, req: Test) => req.set('PRIVATE-TOKEN', typeof u === 'string' ? u : u.token);
  const root = (req: Test) => req.set('PRIVATE-TOKEN', t.root.token);

  async function createGroup(u: TestUser | string, body: Json): Promise<Json> {
    const res = await as(u, t.http.post(`${API}/groups`)).send({ name: body.path, ...body });
    if (res.status !== 201) throw new Error(`group ${JSON.stringify(body)}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  }

  async function createProject(u: TestUser | string, body: Json): Promise<Json> {
    const res = await as(u, t.http.post(`${API}/projects`)).send(body);
    if (res.status !== 201) throw new Error(`project ${JSON.stringify(body)}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  }

  const addGroupMember = (groupId: number, by: TestUser | string, userId: number, level: number) =>
    as(by, t.http.post(`${API}/groups/${groupId}/members`)).send({ user_id: userId, access_level: level });

  beforeAll(async () => {
    t = await startTestApp();
    git = t.app.app.get(GitService);
    owner = await t.createUser({ username: 'gowner', name: 'Group Owner' });
    master = await t.createUser({ username: 'gmaster', name: 'Group Master' });
    developer = await t.createUser({ username: 'gdeveloper', name: 'Group Developer' });
    outsider = await t.createUser({ username: 'goutsider', name: 'Outsider' });
  });
  afterAll(() => t.close());

  // ------------------------------------------------------------------ groups

  describe('POST /groups', () => {
    it('201 with the group; the creator becomes its owner (50)', async () => {
      const res = await as(owner, t.http.post(`${API}/groups`))
        .send({ name: 'First Group', path: 'first-group', description: 'the first' })
        .expect(201);
      expect(res.headers['content-type']).toBe('application/json');
      expect(res.body).toEqual({
        id: expect.any(Number),
        name: 'First Group',
        path: 'first-group',
        description: 'the first',
        visibility_level: 0,
        avatar_url: null,
        web_url: `${EXTERNAL_URL}/groups/first-group`,
      });
      const members = await as(owner, t.http.get(`${API}/groups/${res.body.id}/members`)).expect(200);
      await expectSchema(members, 'Member[]');
      expect(members.body).toEqual([expect.objectContaining({ id: owner.id, username: 'gowner', access_level: 50 })]);
    });

    it('visibility_level is honoured (1/2 read as 10/20)', async () => {
      const internal = await createGroup(owner, { path: 'vis-internal', visibility_level: 10 });
      expect(internal.visibility_level).toBe(10);
      const pub = await createGroup(owner, { path: 'vis-public', visibility_level: 2 });
      expect(pub.visibility_level).toBe(20);
    });

    it('a user with can_create_group=false: 403', async () => {
      const grounded = await t.createUser({ username: 'grounded', can_create_group: false });
      const res = await as(grounded, t.http.post(`${API}/groups`))
        .send({ name: 'Nope', path: 'nope' })
        .expect(403);
      expect(res.body).toEqual({ message: '403 Forbidden' });
      // an administrator always may
      const admin = await root(t.http.post(`${API}/groups`))
        .send({ name: 'Admins', path: 'admins-group' })
        .expect(201);
      expect(admin.body.path).toBe('admins-group');
    });

    it.each([
      [{ path: 'no-name' }, '400 (Bad request) "name" not given'],
      [{ name: 'No Path' }, '400 (Bad request) "path" not given'],
      [{ name: '  ', path: 'blank-name' }, '400 (Bad request) "name" not given'],
    ])('%j: 400 not given', async (body, message) => {
      const res = await as(owner, t.http.post(`${API}/groups`))
        .send(body)
        .expect(400);
      expect(res.body).toEqual({ message });
    });

    it.each([
      ['bad path', [PATH_FORMAT_MESSAGE]],
      ['-dash', [PATH_FORMAT_MESSAGE]],
      ['ends.git', [PATH_FORMAT_MESSAGE]],
      ['admin', ['is a reserved name']],
    ])('bad path %s: 400 validation map', async (path, messages) => {
      const res = await as(owner, t.http.post(`${API}/groups`))
        .send({ name: 'Bad', path })
        .expect(400);
      expect(res.body).toEqual({ message: { path: messages } });
    });

    it('a bad visibility_level: 400', async () => {
      const res = await as(owner, t.http.post(`${API}/groups`))
        .send({ name: 'v', path: 'bad-vis', visibility_level: 3 })
        .expect(400);
      expect(res.body).toEqual({ message: { visibility_level: ['is not included in the list'] } });
    });

    it.each([
      ['first-group', 'a group path'],
      ['FIRST-GROUP', 'a group path in another case'],
      ['gmaster', 'a username'],
      ['GOutsider', 'a username in another case'],
    ])('path %s taken by %s: 400 map', async (path) => {
      const res = await as(owner, t.http.post(`${API}/groups`))
        .send({ name: 'Taken', path })
        .expect(400);
      expect(res.body).toEqual({ message: { path: ['has already been taken'] } });
    });

    it('concurrent creation of the same path: one 201, one 400, never 500', async () => {
      const results = await Promise.all([
        as(owner, t.http.post(`${API}/groups`)).send({ name: 'Race', path: 'race-group' }),
        as(master, t.http.post(`${API}/groups`)).send({ name: 'Race', path: 'race-group' }),
      ]);
      expect(results.map((r) => r.status).sort()).toEqual([201, 400]);
      const rows = await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM namespaces WHERE lower(path) = 'race-group'`);
      expect(rows[0].n).toBe(1);
    });

    it('unauthenticated: 401', async () => {
      await t.http.post(`${API}/groups`).send({ name: 'Anon', path: 'anon' }).expect(401);
    });
  });

  describe('GET /groups', () => {
    let alpha: Json;
    let beta: Json;
    let gamma: Json;
    let listerUser: TestUser;
    const lister = () => listerUser;

    beforeAll(async () => {
      const lister = await t.createUser({ username: 'glister' });
      listerUser = lister;
      alpha = await createGroup(lister, { name: 'Alpha Team', path: 'alpha-team' });
      beta = await createGroup(lister, { name: 'Beta Team', path: 'beta-team', visibility_level: 20 });
      gamma = await createGroup(owner, { name: 'Gamma Squad', path: 'gamma-squad' });
      await addGroupMember(gamma.id, owner, lister.id, 10).expect(201);
    });

    it('a user sees only its groups (member or owner), by name', async () => {
      const res = await as(lister(), t.http.get(`${API}/groups`)).expect(200);
      expect(res.body.map((g: Json) => g.id).sort()).toEqual([alpha.id, beta.id, gamma.id].sort());
      expect(res.headers['x-total']).toBe('3');
      const none = await as(developer, t.http.get(`${API}/groups`)).expect(200);
      expect(none.body).toEqual([]);
    });

    it('an administrator sees every group', async () => {
      const res = await root(t.http.get(`${API}/groups?per_page=100`)).expect(200);
      await expectSchema(res, 'Group[]');
      const rows = await t.sql<{ id: number }>(`SELECT id FROM namespaces WHERE kind = 'group'`);
      expect(res.body.map((g: Json) => g.id).sort()).toEqual(rows.map((r) => r.id).sort());
      expect(res.headers['x-total']).toBe(String(rows.length));
      expect(res.body.map((g: Json) => g.id)).toEqual(expect.arrayContaining([alpha.id, beta.id, gamma.id]));
    });

    it.each([
      ['team', ['alpha', 'beta']],
      ['SQUAD', ['gamma']],
      ['beta-t', ['beta']],
      ['zzz', []],
    ])('search=%s on name or path', async (term, keys) => {
      const byKey: Record<string, Json> = { alpha, beta, gamma };
      const res = await as(lister(), t.http.get(`${API}/groups`).query({ search: term })).expect(200);
      expect(res.body.map((g: Json) => g.id).sort()).toEqual(keys.map((k) => byKey[k].id).sort());
    });

    it('is paginated', async () => {
      const first = await as(lister(), t.http.get(`${API}/groups?per_page=2`)).expect(200);
      const res = await as(lister(), t.http.get(`${API}/groups?per_page=2&page=2`)).expect(200);
      expect(first.body).toHaveLength(2);
      expect(res.body).toHaveLength(1);
      expect([...first.body, ...res.body].map((g: Json) => g.id).sort()).toEqual([alpha.id, beta.id, gamma.id].sort());
      expect(res.headers).toMatchObject({ 'x-total': '3', 'x-total-pages': '2', 'x-page': '2', 'x-prev-page': '1' });
    });
  });

  describe('GET /groups/:id', () => {
    let group: Json;
    let privateProject: Json;
    let internalProject: Json;

    beforeAll(async () => {
      group = await createGroup(owner, { name: 'Show Group', path: 'show-group', description: 'shown' });
      privateProject = await createProject(owner, { name: 'Group Private', namespace_id: group.id });
      internalProject = await createProject(owner, { name: 'Group Internal', namespace_id: group.id, visibility_level: 10 });
      await addGroupMember(group.id, owner, developer.id, 30).expect(201);
    });

    it.each(['id', 'path', 'PATH'])('by %s, with the projects the caller can read', async (how) => {
      const ref = how === 'id' ? String(group.id) : how === 'path' ? 'show-group' : 'SHOW-GROUP';
      const res = await as(developer, t.http.get(`${API}/groups/${ref}`)).expect(200);
      expect(res.body).toMatchObject({ id: group.id, name: 'Show Group', path: 'show-group', description: 'shown', visibility_level: 0 });
      expect(res.body.projects.map((p: Json) => p.id)).toEqual([internalProject.id, privateProject.id]);
      const p = res.body.projects.find((x: Json) => x.id === privateProject.id);
      expect(p).toMatchObject({ path_with_namespace: 'show-group/group-private', namespace: { id: group.id, kind: 'group' } });
      expect(p).not.toHaveProperty('owner');
      expect(p).not.toHaveProperty('runners_token');
    });

    it('a private group is invisible to non-members: 404 Group Not Found (by id and by path)', async () => {
      for (const ref of [String(group.id), 'show-group']) {
        const res = await as(outsider, t.http.get(`${API}/groups/${ref}`)).expect(404);
        expect(res.body).toEqual({ message: '404 Group Not Found' });
      }
      const members = await as(outsider, t.http.get(`${API}/groups/${group.id}/members`)).expect(404);
      expect(members.body).toEqual({ message: '404 Group Not Found' });
      const projects = await as(outsider, t.http.get(`${API}/groups/${group.id}/projects`)).expect(404);
      expect(projects.body).toEqual({ message: '404 Group Not Found' });
    });

    it('an internal group is visible to any signed-in user, with only the projects it may read', async () => {
      const internal = await createGroup(owner, { name: 'Open Group', path: 'open-group', visibility_level: 10 });
      const hidden = await createProject(owner, { name: 'Hidden', namespace_id: internal.id });
      const shown = await createProject(owner, { name: 'Shown', namespace_id: internal.id, visibility_level: 10 });
      const res = await as(outsider, t.http.get(`${API}/groups/open-group`)).expect(200);
      expect(res.body.projects.map((p: Json) => p.id)).toEqual([shown.id]);
      const list = await as(outsider, t.http.get(`${API}/groups/${internal.id}/projects`)).expect(200);
      await expectSchema(list, 'Project[]');
      expect(list.body.map((p: Json) => p.id)).toEqual([shown.id]);
      const owners = await as(owner, t.http.get(`${API}/groups/${internal.id}/projects`)).expect(200);
      expect(owners.body.map((p: Json) => p.id)).toEqual([shown.id, hidden.id]);
      // an external user does not see internal groups
      const external = await t.createUser({ username: 'gexternal', external: true });
      const ext = await as(external, t.http.get(`${API}/groups/open-group`)).expect(404);
      expect(ext.body).toEqual({ message: '404 Group Not Found' });
    });

    it('an administrator sees every group and project', async () => {
      const res = await root(t.http.get(`${API}/groups/${group.id}`)).expect(200);
      await expectSchema(res, 'GroupDetail');
      expect(res.body.projects).toHaveLength(2);
    });

    it.each(['999999', 'no-such-group', 'gowner'])('unknown group %s: 404 Group Not Found', async (ref) => {
      // a user namespace is not a group
      const res = await as(owner, t.http.get(`${API}/groups/${ref}`)).expect(404);
      expect(res.body).toEqual({ message: '404 Group Not Found' });
    });

    it('GET /groups/:id/projects is paginated and shows permissions-free Project entities', async () => {
      const res = await as(developer, t.http.get(`${API}/groups/show-group/projects?per_page=1`)).expect(200);
      expect(res.body.map((p: Json) => p.id)).toEqual([internalProject.id]);
      expect(res.headers).toMatchObject({ 'x-total': '2', 'x-total-pages': '2', 'x-next-page': '2' });
      expect(res.body[0]).not.toHaveProperty('runners_token');
    });
  });

  describe('GET /namespaces', () => {
    it('members see their groups with kind group; others do not', async () => {
      const g = await createGroup(owner, { name: 'Namespaced', path: 'namespaced' });
      await addGroupMember(g.id, owner, master.id, 40).expect(201);
      const res = await as(master, t.http.get(`${API}/namespaces?per_page=100`)).expect(200);
      expect(res.body).toEqual(expect.arrayContaining([{ id: g.id, path: 'namespaced', kind: 'group' }]));
      expect(res.body).toEqual(expect.arrayContaining([expect.objectContaining({ path: 'gmaster', kind: 'user' })]));
      for (const ns of res.body) expect(Object.keys(ns).sort()).toEqual(['id', 'kind', 'path']);
      const other = await as(outsider, t.http.get(`${API}/namespaces?per_page=100`)).expect(200);
      expect(other.body.map((n: Json) => n.id)).not.toContain(g.id);
      const searched = await as(master, t.http.get(`${API}/namespaces?search=namespac`)).expect(200);
      expect(searched.body).toEqual([{ id: g.id, path: 'namespaced', kind: 'group' }]);
      const admin = await root(t.http.get(`${API}/namespaces?search=namespaced`)).expect(200);
      expect(admin.body).toEqual([{ id: g.id, path: 'namespaced', kind: 'group' }]);
    });
  });

  describe('DELETE /groups/:id', () => {
    it('owner: 200; its projects and their repositories are removed', async () => {
      const g = await createGroup(owner, { name: 'Doomed', path: 'doomed' });
      const a = await createProject(owner, { name: 'Doomed A', namespace_id: g.id });
      const b = await createProject(owner, { name: 'Doomed B', namespace_id: g.id, visibility_level: 20 });
      await addGroupMember(g.id, owner, master.id, 40).expect(201);
      await as(master, t.http.post(`${API}/projects/${b.id}/star`)).expect(201);
      expect(git.exists(a.id)).toBe(true);
      expect(git.exists(b.id)).toBe(true);

      const denied = await as(master, t.http.delete(`${API}/groups/${g.id}`)).expect(403);
      expect(denied.body).toEqual({ message: '403 Forbidden' });
      const hidden = await as(outsider, t.http.delete(`${API}/groups/${g.id}`)).expect(404);
      expect(hidden.body).toEqual({ message: '404 Group Not Found' });
      expect(git.exists(a.id)).toBe(true);

      const res = await as(owner, t.http.delete(`${API}/groups/${g.id}`)).expect(200);
      expect(res.body).toMatchObject({ id: g.id, path: 'doomed' });
      await as(owner, t.http.get(`${API}/groups/${g.id}`)).expect(404);
      for (const p of [a, b]) {
        await root(t.http.get(`${API}/projects/${p.id}`)).expect(404);
        expect(existsSync(git.repositoryPath(p.id))).toBe(false);
      }
      const members = await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM group_members WHERE namespace_id = $1`, [g.id]);
      expect(members[0].n).toBe(0);
      const starred = await as(master, t.http.get(`${API}/projects/starred`)).expect(200);
      expect(starred.body.map((p: Json) => p.id)).not.toContain(b.id);
      const ns = await as(master, t.http.get(`${API}/namespaces?search=doomed`)).expect(200);
      expect(ns.body).toEqual([]);
      // the path is free again
      await createGroup(owner, { name: 'Doomed Again', path: 'doomed' });
    });

    it('deleting a group while a project is created in it: never 500, no project or repository left behind', async () => {
      for (let round = 0; round < 6; round++) {
        const g = await createGroup(owner, { name: `Racy ${round}`, path: `racy-${round}` });
        const [created, deleted] = await Promise.all([
          as(owner, t.http.post(`${API}/projects`)).send({ name: 'Racer', namespace_id: g.id }),
          new Promise((r) => setTimeout(r, round * 3)).then(() => as(owner, t.http.delete(`${API}/groups/${g.id}`))),
        ]);
        expect(deleted.status).toBe(200);
        expect([201, 400, 404]).toContain(created.status);
        const left = await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM projects WHERE namespace_id = $1`, [g.id]);
        expect(left[0].n).toBe(0);
        if (created.status === 201) expect(existsSync(git.repositoryPath(created.body.id))).toBe(false);
      }
    });

    it('an administrator may delete any group', async () => {
      const g = await createGroup(outsider, { name: 'Outsiders', path: 'outsiders' });
      await root(t.http.delete(`${API}/groups/${g.id}`)).expect(200);
      await root(t.http.get(`${API}/groups/${g.id}`)).expect(404);
    });
  });

  describe('POST /groups/:id/projects/:project_id (transfer)', () => {
    let target: Json;

    beforeAll(async () => {
      target = await createGroup(owner, { name: 'Transfer Target', path: 'transfer-target' });
    });

    it('an administrator moves a project into the group: 201; the repository stays where it is', async () => {
      const p = await createProject(outsider, { name: 'Movable' });
      const before = git.repositoryPath(p.id);
      const res = await root(t.http.post(`${API}/groups/${target.id}/projects/${p.id}`)).expect(201);
      expect(res.body).toMatchObject({
        id: p.id,
        path_with_namespace: 'transfer-target/movable',
        namespace: { id: target.id, kind: 'group' },
      });
      expect(res.body).not.toHaveProperty('owner');
      expect(git.repositoryPath(p.id)).toBe(before);
      expect(git.exists(p.id)).toBe(true);
      await root(t.http.get(`${API}/projects/${encodeURIComponent('goutsider/movable')}`)).expect(404);
      await root(t.http.get(`${API}/projects/${encodeURIComponent('transfer-target/movable')}`)).expect(200);
      // the group's owner now owns it
      const owned = await as(owner, t.http.get(`${API}/projects/owned?per_page=100`)).expect(200);
      expect(owned.body.map((x: Json) => x.id)).toContain(p.id);
      // the group path works too
      const q = await createProject(outsider, { name: 'Movable Two' });
      await root(t.http.post(`${API}/groups/transfer-target/projects/${q.id}`)).expect(201);
    });

    it('a project with the same path already in the group: 409', async () => {
      await createProject(owner, { name: 'Clash', namespace_id: target.id });
      const p = await createProject(outsider, { name: 'Clash' });
      const res = await root(t.http.post(`${API}/groups/${target.id}/projects/${p.id}`)).expect(409);
      expect(res.body.message).toEqual('409 Path has already been taken');
      const still = await root(t.http.get(`${API}/projects/${p.id}`)).expect(200);
      expect(still.body.path_with_namespace).toBe('goutsider/clash');
    });

    it('non-administrators: 403 (even the group owner); unknown project or group: 404', async () => {
      const p = await createProject(owner, { name: 'Stays Put' });
      const res = await as(owner, t.http.post(`${API}/groups/${target.id}/projects/${p.id}`)).expect(403);
      expect(res.body).toEqual({ message: '403 Forbidden' });
      const unknownProject = await root(t.http.post(`${API}/groups/${target.id}/projects/999999`)).expect(404);
      expect(unknownProject.body).toEqual({ message: '404 Project Not Found' });
      const unknownGroup = await root(t.http.post(`${API}/groups/999999/projects/${p.id}`)).expect(404);
      expect(unknownGroup.body).toEqual({ message: '404 Group Not Found' });
      const still = await root(t.http.get(`${API}/projects/${p.id}`)).expect(200);
      expect(still.body.path_with_namespace).toBe('gowner/stays-put');
    });
  });

  // ------------------------------------------------------------------ group members

  describe('group members', () => {
    let g: Json;
    let extra: TestUser;

    beforeAll(async () => {
      g = await createGroup(owner, { name: 'Crew', path: 'crew' });
      extra = await t.createUser({ username: 'gextra', name: 'Extra Person' });
    });

    it('add: 201 with the member; list and get show it', async () => {
      const res = await addGroupMember(g.id, owner, developer.id, 30).expect(201);
      expect(res.body).toEqual({
        name: 'Group Developer',
        username: 'gdeveloper',
        id: developer.id,
        state: 'active',
        avatar_url: expect.anything(),
        web_url: `${EXTERNAL_URL}/u/gdeveloper`,
        access_level: 30,
      });
      await addGroupMember(g.id, owner, master.id, 40).expect(201);
      const list = await as(developer, t.http.get(`${API}/groups/${g.id}/members`)).expect(200);
      expect(list.body.map((m: Json) => [m.username, m.access_level]).sort()).toEqual([
        ['gdeveloper', 30],
        ['gmaster', 40],
        ['gowner', 50],
      ]);
      expect(list.headers['x-total']).toBe('3');
      // the list loads the summary columns only, and shows the member as the single answers do
      expect(list.body.find((m: Json) => m.username === 'gdeveloper')).toEqual(res.body);
      const one = await as(developer, t.http.get(`${API}/groups/crew/members/${master.id}`)).expect(200);
      expect(one.body).toMatchObject({ id: master.id, access_level: 40 });
      const q = await as(developer, t.http.get(`${API}/groups/${g.id}/members?query=gmas`)).expect(200);
      expect(q.body.map((m: Json) => m.id)).toEqual([master.id]);
    });

    it('add again: 409 Member already exists (as 8.17, before the level is looked at)', async () => {
      const res = await addGroupMember(g.id, owner, developer.id, 20).expect(409);
      expect(res.body).toEqual({ message: '409 Member already exists' });
      const bad = await addGroupMember(g.id, owner, developer.id, 1234).expect(409);
      expect(bad.body).toEqual({ message: '409 Member already exists' });
      const one = await as(owner, t.http.get(`${API}/groups/${g.id}/members/${developer.id}`)).expect(200);
      expect(one.body.access_level).toBe(30);
    });

    it.each([
      [{ access_level: 30 }, '400 (Bad request) "user_id" not given'],
      [{ user_id: 'EXTRA' }, '400 (Bad request) "access_level" not given'],
    ])('missing attribute %j: 400', async (body, message) => {
      const send = { ...body } as Json;
      if (send.user_id === 'EXTRA') send.user_id = extra.id;
      const res = await as(owner, t.http.post(`${API}/groups/${g.id}/members`))
        .send(send)
        .expect(400);
      expect(res.body).toEqual({ message });
    });

    it.each([0, 5, 60, 1234, 'owner'])('bad access_level %p: 422 Access level is not known (400 for no number)', async (level) => {
      const res = await addGroupMember(g.id, owner, extra.id, level as number).expect(typeof level === 'number' ? 422 : 400);
      if (typeof level === 'number') expect(res.body).toEqual({ message: '422 Access level is not known' });
      else expect(res.body).toEqual({ message: '400 (Bad request) "access_level" is invalid' });
      await as(owner, t.http.get(`${API}/groups/${g.id}/members/${extra.id}`)).expect(404);
    });

    it('unknown user: 404 User Not Found; non-member get: 404 Member Not Found', async () => {
      const res = await addGroupMember(g.id, owner, 999999, 30).expect(404);
      expect(res.body).toEqual({ message: '404 User Not Found' });
      const get = await as(owner, t.http.get(`${API}/groups/${g.id}/members/${extra.id}`)).expect(404);
      expect(get.body).toEqual({ message: '404 Member Not Found' });
    });

    it('non-owners cannot add, update or remove members: 403', async () => {
      for (const u of [master, developer]) {
        const add = await addGroupMember(g.id, u, extra.id, 10).expect(403);
        expect(add.body).toEqual({ message: '403 Forbidden' });
        await as(u, t.http.put(`${API}/groups/${g.id}/members/${developer.id}`))
          .send({ access_level: 10 })
          .expect(403);
        await as(u, t.http.delete(`${API}/groups/${g.id}/members/${developer.id}`)).expect(403);
      }
      const hidden = await addGroupMember(g.id, outsider, extra.id, 10).expect(404);
      expect(hidden.body).toEqual({ message: '404 Group Not Found' });
      const one = await as(owner, t.http.get(`${API}/groups/${g.id}/members/${developer.id}`)).expect(200);
      expect(one.body.access_level).toBe(30);
    });

    it('update: 200 with the new level; a bad level 422; a non-member 404', async () => {
      const res = await as(owner, t.http.put(`${API}/groups/${g.id}/members/${developer.id}`))
        .send({ access_level: 20 })
        .expect(200);
      expect(res.body).toMatchObject({ id: developer.id, access_level: 20 });
      const one = await as(owner, t.http.get(`${API}/groups/${g.id}/members/${developer.id}`)).expect(200);
      expect(one.body.access_level).toBe(20);
      const bad = await as(owner, t.http.put(`${API}/groups/${g.id}/members/${developer.id}`))
        .send({ access_level: 45 })
        .expect(422);
      expect(bad.body).toEqual({ message: '422 Access level is not known' });
      const missing = await as(owner, t.http.put(`${API}/groups/${g.id}/members/${developer.id}`))
        .send({})
        .expect(400);
      expect(missing.body).toEqual({ message: '400 (Bad request) "access_level" not given' });
      const none = await as(owner, t.http.put(`${API}/groups/${g.id}/members/${extra.id}`))
        .send({ access_level: 20 })
        .expect(404);
      expect(none.body).toEqual({ message: '404 Member Not Found' });
      await as(owner, t.http.put(`${API}/groups/${g.id}/members/${developer.id}`))
        .send({ access_level: 30 })
        .expect(200);
    });

    it('the last owner can be neither demoted nor removed: 403; with a second owner both work', async () => {
      const demote = await as(owner, t.http.put(`${API}/groups/${g.id}/members/${owner.id}`))
        .send({ access_level: 40 })
        .expect(403);
      expect(demote.body.message).toMatch(/^403 Forbidden/);
      const remove = await as(owner, t.http.delete(`${API}/groups/${g.id}/members/${owner.id}`)).expect(403);
      expect(remove.body.message).toMatch(/^403 Forbidden/);
      const admin = await root(t.http.delete(`${API}/groups/${g.id}/members/${owner.id}`)).expect(403);
      expect(admin.body.message).toMatch(/^403 Forbidden/);
      const still = await as(owner, t.http.get(`${API}/groups/${g.id}/members/${owner.id}`)).expect(200);
      expect(still.body.access_level).toBe(50);

      await addGroupMember(g.id, owner, extra.id, 50).expect(201);
      // the new owner may manage members
      await as(extra, t.http.put(`${API}/groups/${g.id}/members/${owner.id}`))
        .send({ access_level: 40 })
        .expect(200);
      const lastAgain = await as(extra, t.http.delete(`${API}/groups/${g.id}/members/${extra.id}`)).expect(403);
      expect(lastAgain.body.message).toMatch(/^403 Forbidden/);
      await as(extra, t.http.put(`${API}/groups/${g.id}/members/${owner.id}`))
        .send({ access_level: 50 })
        .expect(200);
      const removed = await as(owner, t.http.delete(`${API}/groups/${g.id}/members/${extra.id}`)).expect(200);
      expect(removed.body).toMatchObject({ id: extra.id, access_level: 50 });
    });

    it('delete: 200 with the removed member; a non-member: 404 (8.17; a project answers 200 Access revoked)', async () => {
      await addGroupMember(g.id, owner, extra.id, 10).expect(201);
      const res = await as(owner, t.http.delete(`${API}/groups/${g.id}/members/${extra.id}`)).expect(200);
      await expectSchema(res, 'Member');
      expect(res.body).toMatchObject({ id: extra.id, username: 'gextra', access_level: 10 });
      await as(owner, t.http.get(`${API}/groups/${g.id}/members/${extra.id}`)).expect(404);
      const again = await as(owner, t.http.delete(`${API}/groups/${g.id}/members/${extra.id}`)).expect(404);
      expect(again.body).toEqual({ message: `404 Member: user_id:${extra.id} Not Found` });
      const unknown = await as(owner, t.http.delete(`${API}/groups/${g.id}/members/999999`)).expect(404);
      expect(unknown.body).toEqual({ message: '404 Member: user_id:999999 Not Found' });
      // a non-owner still learns nothing beyond 403
      await as(developer, t.http.delete(`${API}/groups/${g.id}/members/${extra.id}`)).expect(403);
    });

    it.each(['remove', 'demote'])('two owners who %s each other at once: the group keeps an owner', async (how) => {
      const other = await t.createUser({ username: `gco-${how}` });
      for (let round = 0; round < 5; round++) {
        const grp = await createGroup(owner, { name: `Duo ${how} ${round}`, path: `duo-${how}-${round}` });
        await addGroupMember(grp.id, owner, other.id, 50).expect(201);
        const hit = (by: TestUser, victim: TestUser) => {
          const url = `${API}/groups/${grp.id}/members/${victim.id}`;
          return how === 'remove' ? as(by, t.http.delete(url)) : as(by, t.http.put(url)).send({ access_level: 40 });
        };
        const results = await Promise.all([hit(owner, other), hit(other, owner)]);
        const statuses = results.map((r) => r.status);
        expect(statuses).not.toContain(500);
        expect(statuses.filter((s) => s === 200)).toHaveLength(1);
        const owners = await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM group_members WHERE namespace_id = $1 AND access_level = 50`, [grp.id]);
        expect(owners[0].n).toBe(1);
      }
    });

    it('the group owner is listed by GET /groups for the members only', async () => {
      const dev = await as(developer, t.http.get(`${API}/groups`)).expect(200);
      expect(dev.body.map((x: Json) => x.id)).toContain(g.id);
      const ext = await as(extra, t.http.get(`${API}/groups`)).expect(200);
      expect(ext.body.map((x: Json) => x.id)).not.toContain(g.id);
    });
  });

  // ------------------------------------------------------------------ group membership grants project access

  describe('group membership and projects', () => {
    let g: Json;
    let p: Json;
    let guest: TestUser;

    beforeAll(async () => {
      g = await createGroup(owner, { name: 'Platform', path: 'platform' });
      guest = await t.createUser({ username: 'gguest' });
      await addGroupMember(g.id, owner, developer.id, 30).expect(201);
      await addGroupMember(g.id, owner, master.id, 40).expect(201);
      await addGroupMember(g.id, owner, guest.id, 10).expect(201);
      p = await createProject(owner, { name: 'Core', namespace_id: g.id });
    });

    it('a developer of the group reads a private project of the group, with group_access 30', async () => {
      const res = await as(developer, t.http.get(`${API}/projects/${p.id}`)).expect(200);
      expect(res.body.permissions).toEqual({ project_access: null, group_access: { access_level: 30, notification_level: 3 } });
      expect(res.body).not.toHaveProperty('runners_token');
      const list = await as(developer, t.http.get(`${API}/projects?per_page=100`)).expect(200);
      expect(list.body.map((x: Json) => x.id)).toContain(p.id);
      await as(developer, t.http.get(`${API}/projects/${p.id}/members`)).expect(200);
    });

    it('… but gets 403 on PUT, archive, delete and member writes', async () => {
      const put = await as(developer, t.http.put(`${API}/projects/${p.id}`))
        .send({ description: 'dev' })
        .expect(403);
      expect(put.body).toEqual({ message: '403 Forbidden' });
      await as(developer, t.http.post(`${API}/projects/${p.id}/archive`)).expect(403);
      await as(developer, t.http.delete(`${API}/projects/${p.id}`)).expect(403);
      await as(developer, t.http.post(`${API}/projects/${p.id}/members`))
        .send({ user_id: outsider.id, access_level: 10 })
        .expect(403);
    });

    it('a guest of the group may read but not fork the private project', async () => {
      await as(guest, t.http.get(`${API}/projects/${p.id}`)).expect(200);
      const fork = await as(guest, t.http.post(`${API}/projects/fork/${p.id}`)).expect(403);
      expect(fork.body).toEqual({ message: '403 Forbidden' });
    });

    it('a master of the group updates the project (runners_token shown) and creates projects in the group', async () => {
      const put = await as(master, t.http.put(`${API}/projects/${p.id}`))
        .send({ description: 'by master' })
        .expect(200);
      expect(put.body.description).toBe('by master');
      expect(typeof put.body.runners_token).toBe('string');
      const rename = await as(master, t.http.put(`${API}/projects/${p.id}`))
        .send({ name: 'Renamed Core' })
        .expect(403);
      expect(rename.body).toEqual({ message: '403 Forbidden' });
      const created = await as(master, t.http.post(`${API}/projects`))
        .send({ name: 'Master Service', namespace_id: g.id })
        .expect(201);
      expect(created.body.path_with_namespace).toBe('platform/master-service');
      expect(git.exists(created.body.id)).toBe(true);
      // the developer may not
      const dev = await as(developer, t.http.post(`${API}/projects`))
        .send({ name: 'Dev Service', namespace_id: g.id })
        .expect(400);
      expect(dev.body).toEqual({ message: { namespace: ['is not valid'] } });
    });

    it('the group owner owns the group projects (rename, archive, delete)', async () => {
      const q = await createProject(master, { name: 'Owned By Group', namespace_id: g.id });
      await as(owner, t.http.put(`${API}/projects/${q.id}`))
        .send({ name: 'Renamed By Owner' })
        .expect(200);
      await as(owner, t.http.post(`${API}/projects/${q.id}/archive`)).expect(201);
      await as(master, t.http.delete(`${API}/projects/${q.id}`)).expect(403);
      await as(owner, t.http.delete(`${API}/projects/${q.id}`)).expect(200);
      expect(git.exists(q.id)).toBe(false);
    });

    it('the higher of direct and group membership applies; both are shown', async () => {
      await as(owner, t.http.post(`${API}/projects/${p.id}/members`))
        .send({ user_id: guest.id, access_level: 40 })
        .expect(201);
      const res = await as(guest, t.http.get(`${API}/projects/${p.id}`)).expect(200);
      expect(res.body.permissions).toEqual({
        project_access: { access_level: 40, notification_level: 3 },
        group_access: { access_level: 10, notification_level: 3 },
      });
      expect(typeof res.body.runners_token).toBe('string');
      await as(guest, t.http.put(`${API}/projects/${p.id}`))
        .send({ description: 'by guest-turned-master' })
        .expect(200);
      await as(owner, t.http.delete(`${API}/projects/${p.id}/members/${guest.id}`)).expect(200);
      await as(guest, t.http.put(`${API}/projects/${p.id}`))
        .send({ description: 'again' })
        .expect(403);
    });

    it('leaving the group removes the access: 404', async () => {
      const leaver = await t.createUser({ username: 'gleaver' });
      await addGroupMember(g.id, owner, leaver.id, 30).expect(201);
      await as(leaver, t.http.get(`${API}/projects/${p.id}`)).expect(200);
      await as(owner, t.http.delete(`${API}/groups/${g.id}/members/${leaver.id}`)).expect(200);
      const res = await as(leaver, t.http.get(`${API}/projects/${p.id}`)).expect(404);
      expect(res.body).toEqual({ message: '404 Project Not Found' });
      const list = await as(leaver, t.http.get(`${API}/projects`)).expect(200);
      expect(list.body).toEqual([]);
    });

    it('outsiders: 404 on the private group project', async () => {
      const res = await as(outsider, t.http.get(`${API}/projects/${encodeURIComponent('platform/core')}`)).expect(404);
      expect(res.body).toEqual({ message: '404 Project Not Found' });
    });
  });

  // ------------------------------------------------------------------ project members

  describe('project members', () => {
    let p: Json;
    let member: TestUser;
    let newcomer: TestUser;

    beforeAll(async () => {
      member = await t.createUser({ username: 'pmember', name: 'Project Member' });
      newcomer = await t.createUser({ username: 'pnewcomer', name: 'New Comer' });
      p = await createProject(owner, { name: 'Membered' });
    });

    it('the creator is listed as master; add 201; list, get', async () => {
      const res = await as(owner, t.http.post(`${API}/projects/${p.id}/members`))
        .send({ user_id: member.id, access_level: 30 })
        .expect(201);
      expect(res.body).toEqual({
        name: 'Project Member',
        username: 'pmember',
        id: member.id,
        state: 'active',
        avatar_url: expect.anything(),
        web_url: `${EXTERNAL_URL}/u/pmember`,
        access_level: 30,
      });
      const list = await as(member, t.http.get(`${API}/projects/${p.id}/members`)).expect(200);
      const levels = new Map(list.body.map((m: Json) => [m.id, m.access_level]));
      expect(levels).toEqual(
        new Map([
          [owner.id, 40],
          [member.id, 30],
        ]),
      );
      expect(list.headers['x-total']).toBe('2');
      const one = await as(member, t.http.get(`${API}/projects/${p.id}/members/${member.id}`)).expect(200);
      expect(one.body).toMatchObject({ id: member.id, username: 'pmember', access_level: 30 });
      // the list loads the summary columns only, and shows the member as the single answers do
      expect(list.body.find((m: Json) => m.id === member.id)).toEqual(one.body);
      expect(one.body).toEqual(res.body);
      const byPath = await as(member, t.http.get(`${API}/projects/${encodeURIComponent('gowner/membered')}/members?query=project`)).expect(200);
      expect(byPath.body.map((m: Json) => m.id)).toEqual([member.id]);
    });

    it('is paginated', async () => {
      const first = await as(owner, t.http.get(`${API}/projects/${p.id}/members?per_page=1`)).expect(200);
      expect(first.headers).toMatchObject({ 'x-total': '2', 'x-total-pages': '2', 'x-page': '1', 'x-next-page': '2' });
      const res = await as(owner, t.http.get(`${API}/projects/${p.id}/members?per_page=1&page=2`)).expect(200);
      expect(res.headers).toMatchObject({ 'x-total': '2', 'x-total-pages': '2', 'x-page': '2', 'x-next-page': '' });
      expect([first.body[0].id, res.body[0].id].sort()).toEqual([owner.id, member.id].sort());
    });

    it('add again: 201 with the existing member, unchanged (8.17; a group answers 409)', async () => {
      const before = await as(owner, t.http.get(`${API}/projects/${p.id}/members/${member.id}`)).expect(200);
      for (const level of [20, 1234]) {
        const res = await as(owner, t.http.post(`${API}/projects/${p.id}/members`))
          .send({ user_id: member.id, access_level: level })
          .expect(201);
        expect(res.body).toEqual(before.body);
      }
      const after = await as(owner, t.http.get(`${API}/projects/${p.id}/members/${member.id}`)).expect(200);
      expect(after.body.access_level).toBe(30);
      const joined = await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM events WHERE project_id = $1 AND author_id = $2 AND action = 'joined'`, [
        p.id,
        member.id,
      ]);
      expect(joined[0].n).toBe(1); // no second "joined" event
    });

    it('get a non-member: 404 Member Not Found', async () => {
      for (const id of [String(newcomer.id), '999999', 'abc']) {
        const res = await as(owner, t.http.get(`${API}/projects/${p.id}/members/${id}`)).expect(404);
        expect(res.body).toEqual({ message: '404 Member Not Found' });
      }
    });

    it('unknown user_id: 404 User Not Found', async () => {
      const res = await as(owner, t.http.post(`${API}/projects/${p.id}/members`))
        .send({ user_id: 999999, access_level: 30 })
        .expect(404);
      expect(res.body).toEqual({ message: '404 User Not Found' });
    });

    it.each([
      [{ access_level: 30 }, '400 (Bad request) "user_id" not given'],
      [{ user_id: '', access_level: 30 }, '400 (Bad request) "user_id" not given'],
      [{ user_id: 'NEW' }, '400 (Bad request) "access_level" not given'],
      [{ user_id: 'abc', access_level: 30 }, '400 (Bad request) "user_id" is invalid'],
    ])('%j: 400', async (body, message) => {
      const send = { ...body } as Json;
      if (send.user_id === 'NEW') send.user_id = newcomer.id;
      const res = await as(owner, t.http.post(`${API}/projects/${p.id}/members`))
        .send(send)
        .expect(400);
      expect(res.body).toEqual({ message });
    });

    it.each([0, 15, 50, 60, 1234])('access_level %i is not a project level (owner included): 422 Access level is not known', async (level) => {
      const res = await as(owner, t.http.post(`${API}/projects/${p.id}/members`))
        .send({ user_id: newcomer.id, access_level: level })
        .expect(422);
      expect(res.body).toEqual({ message: '422 Access level is not known' });
      await as(owner, t.http.get(`${API}/projects/${p.id}/members/${newcomer.id}`)).expect(404);
    });

    it('update: 200; a non-member 404; a bad level 422; a developer 403', async () => {
      const res = await as(owner, t.http.put(`${API}/projects/${p.id}/members/${member.id}`))
        .send({ access_level: 20 })
        .expect(200);
      expect(res.body).toMatchObject({ id: member.id, access_level: 20 });
      const shown = await as(member, t.http.get(`${API}/projects/${p.id}`)).expect(200);
      expect(shown.body.permissions.project_access.access_level).toBe(20);
      const none = await as(owner, t.http.put(`${API}/projects/${p.id}/members/${newcomer.id}`))
        .send({ access_level: 20 })
        .expect(404);
      expect(none.body).toEqual({ message: '404 Member Not Found' });
      for (const level of [11, 50]) {
        const bad = await as(owner, t.http.put(`${API}/projects/${p.id}/members/${member.id}`))
          .send({ access_level: level })
          .expect(422);
        expect(bad.body).toEqual({ message: '422 Access level is not known' });
      }
      await as(owner, t.http.put(`${API}/projects/${p.id}/members/${member.id}`))
        .send({ access_level: 30 })
        .expect(200);
      const dev = await as(member, t.http.put(`${API}/projects/${p.id}/members/${member.id}`))
        .send({ access_level: 40 })
        .expect(403);
      expect(dev.body).toEqual({ message: '403 Forbidden' });
    });

    it('a master may manage members; a developer may not', async () => {
      const res = await as(member, t.http.post(`${API}/projects/${p.id}/members`))
        .send({ user_id: newcomer.id, access_level: 10 })
        .expect(403);
      expect(res.body).toEqual({ message: '403 Forbidden' });
      await as(owner, t.http.put(`${API}/projects/${p.id}/members/${member.id}`))
        .send({ access_level: 40 })
        .expect(200);
      await as(member, t.http.post(`${API}/projects/${p.id}/members`))
        .send({ user_id: newcomer.id, access_level: 10 })
        .expect(201);
      await as(member, t.http.delete(`${API}/projects/${p.id}/members/${newcomer.id}`)).expect(200);
      await as(owner, t.http.put(`${API}/projects/${p.id}/members/${member.id}`))
        .send({ access_level: 30 })
        .expect(200);
    });

    it('delete: 200 with the member, access gone; a non-member: 200 Access revoked', async () => {
      const res = await as(owner, t.http.delete(`${API}/projects/${p.id}/members/${member.id}`)).expect(200);
      expect(res.body).toMatchObject({ id: member.id, username: 'pmember', access_level: 30 });
      await as(member, t.http.get(`${API}/projects/${p.id}`)).expect(404);
      const again = await as(owner, t.http.delete(`${API}/projects/${p.id}/members/${member.id}`)).expect(200);
      expect(again.body).toEqual({ message: 'Access revoked', id: member.id });
      const unknown = await as(owner, t.http.delete(`${API}/projects/${p.id}/members/999999`)).expect(200);
      expect(unknown.body).toEqual({ message: 'Access revoked', id: 999999 });
    });

    it('a non-reader gets 404 on every member route', async () => {
      const routes: [string, string][] = [
        ['get', `${API}/projects/${p.id}/members`],
        ['get', `${API}/projects/${p.id}/members/${owner.id}`],
        ['post', `${API}/projects/${p.id}/members`],
        ['put', `${API}/projects/${p.id}/members/${owner.id}`],
        ['delete', `${API}/projects/${p.id}/members/${owner.id}`],
      ];
      for (const [method, url] of routes) {
        const req = (t.http as unknown as Record<string, (u: string) => Test>)[method](url);
        const res = await as(outsider, req).send({ user_id: outsider.id, access_level: 40 }).expect(404);
        expect(res.body).toEqual({ message: '404 Project Not Found' });
      }
      const still = await as(owner, t.http.get(`${API}/projects/${p.id}/members/${owner.id}`)).expect(200);
      expect(still.body.access_level).toBe(40);
    });

    it('unknown project: 404 Project Not Found', async () => {
      const res = await as(owner, t.http.get(`${API}/projects/999999/members`)).expect(404);
      expect(res.body).toEqual({ message: '404 Project Not Found' });
    });
  });

  it('every project has its repository on disk and no repository is left without a project', async () => {
    const rows = await t.sql<{ id: number }>(`SELECT id FROM projects`);
    const expected = new Set(rows.map((r) => git.repositoryPath(r.id)));
    for (const path of expected) expect(existsSync(path)).toBe(true);
    const found: string[] = [];
    const walk = (dir: string) => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        if (!entry.isDirectory()) continue;
        const full = join(dir, entry.name);
        if (entry.name.endsWith('.git')) found.push(full);
        else walk(full);
      }
    };
    walk(join(t.config.dataDir, 'repositories'));
    expect(found.filter((f) => !expected.has(f))).toEqual([]);
  });
});
