import { existsSync } from 'node:fs';
import type { Test } from 'supertest';
import { GitService } from '../src/git/git.service';
import { startTestApp, TestApp, TestUser } from './helpers/test-app';

/**
 * The visibility matrix: every kind of caller against a private, an internal and a public
 * project, for every project operation whose answer depends on who asks. The expectations are
 * written out as explicit tables (one column per visibility: private, internal, public).
 */

const API = '/api/v3';

const CALLERS = ['admin', 'owner', 'guest', 'reporter', 'developer', 'master', 'non-member', 'external', 'anonymous'] as const;
type Caller = (typeof CALLERS)[number];
const VISIBILITIES = ['private', 'internal', 'public'] as const;
type Vis = (typeof VISIBILITIES)[number];
const LEVEL: Record<Vis, number> = { private: 0, internal: 10, public: 20 };
const MEMBER_LEVEL = { guest: 10, reporter: 20, developer: 30, master: 40 } as const;
type MemberRole = keyof typeof MEMBER_LEVEL;
const MEMBER_ROLES = Object.keys(MEMBER_LEVEL) as MemberRole[];

type Row = [number, number, number];
const all = (s: number): Row => [s, s, s];

/** GET /projects/:id */
const SHOW: Record<Caller, Row> = {
  admin: all(200),
  owner: all(200),
  guest: all(200),
  reporter: all(200),
  developer: all(200),
  master: all(200),
  'non-member': [404, 200, 200],
  external: [404, 404, 200],
  anonymous: all(401),
};

/** Whether the project is in the caller's GET /projects (member list); anonymous gets 401. */
const IN_MEMBER_LIST: Record<Exclude<Caller, 'anonymous'>, [boolean, boolean, boolean]> = {
  admin: [false, false, false],
  owner: [true, true, true],
  guest: [true, true, true],
  reporter: [true, true, true],
  developer: [true, true, true],
  master: [true, true, true],
  'non-member': [false, false, false],
  external: [false, false, false],
};

/** PUT /projects/:id with a new description */
const UPDATE: Record<Caller, Row> = {
  admin: all(200),
  owner: all(200),
  guest: all(403),
  reporter: all(403),
  developer: all(403),
  master: all(200),
  'non-member': [404, 403, 403],
  external: [404, 404, 403],
  anonymous: all(401),
};

/** DELETE /projects/:id (200s run against throw-away projects of the same visibility) */
const DELETE: Record<Caller, Row> = {
  admin: all(200),
  owner: all(200),
  guest: all(403),
  reporter: all(403),
  developer: all(403),
  master: all(403),
  'non-member': [404, 403, 403],
  external: [404, 404, 403],
  anonymous: all(401),
};

/**
 * POST /projects/fork/:id. The owner's own namespace already holds the path: 409. A guest lacks
 * download_code on a private project (403) but gets it on internal/public ones like any non-member.
 * An external user may read the public project but has no project quota of its own (GitLab 8.x
 * external users cannot create projects): 403 with the project-limit array.
 */
const FORK: Record<Caller, Row> = {
  admin: all(201),
  owner: all(409),
  guest: [403, 201, 201],
  reporter: all(201),
  developer: all(201),
  master: all(201),
  'non-member': [404, 201, 201],
  external: [404, 404, 403],
  anonymous: all(401),
};

/** POST /projects/:id/members */
const ADD_MEMBER: Record<Caller, Row> = {
  admin: all(201),
  owner: all(201),
  guest: all(403),
  reporter: all(403),
  developer: all(403),
  master: all(201),
  'non-member': [404, 403, 403],
  external: [404, 404, 403],
  anonymous: all(401),
};

/** Who sees `runners_token` in GET /projects/:id (when it can read the project at all). */
const SEES_RUNNERS_TOKEN: Record<Exclude<Caller, 'anonymous'>, boolean> = {
  admin: true,
  owner: true,
  guest: false,
  reporter: false,
  developer: false,
  master: true,
  'non-member': false,
  external: false,
};

/** permissions.project_access.access_level in GET /projects/:id (null: no direct membership). */
const PROJECT_ACCESS: Record<Exclude<Caller, 'anonymous'>, number | null> = {
  admin: null,
  owner: 40, // the creator of a personal project is added as its master (the namespace makes it the owner)
  guest: 10,
  reporter: 20,
  developer: 30,
  master: 40,
  'non-member': null,
  external: null,
};

const col = (v: Vis) => VISIBILITIES.indexOf(v);
const combos = CALLERS.flatMap((c) => VISIBILITIES.map((v) => [c, v] as [Caller, Vis]));
const readableCombos = combos.filter(([c, v]) => SHOW[c][col(v)] === 200) as [Exclude<Caller, 'anonymous'>, Vis][];

describe('project visibility matrix', () => {
  let t: TestApp;
  let git: GitService;
  const users = {} as Record<Exclude<Caller, 'anonymous' | 'admin'>, TestUser>;
  const project = {} as Record<Vis, { id: number; path: string }>;
  /** Users added by the callers allowed to add members (one per caller, used on each project). */
  const recruit = {} as Record<'admin' | 'owner' | 'master', TestUser>;
  /** Never added anywhere: the target of every refused add. */
  let bystander: TestUser;

  const tokenOf = (c: Caller): string | undefined => (c === 'anonymous' ? undefined : c === 'admin' ? t.root.token : users[c].token);
  const auth = (req: Test, c: Caller): Test => {
    const token = tokenOf(c);
    return token ? req.set('PRIVATE-TOKEN', token) : req;
  };
  const asRoot = (req: Test) => req.set('PRIVATE-TOKEN', t.root.token);

  async function createProject(owner: TestUser, name: string, vis: Vis) {
    const res = await t.http.post(`${API}/projects`).set('PRIVATE-TOKEN', owner.token).send({ name, visibility_level: LEVEL[vis] });
    if (res.status !== 201) throw new Error(`create ${name}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body as { id: number; path: string; visibility_level: number };
  }

  beforeAll(async () => {
    t = await startTestApp();
    git = t.app.app.get(GitService);
    users.owner = await t.createUser({ username: 'matrix-owner' });
    for (const role of MEMBER_ROLES) users[role] = await t.createUser({ username: `matrix-${role}` });
    users['non-member'] = await t.createUser({ username: 'matrix-stranger' });
    users.external = await t.createUser({ username: 'matrix-external', external: true });
    bystander = await t.createUser({ username: 'matrix-bystander' });
    for (const c of ['admin', 'owner', 'master'] as const) recruit[c] = await t.createUser({ username: `recruit-of-${c}` });

    for (const vis of VISIBILITIES) {
      const p = await createProject(users.owner, `Matrix ${vis}`, vis);
      expect(p.visibility_level).toBe(LEVEL[vis]);
      project[vis] = { id: p.id, path: p.path };
      for (const role of MEMBER_ROLES) {
        await t.http
          .post(`${API}/projects/${p.id}/members`)
          .set('PRIVATE-TOKEN', users.owner.token)
          .send({ user_id: users[role].id, access_level: MEMBER_LEVEL[role] })
          .expect(201);
      }
    }
  });
  afterAll(() => t.close());

  it('the external user really is external', async () => {
    const res = await asRoot(t.http.get(`${API}/users/${users.external.id}`)).expect(200);
    expect(res.body.external).toBe(true);
  });

  it(`covers ${CALLERS.length} callers x ${VISIBILITIES.length} visibilities`, () => {
    expect(combos).toHaveLength(27);
    expect(readableCombos).toHaveLength(21);
  });

  describe('GET /projects/:id', () => {
    it.each(combos)('%s on the %s project', async (caller, vis) => {
      const expected = SHOW[caller][col(vis)];
      const res = await auth(t.http.get(`${API}/projects/${project[vis].id}`), caller).expect(expected);
      if (expected === 200) {
        expect(res.body).toMatchObject({ id: project[vis].id, visibility_level: LEVEL[vis], public: vis === 'public' });
        expect(res.body.permissions).toBeDefined();
      } else if (expected === 404) {
        expect(res.body).toEqual({ message: '404 Project Not Found' });
      } else {
        expect(res.body).toEqual({ message: '401 Unauthorized' });
      }
    });

    it.each(combos)('%s on the %s project addressed as namespace%%2Fpath', async (caller, vis) => {
      const expected = SHOW[caller][col(vis)];
      const res = await auth(t.http.get(`${API}/projects/${encodeURIComponent(`matrix-owner/${project[vis].path}`)}`), caller).expect(expected);
      if (expected === 200) expect(res.body.id).toBe(project[vis].id);
      else if (expected === 404) expect(res.body.message).toBe('404 Project Not Found');
    });
  });

  describe('GET /projects (projects the caller is a member of)', () => {
    it.each(combos)('%s: presence of the %s project', async (caller, vis) => {
      const res = await auth(t.http.get(`${API}/projects?per_page=100`), caller);
      if (caller === 'anonymous') {
        expect(res.status).toBe(401);
        return;
      }
      expect(res.status).toBe(200);
      const ids = (res.body as { id: number }[]).map((p) => p.id);
      if (IN_MEMBER_LIST[caller][col(vis)]) expect(ids).toContain(project[vis].id);
      else expect(ids).not.toContain(project[vis].id);
    });
  });

  describe('PUT /projects/:id (description)', () => {
    it.each(combos)('%s on the %s project', async (caller, vis) => {
      const expected = UPDATE[caller][col(vis)];
      const description = `set by ${caller} on ${vis}`;
      const res = await auth(t.http.put(`${API}/projects/${project[vis].id}`), caller)
        .send({ description })
        .expect(expected);
      const after = await asRoot(t.http.get(`${API}/projects/${project[vis].id}`)).expect(200);
      if (expected === 200) {
        expect(res.body.description).toBe(description);
        expect(after.body.description).toBe(description);
      } else {
        expect(after.body.description).not.toBe(description);
        if (expected === 404) expect(res.body.message).toBe('404 Project Not Found');
        if (expected === 403) expect(res.body.message).toBe('403 Forbidden');
      }
    });
  });

  describe('DELETE /projects/:id', () => {
    it.each(combos)('%s on the %s project', async (caller, vis) => {
      const expected = DELETE[caller][col(vis)];
      if (expected === 200) {
        const victim = await createProject(users.owner, `Doomed ${vis} by ${caller}`, vis);
        expect(git.exists(victim.id)).toBe(true);
        const res = await auth(t.http.delete(`${API}/projects/${victim.id}`), caller).expect(200);
        expect(res.body).toBe(true);
        await asRoot(t.http.get(`${API}/projects/${victim.id}`)).expect(404);
        expect(existsSync(git.repositoryPath(victim.id))).toBe(false);
        return;
      }
      const res = await auth(t.http.delete(`${API}/projects/${project[vis].id}`), caller).expect(expected);
      if (expected === 404) expect(res.body.message).toBe('404 Project Not Found');
      if (expected === 403) expect(res.body.message).toBe('403 Forbidden');
      await asRoot(t.http.get(`${API}/projects/${project[vis].id}`)).expect(200);
      expect(git.exists(project[vis].id)).toBe(true);
    });
  });

  describe('POST /projects/fork/:id', () => {
    it.each(combos)('%s forks the %s project', async (caller, vis) => {
      const expected = FORK[caller][col(vis)];
      const res = await auth(t.http.post(`${API}/projects/fork/${project[vis].id}`), caller).expect(expected);
      if (expected === 201) {
        const username = caller === 'admin' ? 'root' : users[caller as keyof typeof users].username;
        expect(res.body).toMatchObject({
          path: project[vis].path,
          path_with_namespace: `${username}/${project[vis].path}`,
          forked_from_project: { id: project[vis].id },
        });
        expect(res.body.id).not.toBe(project[vis].id);
        expect(git.exists(res.body.id)).toBe(true);
      } else if (expected === 409) {
        expect(res.body.message).toMatch(/^409 (Name|Path) has already been taken$/);
      } else if (expected === 404) {
        expect(res.body.message).toBe('404 Project Not Found');
      } else if (expected === 403 && caller === 'external') {
        expect(res.body).toEqual({ message: '403 Your project limit is 0 projects! Please contact your administrator to increase it' });
      } else if (expected === 403) {
        expect(res.body.message).toBe('403 Forbidden');
      }
    });
  });

  describe('POST and DELETE /projects/:id/star', () => {
    it.each(combos)('%s stars and unstars the %s project', async (caller, vis) => {
      const url = `${API}/projects/${project[vis].id}/star`;
      const readable = SHOW[caller][col(vis)];
      if (readable !== 200) {
        const star = await auth(t.http.post(url), caller).expect(readable);
        const unstar = await auth(t.http.delete(url), caller).expect(readable);
        const message = readable === 404 ? '404 Project Not Found' : '401 Unauthorized';
        expect(star.body.message).toBe(message);
        expect(unstar.body.message).toBe(message);
        return;
      }
      const starred = await auth(t.http.post(url), caller).expect(201);
      expect(starred.body).toMatchObject({ id: project[vis].id, star_count: 1 });
      await auth(t.http.post(url), caller).expect(304);
      const listed = await auth(t.http.get(`${API}/projects/starred`), caller).expect(200);
      expect(listed.body.map((p: { id: number }) => p.id)).toContain(project[vis].id);
      const unstarred = await auth(t.http.delete(url), caller).expect(200);
      expect(unstarred.body).toMatchObject({ id: project[vis].id, star_count: 0 });
      await auth(t.http.delete(url), caller).expect(304);
    });
  });

  describe('GET /projects/:id/members', () => {
    it.each(combos)('%s lists the members of the %s project', async (caller, vis) => {
      const expected = SHOW[caller][col(vis)];
      const res = await auth(t.http.get(`${API}/projects/${project[vis].id}/members?per_page=100`), caller).expect(expected);
      if (expected === 200) {
        const byName = new Map((res.body as { username: string; access_level: number }[]).map((m) => [m.username, m.access_level]));
        for (const role of MEMBER_ROLES) expect(byName.get(users[role].username)).toBe(MEMBER_LEVEL[role]);
        expect(byName.has(users['non-member'].username)).toBe(false);
      } else if (expected === 404) {
        expect(res.body.message).toBe('404 Project Not Found');
      }
    });
  });

  describe('POST /projects/:id/members', () => {
    it.each(combos)('%s adds a member to the %s project', async (caller, vis) => {
      const expected = ADD_MEMBER[caller][col(vis)];
      const newcomer = expected === 201 ? recruit[caller as keyof typeof recruit] : bystander;
      const res = await auth(t.http.post(`${API}/projects/${project[vis].id}/members`), caller)
        .send({ user_id: newcomer.id, access_level: 20 })
        .expect(expected);
      const member = await asRoot(t.http.get(`${API}/projects/${project[vis].id}/members/${newcomer.id}`));
      if (expected === 201) {
        expect(res.body).toMatchObject({ id: newcomer.id, username: newcomer.username, access_level: 20 });
        expect(member.status).toBe(200);
        expect(member.body.access_level).toBe(20);
        return;
      }
      if (expected === 404) expect(res.body.message).toBe('404 Project Not Found');
      if (expected === 403) expect(res.body.message).toBe('403 Forbidden');
      if (expected === 401) expect(res.body.message).toBe('401 Unauthorized');
      expect(member.status).toBe(404);
      expect(member.body.message).toBe('404 Member Not Found');
    });
  });

  describe('runners_token and permissions in GET /projects/:id', () => {
    it.each(readableCombos)('%s on the %s project', async (caller, vis) => {
      const res = await auth(t.http.get(`${API}/projects/${project[vis].id}`), caller).expect(200);
      if (SEES_RUNNERS_TOKEN[caller]) {
        expect(typeof res.body.runners_token).toBe('string');
        expect(res.body.runners_token.length).toBeGreaterThanOrEqual(20);
      } else {
        expect(res.body).not.toHaveProperty('runners_token');
      }
      const expectedAccess = PROJECT_ACCESS[caller];
      if (expectedAccess === null) expect(res.body.permissions.project_access).toBeNull();
      else expect(res.body.permissions.project_access).toMatchObject({ access_level: expectedAccess, notification_level: 3 });
      expect(res.body.permissions.group_access).toBeNull();
    });

    it.each(readableCombos)('the star answer of %s on the %s project carries it alike', async (caller, vis) => {
      try {
        const res = await auth(t.http.post(`${API}/projects/${project[vis].id}/star`), caller);
        expect(res.status).toBe(201);
        if (SEES_RUNNERS_TOKEN[caller]) expect(typeof res.body.runners_token).toBe('string');
        else expect(res.body).not.toHaveProperty('runners_token');
      } finally {
        await auth(t.http.delete(`${API}/projects/${project[vis].id}/star`), caller);
      }
    });

    it('every caller who sees the token sees the same one', async () => {
      const tokens = new Set<string>();
      for (const c of ['admin', 'owner', 'master'] as const) {
        const res = await auth(t.http.get(`${API}/projects/${project.private.id}`), c).expect(200);
        tokens.add(res.body.runners_token);
      }
      expect(tokens.size).toBe(1);
    });
  });

  describe('runners_token in lists and the star answer, to the same callers as GET /projects/:id', () => {
    const LISTS = ['/projects', '/projects/owned', '/projects/starred', '/projects/all', '/projects/search/matrix'];
    const LIST_CALLERS = ['admin', 'owner', 'master', 'developer'] as const;
    it.each(LIST_CALLERS.flatMap((c) => LISTS.map((l) => [c, l] as [Caller, string])))('%s: %s', async (caller, list) => {
      for (const vis of VISIBILITIES) await auth(t.http.post(`${API}/projects/${project[vis].id}/star`), caller);
      try {
        const res = await auth(t.http.get(`${API}${list}?per_page=100`), caller);
        if (list === '/projects/all' && caller !== 'admin') {
          expect(res.status).toBe(403);
          return;
        }
        expect(res.status).toBe(200);
        const items = res.body as Record<string, unknown>[];
        const matrixIds = Object.values(project).map((p) => p.id);
        // the lists that can contain the matrix projects for this caller do contain them
        if (list !== '/projects/owned' || caller === 'owner') {
          if (!(list === '/projects' && caller === 'admin')) {
            expect(items.map((p) => p.id)).toEqual(expect.arrayContaining(matrixIds));
          }
        }
        expect(items.length).toBeGreaterThan(0);
        for (const p of items.filter((x) => matrixIds.includes(x.id as number))) {
          if (SEES_RUNNERS_TOKEN[caller as Exclude<Caller, 'anonymous'>]) expect([p.id, typeof p.runners_token]).toEqual([p.id, 'string']);
          else expect(p).not.toHaveProperty('runners_token');
        }
      } finally {
        for (const vis of VISIBILITIES) await auth(t.http.delete(`${API}/projects/${project[vis].id}/star`), caller);
      }
    });
  });

  describe('permissions in the member list', () => {
    it.each([...MEMBER_ROLES, 'owner'] as const)('%s sees its own access level on each project', async (caller) => {
      const res = await auth(t.http.get(`${API}/projects?per_page=100`), caller).expect(200);
      for (const vis of VISIBILITIES) {
        const item = (res.body as { id: number; permissions: { project_access: { access_level: number } | null } }[]).find((p) => p.id === project[vis].id);
        expect(item).toBeDefined();
        expect(item!.permissions.project_access!.access_level).toBe(PROJECT_ACCESS[caller]);
      }
    });
  });
});
