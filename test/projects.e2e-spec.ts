import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Test } from 'supertest';
import { GitService } from '../src/git/git.service';
import { ProjectResolver } from '../src/projects/project-resolver.service';
import { parseProjectRef, ProjectRef } from '../src/common/params/refs';
import { UsersRepository } from '../src/users/users.repository';
import { expectSchema } from './helpers/schema';
import { countQueries, EXTERNAL_URL, startTestApp, TestApp, TestUser } from './helpers/test-app';

const API = '/api/v3';
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const NAME_MESSAGE = "can contain only letters, digits, '_', '.', dash and space. It must start with letter, digit or '_'.";
const PATH_MESSAGE = "can contain only letters, digits, '_', '-' and '.'. Cannot start with '-', end in '.git' or end in '.atom'";

type Json = Record<string, any>;

describe('projects', () => {
  let t: TestApp;
  let git: GitService;
  let alice: TestUser;
  let bob: TestUser;

  const as = (u: TestUser | string, req: Test) => req.set('PRIVATE-TOKEN', typeof u === 'string' ? u : u.token);
  const root = (req: Test) => req.set('PRIVATE-TOKEN', t.root.token);
  const settings = (body: Json) =>
    root(t.http.put(`${API}/application/settings`))
      .send(body)
      .expect(200);

  async function create(u: TestUser | string, body: Json): Promise<Json> {
    const res = await as(u, t.http.post(`${API}/projects`)).send(body);
    if (res.status !== 201) throw new Error(`create ${JSON.stringify(body)}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  }

  async function createGroup(owner: TestUser, path: string, extra: Json = {}): Promise<Json> {
    const res = await as(owner, t.http.post(`${API}/groups`)).send({ name: path, path, ...extra });
    if (res.status !== 201) throw new Error(`group ${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  }

  /** A commit on `branch` made with git plumbing directly in the bare repository. */
  function commitTo(projectId: number, branch: string, message = 'initial'): string {
    const gitDir = git.repositoryPath(projectId);
    const env = {
      ...process.env,
      GIT_DIR: gitDir,
      GIT_AUTHOR_NAME: 'Tester',
      GIT_AUTHOR_EMAIL: 'tester@example.com',
      GIT_COMMITTER_NAME: 'Tester',
      GIT_COMMITTER_EMAIL: 'tester@example.com',
    };
    const blob = execFileSync('git', ['hash-object', '-w', '--stdin'], { env, input: `${message}\n` })
      .toString()
      .trim();
    const tree = execFileSync('git', ['mktree'], { env, input: `100644 blob ${blob}\tREADME.md\n` })
      .toString()
      .trim();
    const sha = execFileSync('git', ['commit-tree', tree, '-m', message], { env }).toString().trim();
    execFileSync('git', ['update-ref', `refs/heads/${branch}`, sha], { env });
    return sha;
  }

  function refsOf(projectId: number): string {
    return execFileSync('git', ['for-each-ref', '--format=%(refname) %(objectname)'], {
      env: { ...process.env, GIT_DIR: git.repositoryPath(projectId) },
    }).toString();
  }

  beforeAll(async () => {
    t = await startTestApp();
    git = t.app.app.get(GitService);
    alice = await t.createUser({ username: 'alice', name: 'Alice Liddell', projects_limit: 100 });
    bob = await t.createUser({ username: 'bob', name: 'Bob Builder', projects_limit: 100 });
  });
  afterAll(() => t.close());

  // ------------------------------------------------------------------ create

  describe('POST /projects', () => {
    let visCase = 0;
    it('creates a project: 201, path derived from the name, private by default, in the caller namespace', async () => {
      const res = await as(alice, t.http.post(`${API}/projects`))
        .send({ name: 'My Project', description: 'first' })
        .expect(201);
      expect(res.headers['content-type']).toBe('application/json');
      const p = res.body;
      expect(p).toMatchObject({
        name: 'My Project',
        path: 'my-project',
        description: 'first',
        path_with_namespace: 'alice/my-project',
        name_with_namespace: 'Alice Liddell / My Project',
        visibility_level: 0,
        public: false,
        archived: false,
        default_branch: null,
        tag_list: [],
        issues_enabled: true,
        merge_requests_enabled: true,
        wiki_enabled: true,
        builds_enabled: true,
        snippets_enabled: true,
        creator_id: alice.id,
        star_count: 0,
        forks_count: 0,
        ssh_url_to_repo: 'git@gitlab.test:alice/my-project.git',
        http_url_to_repo: `${EXTERNAL_URL}/alice/my-project.git`,
        web_url: `${EXTERNAL_URL}/alice/my-project`,
        owner: { id: alice.id, username: 'alice', name: 'Alice Liddell' },
        namespace: { path: 'alice', kind: 'user', owner_id: alice.id, type: null },
      });
      expect(p.created_at).toMatch(ISO);
      expect(p.owner.created_at).toMatch(ISO);
      expect(typeof p.runners_token).toBe('string');
      expect(p).not.toHaveProperty('permissions');
      expect(p).not.toHaveProperty('forked_from_project');
    });

    it('creates the bare repository on disk, addressed by project id, and DELETE removes it (200 `true`)', async () => {
      const p = await create(alice, { name: 'On Disk' });
      expect(existsSync(join(t.config.dataDir, 'repositories'))).toBe(true);
      const path = git.repositoryPath(p.id);
      expect(path.startsWith(join(t.config.dataDir, 'repositories', '@hashed'))).toBe(true);
      expect(existsSync(join(path, 'HEAD'))).toBe(true);
      expect(statSync(join(path, 'objects')).isDirectory()).toBe(true);
      expect(git.exists(p.id)).toBe(true);

      const del = await as(alice, t.http.delete(`${API}/projects/${p.id}`)).expect(200);
      expect(del.headers['content-type']).toBe('application/json');
      expect(del.body).toBe(true);
      expect(existsSync(path)).toBe(false);
      await as(alice, t.http.get(`${API}/projects/${p.id}`)).expect(404);
      // the name is free again
      const again = await create(alice, { name: 'On Disk' });
      expect(again.id).not.toBe(p.id);
      expect(git.exists(again.id)).toBe(true);
    });

    it('only a path: the name is the path', async () => {
      const p = await create(alice, { path: 'only-path' });
      expect(p).toMatchObject({ name: 'only-path', path: 'only-path' });
    });

    it('parameterizes names with punctuation and accents', async () => {
      const p = await create(alice, { name: 'Café  Déjà vu_2.0' });
      expect(p.path).toBe('cafe-deja-vu_2-0');
    });

    it('no name: 400 `"name" not given`', async () => {
      const res = await as(alice, t.http.post(`${API}/projects`))
        .send({ description: 'x' })
        .expect(400);
      expect(res.body).toEqual({ message: '400 (Bad request) "name" not given' });
    });

    it.each([
      [{ name: '!nope' }, { name: [NAME_MESSAGE] }],
      [{ name: 'ok name', path: 'bad path' }, { path: [PATH_MESSAGE] }],
      [{ name: 'ok name', path: '-dash' }, { path: [PATH_MESSAGE] }],
      [{ name: 'ok name', path: 'repo.git' }, { path: [PATH_MESSAGE] }],
      [
        { name: '!nope', path: 'bad/path' },
        { name: [NAME_MESSAGE], path: [PATH_MESSAGE] },
      ],
      [{ name: 'x'.repeat(256), path: 'long' }, { name: ['is too long (maximum is 255 characters)'] }],
      [{ name: 'vis', visibility_level: 7 }, { visibility_level: ['is not included in the list'] }],
      [{ name: 'flag', issues_enabled: 'maybe' }, { issues_enabled: ['is invalid'] }],
    ])('invalid %j: 400 with a validation map', async (body, message) => {
      const res = await as(alice, t.http.post(`${API}/projects`))
        .send(body)
        .expect(400);
      expect(res.body).toEqual({ message });
    });

    it.each([
      [{ public: true }, 20],
      [{ public: 'true' }, 20],
      [{ public: false }, 0],
      [{ visibility_level: 10 }, 10],
      [{ visibility_level: 20 }, 20],
      [{ visibility_level: 1 }, 10],
      [{ visibility_level: 2 }, 20],
      [{ public: true, visibility_level: 10 }, 10],
      [{ public: true, visibility_level: 0 }, 0],
      [{ public: false, visibility_level: 20 }, 20],
    ])('visibility from %j is %i', async (body, level) => {
      const p = await create(alice, { name: `Visibility Case ${++visCase}`, ...body });
      expect(p.visibility_level).toBe(level);
      expect(p.public).toBe(level === 20);
    });

    it('the default visibility comes from default_project_visibility', async () => {
      await settings({ default_project_visibility: 10 });
      try {
        const p = await create(alice, { name: 'Default Internal' });
        expect(p.visibility_level).toBe(10);
        const explicit = await create(alice, { name: 'Explicit Private', visibility_level: 0 });
        expect(explicit.visibility_level).toBe(0);
      } finally {
        await settings({ default_project_visibility: 0 });
      }
      const p = await create(alice, { name: 'Default Private Again' });
      expect(p.visibility_level).toBe(0);
    });

    it('restricted_visibility_levels applies to non-admins (400) but not to admins', async () => {
      await settings({ restricted_visibility_levels: [20] });
      try {
        for (const body of [{ visibility_level: 20 }, { public: true }]) {
          const res = await as(bob, t.http.post(`${API}/projects`))
            .send({ name: 'Restricted', ...body })
            .expect(400);
          expect(res.body).toEqual({
            message: { visibility_level: ['Public visibility has been restricted by your GitLab administrator'] },
          });
        }
        await as(bob, t.http.get(`${API}/projects/${encodeURIComponent('bob/restricted')}`)).expect(404);
        const internal = await create(bob, { name: 'Not Restricted', visibility_level: 10 });
        expect(internal.visibility_level).toBe(10);
        const admin = await create(t.root.token, { name: 'Admin Public', visibility_level: 20 });
        expect(admin.visibility_level).toBe(20);
        // a non-admin owner cannot switch to the restricted level either
        const upd = await as(bob, t.http.put(`${API}/projects/${internal.id}`))
          .send({ visibility_level: 20 })
          .expect(400);
        expect(upd.body.message).toHaveProperty('visibility_level');
      } finally {
        await settings({ restricted_visibility_levels: [] });
      }
      const p = await create(bob, { name: 'Public After Lift', visibility_level: 20 });
      expect(p.visibility_level).toBe(20);
    });

    it('projects_limit reached: 403 with a bare JSON array; group namespaces are exempt', async () => {
      const limited = await t.createUser({ username: 'limited', projects_limit: 1 });
      await create(limited, { name: 'The Only One' });
      const res = await as(limited, t.http.post(`${API}/projects`))
        .send({ name: 'One Too Many' })
        .expect(403);
      expect(res.body).toEqual({ message: '403 Your project limit is 1 projects! Please contact your administrator to increase it' });
      await as(limited, t.http.get(`${API}/projects/${encodeURIComponent('limited/one-too-many')}`)).expect(404);

      const group = await createGroup(limited, 'limited-group');
      const inGroup = await create(limited, { name: 'Group Project', namespace_id: group.id });
      expect(inGroup.namespace).toMatchObject({ id: group.id, kind: 'group' });

      const none = await t.createUser({ username: 'nolimit', projects_limit: 0 });
      const zero = await as(none, t.http.post(`${API}/projects`))
        .send({ name: 'Anything' })
        .expect(403);
      expect(zero.body).toEqual({ message: '403 Your project limit is 0 projects! Please contact your administrator to increase it' });
    });

    it('name or path already taken in the namespace: 409 naming the field (case-insensitively)', async () => {
      await create(bob, { name: 'Taken', path: 'taken-path' });
      const byName = await as(bob, t.http.post(`${API}/projects`))
        .send({ name: 'TAKEN', path: 'other-path' })
        .expect(409);
      expect(byName.body).toEqual({ message: '409 Name has already been taken' });
      const byPath = await as(bob, t.http.post(`${API}/projects`))
        .send({ name: 'Other', path: 'Taken-Path' })
        .expect(409);
      expect(byPath.body).toEqual({ message: '409 Path has already been taken' });
      const both = await as(bob, t.http.post(`${API}/projects`))
        .send({ name: 'Taken', path: 'taken-path' })
        .expect(409);
      expect(both.body).toEqual({ message: '409 Name has already been taken' });
      // another namespace may use them
      const elsewhere = await create(alice, { name: 'Taken', path: 'taken-path' });
      expect(elsewhere.path_with_namespace).toBe('alice/taken-path');
    });

    it.each([1, 2, 3])('concurrent creation of the same path in a user namespace (round %i): one 201, one 409', async (round) => {
      const body = { name: `Race ${round}` };
      const results = await Promise.all([as(bob, t.http.post(`${API}/projects`)).send(body), as(bob, t.http.post(`${API}/projects`)).send(body)]);
      expect(results.map((r) => r.status).sort()).toEqual([201, 409]);
      const loser = results.find((r) => r.status === 409)!;
      expect(loser.body.message).toBe('409 Name has already been taken');
      const rows = await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM projects WHERE lower(path) = $1`, [`race-${round}`]);
      expect(rows[0].n).toBe(1);
      const winner = results.find((r) => r.status === 201)!;
      expect(git.exists(winner.body.id)).toBe(true);
    });

    it('concurrent creation of the same path in a group namespace: one 201, one 409, never 500', async () => {
      const group = await createGroup(bob, 'race-group');
      for (let round = 0; round < 3; round++) {
        const body = { name: `Group Race ${round}`, namespace_id: group.id };
        const results = await Promise.all([as(bob, t.http.post(`${API}/projects`)).send(body), as(bob, t.http.post(`${API}/projects`)).send(body)]);
        expect(results.map((r) => r.status).sort()).toEqual([201, 409]);
      }
      const rows = await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM projects WHERE namespace_id = $1`, [group.id]);
      expect(rows[0].n).toBe(3);
    });

    it('namespace_id: a group where the caller is master → 201; developer or another user → 400', async () => {
      const group = await createGroup(alice, 'ns-group');
      const master = await t.createUser({ username: 'ns-master' });
      const developer = await t.createUser({ username: 'ns-developer' });
      await as(alice, t.http.post(`${API}/groups/${group.id}/members`))
        .send({ user_id: master.id, access_level: 40 })
        .expect(201);
      await as(alice, t.http.post(`${API}/groups/${group.id}/members`))
        .send({ user_id: developer.id, access_level: 30 })
        .expect(201);

      const ok = await as(master, t.http.post(`${API}/projects`))
        .send({ name: 'Master Made', namespace_id: group.id })
        .expect(201);
      expect(ok.body).toMatchObject({
        path_with_namespace: 'ns-group/master-made',
        name_with_namespace: 'ns-group / Master Made',
        creator_id: master.id,
        namespace: { id: group.id, kind: 'group', type: 'Group' },
      });
      expect(ok.body).not.toHaveProperty('owner');
      expect(git.exists(ok.body.id)).toBe(true);

      const invalid = { message: { namespace: ['is not valid'] } };
      const dev = await as(developer, t.http.post(`${API}/projects`))
        .send({ name: 'Dev Made', namespace_id: group.id })
        .expect(400);
      expect(dev.body).toEqual(invalid);
      const stranger = await as(bob, t.http.post(`${API}/projects`))
        .send({ name: 'Bob Made', namespace_id: group.id })
        .expect(400);
      expect(stranger.body).toEqual(invalid);

      const alicesNamespace = (await create(alice, { name: 'Ns Probe' })).namespace.id;
      const other = await as(bob, t.http.post(`${API}/projects`))
        .send({ name: 'Squatter', namespace_id: alicesNamespace })
        .expect(400);
      expect(other.body).toEqual(invalid);
      const unknown = await as(bob, t.http.post(`${API}/projects`))
        .send({ name: 'Nowhere', namespace_id: 999999 })
        .expect(400);
      expect(unknown.body).toEqual(invalid);
      await as(t.root.token, t.http.get(`${API}/projects/${encodeURIComponent('alice/squatter')}`)).expect(404);

      // an administrator may create anywhere
      const admin = await root(t.http.post(`${API}/projects`))
        .send({ name: 'Admin Made', namespace_id: alicesNamespace })
        .expect(201);
      expect(admin.body.path_with_namespace).toBe('alice/admin-made');
    });

    it.each([
      'http://127.0.0.1/repo.git',
      'http://127.0.0.1:8080/repo.git',
      'http://10.1.2.3/repo.git',
      'https://169.254.169.254/latest/meta-data',
      'http://[::1]/repo.git',
      'http://192.168.1.1/repo.git',
      'http://user:secret@localhost/repo.git',
    ])('import_url %s on the local network: 400 import_url, no project', async (url) => {
      const name = `Import ${url.replace(/[^a-z0-9]/gi, ' ')}`.replace(/\s+/g, ' ').trim();
      const res = await as(alice, t.http.post(`${API}/projects`))
        .send({ name, import_url: url })
        .expect(400);
      expect(Object.keys(res.body.message)).toEqual(['import_url']);
      expect(res.body.message.import_url[0]).toMatch(/local network/);
      expect(JSON.stringify(res.body)).not.toContain('secret');
      const rows = await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM projects WHERE name = $1`, [name]);
      expect(rows[0].n).toBe(0);
    });

    it('import_url with a file:// (or other non-http) scheme is refused even when local requests are allowed', async () => {
      const bare = git.repositoryPath((await create(alice, { name: 'Local Source' })).id);
      await settings({ allow_local_requests_from_hooks_and_services: true });
      try {
        for (const url of [`file://${bare}`, bare, 'ssh://git@example.com/x.git', 'git://example.com/x.git', 'ftp://example.com/x']) {
          const res = await as(alice, t.http.post(`${API}/projects`))
            .send({ name: 'From File', import_url: url })
            .expect(400);
          expect(Object.keys(res.body.message)).toEqual(['import_url']);
        }
      } finally {
        await settings({ allow_local_requests_from_hooks_and_services: false });
      }
      await as(alice, t.http.get(`${API}/projects/${encodeURIComponent('alice/from-file')}`)).expect(404);
    });

    it('unauthenticated: 401', async () => {
      const res = await t.http.post(`${API}/projects`).send({ name: 'Anon' }).expect(401);
      expect(res.body).toEqual({ message: '401 Unauthorized' });
    });
  });

  describe('POST /projects/user/:user_id', () => {
    it('an administrator creates a project in the user namespace (201)', async () => {
      const carol = await t.createUser({ username: 'carol', name: 'Carol' });
      const res = await root(t.http.post(`${API}/projects/user/${carol.id}`))
        .send({ name: 'For Carol', visibility_level: 10 })
        .expect(201);
      expect(res.body).toMatchObject({
        name: 'For Carol',
        path: 'for-carol',
        path_with_namespace: 'carol/for-carol',
        visibility_level: 10,
        owner: { id: carol.id },
        namespace: { kind: 'user', owner_id: carol.id },
      });
      expect(git.exists(res.body.id)).toBe(true);
      // carol owns it: she may rename it and it is in her lists
      await as(carol, t.http.put(`${API}/projects/${res.body.id}`))
        .send({ name: 'Carols Own' })
        .expect(200);
      const owned = await as(carol, t.http.get(`${API}/projects/owned`)).expect(200);
      expect(owned.body.map((p: Json) => p.id)).toContain(res.body.id);
      // path and namespace_id are not taken from the request
      const forced = await root(t.http.post(`${API}/projects/user/${carol.id}`))
        .send({ name: 'Second One', path: 'sneaky', namespace_id: 1 })
        .expect(201);
      expect(forced.body.path_with_namespace).toBe('carol/second-one');
    });

    it('a non-administrator gets 403; an unknown user 404; no name 400', async () => {
      const res = await as(alice, t.http.post(`${API}/projects/user/${bob.id}`))
        .send({ name: 'Nope' })
        .expect(403);
      expect(res.body).toEqual({ message: '403 Forbidden' });
      const unknown = await root(t.http.post(`${API}/projects/user/999999`))
        .send({ name: 'Ghost' })
        .expect(404);
      expect(unknown.body).toEqual({ message: '404 User Not Found' });
      const noName = await root(t.http.post(`${API}/projects/user/${bob.id}`))
        .send({})
        .expect(400);
      expect(JSON.stringify(noName.body.message)).toContain('name');
    });
  });

  // ------------------------------------------------------------------ read

  describe('GET /projects/:id', () => {
    let p: Json;
    beforeAll(async () => {
      p = await create(alice, { name: 'Addressable', visibility_level: 10 });
    });

    it('by id, with permissions', async () => {
      const res = await as(alice, t.http.get(`${API}/projects/${p.id}`)).expect(200);
      await expectSchema(res, 'Project');
      expect(res.body).toMatchObject({ id: p.id, permissions: { project_access: { access_level: 40 }, group_access: null } });
      expect(res.body.runners_token).toBe(p.runners_token);
    });

    it.each(['alice%2Faddressable', 'ALICE%2FAddressable', 'alice%2fADDRESSABLE'])('by %s', async (ref) => {
      const res = await as(bob, t.http.get(`${API}/projects/${ref}`)).expect(200);
      expect(res.body.id).toBe(p.id);
      expect(res.body).not.toHaveProperty('runners_token');
    });

    it.each(['alice%2Fmissing', 'nobody%2Faddressable', 'addressable', '0', '99999999', '-1'])('unknown %s: 404 Project Not Found', async (ref) => {
      const res = await as(alice, t.http.get(`${API}/projects/${ref}`)).expect(404);
      expect(res.body).toEqual({ message: '404 Project Not Found' });
    });
  });

  // ------------------------------------------------------------------ lists

  describe('lists', () => {
    let lister: TestUser;
    let other: TestUser;
    const made: Record<string, Json> = {};

    beforeAll(async () => {
      lister = await t.createUser({ username: 'lister', name: 'Lister Person' });
      other = await t.createUser({ username: 'other', name: 'Other Person' });
      made.zeta = await create(lister, { name: 'Zeta', description: 'last letter', visibility_level: 0 });
      made.alpha = await create(lister, { name: 'Alpha', path: 'first-one', visibility_level: 20 });
      made.mid = await create(lister, { name: 'Middle', description: 'has a Needle inside', visibility_level: 10 });
      made.old = await create(lister, { name: 'Old Stuff', visibility_level: 0 });
      await as(lister, t.http.post(`${API}/projects/${made.old.id}/archive`)).expect(201);
      made.shared = await create(other, { name: 'Shared With Lister', visibility_level: 0 });
      await as(other, t.http.post(`${API}/projects/${made.shared.id}/members`))
        .send({ user_id: lister.id, access_level: 30 })
        .expect(201);
      made.foreignPublic = await create(other, { name: 'Foreign Public', visibility_level: 20 });
      made.foreignPrivate = await create(other, { name: 'Foreign Private', visibility_level: 0 });
    });

    const ids = (res: { body: Json[] }) => res.body.map((p) => p.id);

    it('GET /projects: own and member projects, newest first, not other public projects', async () => {
      const res = await as(lister, t.http.get(`${API}/projects`)).expect(200);
      await expectSchema(res, 'Project[]');
      expect(ids(res)).toEqual([made.shared.id, made.old.id, made.mid.id, made.alpha.id, made.zeta.id]);
      for (const p of res.body) {
        expect(p.permissions).toBeDefined();
        // runners_token in lists too, to those who may administer the project: not to a developer
        if (p.id === made.shared.id) expect(p).not.toHaveProperty('runners_token');
        else expect([p.id, typeof p.runners_token]).toEqual([p.id, 'string']);
      }
      const shared = res.body.find((p: Json) => p.id === made.shared.id);
      expect(shared.permissions.project_access.access_level).toBe(30);
    });

    it('archived=true / archived=false', async () => {
      const archived = await as(lister, t.http.get(`${API}/projects?archived=true`)).expect(200);
      expect(ids(archived)).toEqual([made.old.id]);
      expect(archived.body[0].archived).toBe(true);
      const live = await as(lister, t.http.get(`${API}/projects?archived=false`)).expect(200);
      expect(ids(live)).toEqual([made.shared.id, made.mid.id, made.alpha.id, made.zeta.id]);
    });

    it.each([
      ['public', ['alpha']],
      ['internal', ['mid']],
      ['private', ['shared', 'old', 'zeta']],
    ])('visibility=%s', async (vis, keys) => {
      const res = await as(lister, t.http.get(`${API}/projects?visibility=${vis}`)).expect(200);
      expect(ids(res)).toEqual(keys.map((k) => made[k].id));
    });

    it.each([
      ['order_by=name&sort=asc', ['alpha', 'mid', 'old', 'shared', 'zeta']],
      ['order_by=name&sort=desc', ['zeta', 'shared', 'old', 'mid', 'alpha']],
      ['order_by=path&sort=asc', ['alpha', 'mid', 'old', 'shared', 'zeta']],
      ['order_by=id&sort=asc', ['zeta', 'alpha', 'mid', 'old', 'shared']],
      ['order_by=created_at', ['shared', 'old', 'mid', 'alpha', 'zeta']],
      ['sort=asc', ['zeta', 'alpha', 'mid', 'old', 'shared']],
      ['order_by=last_activity_at&sort=asc', ['zeta', 'alpha', 'mid', 'old', 'shared']],
    ])('%s', async (query, keys) => {
      const res = await as(lister, t.http.get(`${API}/projects?${query}`)).expect(200);
      expect(ids(res)).toEqual(keys.map((k) => made[k].id));
    });

    it.each([
      ['alp', ['alpha']],
      ['FIRST-ONE', ['alpha']],
      ['needle', ['mid']],
      ['other', ['shared']],
      ['e', ['shared', 'old', 'mid', 'alpha', 'zeta']],
      ['nothing-matches', []],
      ['%', []],
    ])('search=%s matches name, path, description or namespace name', async (term, keys) => {
      const res = await as(lister, t.http.get(`${API}/projects`).query({ search: term })).expect(200);
      expect(ids(res)).toEqual(keys.map((k) => made[k].id));
    });

    it.each([
      ['order_by=stars', '400 (Bad request) "order_by" is invalid'],
      ['sort=sideways', '400 (Bad request) "sort" is invalid'],
      ['visibility=secret', '400 (Bad request) "visibility" is invalid'],
    ])('%s: 400', async (query, message) => {
      for (const list of ['/projects', '/projects/owned', '/projects/starred']) {
        const res = await as(lister, t.http.get(`${API}${list}?${query}`)).expect(400);
        expect(res.body).toEqual({ message });
      }
      const all = await root(t.http.get(`${API}/projects/all?${query}`)).expect(400);
      expect(all.body).toEqual({ message });
    });

    it('pagination headers and Link (without the private token)', async () => {
      const res = await t.http.get(`${API}/projects?per_page=2&page=2&private_token=${lister.token}&order_by=id&sort=asc`).expect(200);
      expect(ids(res)).toEqual([made.mid.id, made.old.id]);
      expect(res.headers).toMatchObject({
        'x-total': '5',
        'x-total-pages': '3',
        'x-per-page': '2',
        'x-page': '2',
        'x-next-page': '3',
        'x-prev-page': '1',
      });
      const link = res.headers['link'];
      const base = `${EXTERNAL_URL}/api/v3/projects?order_by=id`;
      expect(link).toBe(
        [
          `<${base}&page=1&per_page=2&sort=asc>; rel="prev"`,
          `<${base}&page=3&per_page=2&sort=asc>; rel="next"`,
          `<${base}&page=1&per_page=2&sort=asc>; rel="first"`,
          `<${base}&page=3&per_page=2&sort=asc>; rel="last"`,
        ].join(', '),
      );
      expect(link).not.toContain(lister.token);
      const last = await as(lister, t.http.get(`${API}/projects?per_page=2&page=3&order_by=id&sort=asc`)).expect(200);
      expect(ids(last)).toEqual([made.shared.id]);
      expect(last.headers['x-next-page']).toBe('');
      const beyond = await as(lister, t.http.get(`${API}/projects?per_page=2&page=9`)).expect(200);
      expect(beyond.body).toEqual([]);
    });

    it('GET /projects/owned: only projects in namespaces the caller owns', async () => {
      const res = await as(lister, t.http.get(`${API}/projects/owned`)).expect(200);
      expect(ids(res)).toEqual([made.old.id, made.mid.id, made.alpha.id, made.zeta.id]);
      for (const p of res.body) {
        expect(p.permissions).toBeDefined();
        expect(typeof p.runners_token).toBe('string'); // the owner's
      }
      const otherOwned = await as(other, t.http.get(`${API}/projects/owned`)).expect(200);
      expect(ids(otherOwned)).toEqual([made.foreignPrivate.id, made.foreignPublic.id, made.shared.id]);
      const filtered = await as(lister, t.http.get(`${API}/projects/owned?visibility=public`)).expect(200);
      expect(ids(filtered)).toEqual([made.alpha.id]);
    });

    it('GET /projects/owned includes projects of groups the caller owns, not of groups it only masters', async () => {
      const owned = await createGroup(lister, 'lister-owned-group');
      const mastered = await createGroup(other, 'lister-mastered-group');
      await as(other, t.http.post(`${API}/groups/${mastered.id}/members`))
        .send({ user_id: lister.id, access_level: 40 })
        .expect(201);
      const a = await create(lister, { name: 'In Owned Group', namespace_id: owned.id });
      const b = await create(lister, { name: 'In Mastered Group', namespace_id: mastered.id });
      const res = await as(lister, t.http.get(`${API}/projects/owned?per_page=100`)).expect(200);
      expect(ids(res)).toContain(a.id);
      expect(ids(res)).not.toContain(b.id);
      const member = await as(lister, t.http.get(`${API}/projects?per_page=100`)).expect(200);
      expect(ids(member)).toEqual(expect.arrayContaining([a.id, b.id]));
      // clean up so the other list tests keep their exact contents
      await as(lister, t.http.delete(`${API}/groups/${owned.id}`)).expect(200);
      await as(other, t.http.delete(`${API}/groups/${mastered.id}`)).expect(200);
    });

    it('GET /projects/starred: starred projects the caller can still see, plain Project entities', async () => {
      for (const p of [made.foreignPublic, made.shared, made.alpha]) {
        await as(lister, t.http.post(`${API}/projects/${p.id}/star`)).expect(201);
      }
      const res = await as(lister, t.http.get(`${API}/projects/starred`)).expect(200);
      expect(ids(res)).toEqual([made.foreignPublic.id, made.shared.id, made.alpha.id]);
      for (const p of res.body) {
        expect(p).not.toHaveProperty('permissions');
        // the owner sees the token of its own project only (not of one it develops, not of a foreign one)
        if (p.id === made.alpha.id) expect(typeof p.runners_token).toBe('string');
        else expect(p).not.toHaveProperty('runners_token');
        expect(p.star_count).toBe(1);
      }
      const searched = await as(lister, t.http.get(`${API}/projects/starred?search=foreign`)).expect(200);
      expect(ids(searched)).toEqual([made.foreignPublic.id]);
      // losing access to a private starred project removes it from the list
      await as(other, t.http.delete(`${API}/projects/${made.shared.id}/members/${lister.id}`)).expect(200);
      const after = await as(lister, t.http.get(`${API}/projects/starred`)).expect(200);
      expect(ids(after)).toEqual([made.foreignPublic.id, made.alpha.id]);
      await as(other, t.http.post(`${API}/projects/${made.shared.id}/members`))
        .send({ user_id: lister.id, access_level: 30 })
        .expect(201);
      for (const p of [made.foreignPublic, made.shared, made.alpha]) {
        await as(lister, t.http.delete(`${API}/projects/${p.id}/star`)).expect(200);
      }
      const empty = await as(lister, t.http.get(`${API}/projects/starred`)).expect(200);
      expect(empty.body).toEqual([]);
    });

    it('GET /projects/all: administrators see every project; others 403', async () => {
      const res = await root(t.http.get(`${API}/projects/all?per_page=100`)).expect(200);
      expect(ids(res)).toEqual(expect.arrayContaining(Object.values(made).map((p) => p.id)));
      const total = await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM projects`);
      expect(res.headers['x-total']).toBe(String(total[0].n));
      for (const p of res.body) {
        expect(p.permissions).toBeDefined();
        expect(typeof p.runners_token).toBe('string'); // an administrator's
      }
      const filtered = await root(t.http.get(`${API}/projects/all?search=foreign&order_by=name&sort=asc`)).expect(200);
      expect(ids(filtered)).toEqual([made.foreignPrivate.id, made.foreignPublic.id]);
      const denied = await as(lister, t.http.get(`${API}/projects/all`)).expect(403);
      expect(denied.body).toEqual({ message: '403 Forbidden' });
    });

    it('unauthenticated lists: 401', async () => {
      for (const list of ['/projects', '/projects/owned', '/projects/starred', '/projects/all']) {
        const res = await t.http.get(`${API}${list}`).expect(401);
        expect(res.body).toEqual({ message: '401 Unauthorized' });
      }
    });
  });

  // ------------------------------------------------------------------ query counts

  describe('query counts of the project lists', () => {
    let heavy: TestUser;
    let total: number;

    /** Statements sent by one request (countQueries refreshes the settings cache first). */
    async function cost(url: string, token: string): Promise<{ queries: number; items: number }> {
      let items = 0;
      const queries = await countQueries(t, async () => {
        const res = await t.http.get(url).set('PRIVATE-TOKEN', token).expect(200);
        items = res.body.length;
      });
      return { queries, items };
    }

    beforeAll(async () => {
      heavy = await t.createUser({ username: 'heavy', projects_limit: 200 });
      const source = await t.createUser({ username: 'source', projects_limit: 200 });
      const group = await createGroup(heavy, 'heavy-group');
      const helper = await t.createUser({ username: 'heavy-helper' });
      // enough older projects overall for /projects/all to fill more than one page of 100
      const before = await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM projects`);
      for (let i = 0; before[0].n + i < 65; i++) await create(source, { name: `Filler ${i}`, visibility_level: i % 2 ? 0 : 10 });
      // 30 projects, every kind mixed so that each page holds all of them: personal, group, fork,
      // with extra members and stars
      for (let i = 0; i < 30; i++) {
        let p: Json;
        if (i % 3 === 0) {
          const src = await create(source, { name: `Source ${i}`, visibility_level: 20 });
          p = (await as(heavy, t.http.post(`${API}/projects/fork/${src.id}`)).expect(201)).body;
        } else if (i % 3 === 1) {
          p = await create(heavy, { name: `Group Heavy ${i}`, namespace_id: group.id, visibility_level: 10 });
        } else {
          p = await create(heavy, { name: `Heavy ${i}` });
        }
        await as(heavy, t.http.post(`${API}/projects/${p.id}/members`))
          .send({ user_id: helper.id, access_level: 20 })
          .expect(201);
        await as(heavy, t.http.post(`${API}/projects/${p.id}/star`)).expect(201);
      }
      const rows = await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM projects`);
      total = rows[0].n;
    });

    it.each(['/projects', '/projects/owned', '/projects/starred'])('GET %s: per_page=100 costs what per_page=20 costs', async (list) => {
      const small = await cost(`${API}${list}?per_page=20`, heavy.token);
      const large = await cost(`${API}${list}?per_page=100`, heavy.token);
      expect(small.items).toBe(20);
      expect(large.items).toBe(30);
      expect(large.queries).toBe(small.queries);
      expect(small.queries).toBeLessThanOrEqual(12);
    });

    it('GET /projects/all: per_page=100 costs what per_page=20 costs', async () => {
      expect(total).toBeGreaterThan(100);
      const small = await cost(`${API}/projects/all?per_page=20`, t.root.token);
      const large = await cost(`${API}/projects/all?per_page=100`, t.root.token);
      const page2 = await cost(`${API}/projects/all?per_page=100&page=2`, t.root.token);
      expect(small.items).toBe(20);
      expect(large.items).toBe(100);
      expect(large.queries).toBe(small.queries);
      // the oldest page holds no forks: it may skip the fork-parent lookup, never add queries
      expect(page2.items).toBe(total - 100);
      expect(page2.queries).toBeLessThanOrEqual(small.queries);
      expect(small.queries).toBeLessThanOrEqual(12);
    });

    it('GET /projects/:id/events: per_page=100 costs what per_page=20 costs', async () => {
      const p = (await as(heavy, t.http.get(`${API}/projects?per_page=1`)).expect(200)).body[0];
      const visitor = await t.createUser({ username: 'heavy-visitor' });
      for (let i = 0; i < 13; i++) {
        await as(heavy, t.http.post(`${API}/projects/${p.id}/members`))
          .send({ user_id: visitor.id, access_level: 10 })
          .expect(201);
        await as(heavy, t.http.delete(`${API}/projects/${p.id}/members/${visitor.id}`)).expect(200);
      }
      const small = await cost(`${API}/projects/${p.id}/events?per_page=20`, heavy.token);
      const large = await cost(`${API}/projects/${p.id}/events?per_page=100`, heavy.token);
      expect(small.items).toBe(20);
      expect(large.items).toBeGreaterThan(25);
      // a short last page lets the ORM skip the count query: never more queries for a larger page
      expect(large.queries).toBeLessThanOrEqual(small.queries);
    });
  });

  // ------------------------------------------------------------------ update

  describe('PUT /projects/:id', () => {
    let owner: TestUser;
    let master: TestUser;
    let developer: TestUser;
    let p: Json;

    beforeAll(async () => {
      owner = await t.createUser({ username: 'upd-owner', name: 'Update Owner' });
      master = await t.createUser({ username: 'upd-master' });
      developer = await t.createUser({ username: 'upd-developer' });
      p = await create(owner, { name: 'Updatable', description: 'before' });
      await as(owner, t.http.post(`${API}/projects/${p.id}/members`))
        .send({ user_id: master.id, access_level: 40 })
        .expect(201);
      await as(owner, t.http.post(`${API}/projects/${p.id}/members`))
        .send({ user_id: developer.id, access_level: 30 })
        .expect(201);
      await create(owner, { name: 'Neighbour', path: 'neighbour' });
    });

    it('master updates settings: 200 with the updated project (and runners_token)', async () => {
      const res = await as(master, t.http.put(`${API}/projects/${p.id}`))
        .send({ description: 'after', issues_enabled: false, wiki_enabled: 'false', public_builds: false })
        .expect(200);
      expect(res.body).toMatchObject({ id: p.id, description: 'after', issues_enabled: false, wiki_enabled: false, public_builds: false });
      expect(res.body).not.toHaveProperty('open_issues_count');
      expect(typeof res.body.runners_token).toBe('string');
      const again = await as(owner, t.http.get(`${API}/projects/${p.id}`)).expect(200);
      expect(again.body).toMatchObject({ description: 'after', issues_enabled: false });
      await as(master, t.http.put(`${API}/projects/${p.id}`))
        .send({ issues_enabled: true })
        .expect(200);
    });

    it('resending unchanged name, path and visibility is not a rename (master 200)', async () => {
      const res = await as(master, t.http.put(`${API}/projects/${p.id}`))
        .send({ name: 'Updatable', path: 'updatable', visibility_level: 0, public: false, description: 'resent' })
        .expect(200);
      expect(res.body.description).toBe('resent');
    });

    it('developer: 403; non-member of a private project: 404', async () => {
      const dev = await as(developer, t.http.put(`${API}/projects/${p.id}`))
        .send({ description: 'dev' })
        .expect(403);
      expect(dev.body).toEqual({ message: '403 Forbidden' });
      const stranger = await as(bob, t.http.put(`${API}/projects/${p.id}`))
        .send({ description: 'bob' })
        .expect(404);
      expect(stranger.body).toEqual({ message: '404 Project Not Found' });
    });

    it("renaming needs the owner (master 403, owner 200); the path is a master's to change, as 8.17", async () => {
      const refused = await as(master, t.http.put(`${API}/projects/${p.id}`))
        .send({ name: 'Master Rename' })
        .expect(403);
      expect(refused.body).toEqual({ message: '403 Forbidden' });
      await as(master, t.http.put(`${API}/projects/${p.id}`))
        .send({ name: 'Master Rename', path: 'master-path' })
        .expect(403); // nothing of a refused request is kept
      expect((await as(owner, t.http.get(`${API}/projects/${p.id}`)).expect(200)).body).toMatchObject({ name: 'Updatable', path: 'updatable' });
      const moved = await as(master, t.http.put(`${API}/projects/${p.id}`))
        .send({ path: 'master-path' })
        .expect(200);
      expect(moved.body).toMatchObject({ name: 'Updatable', path: 'master-path', path_with_namespace: 'upd-owner/master-path' });
      await as(master, t.http.get(`${API}/projects/${encodeURIComponent('upd-owner/master-path')}`)).expect(200);
      await as(master, t.http.put(`${API}/projects/${p.id}`))
        .send({ path: 'updatable' })
        .expect(200);
      const res = await as(owner, t.http.put(`${API}/projects/${p.id}`))
        .send({ name: 'Renamed Project' })
        .expect(200);
      expect(res.body).toMatchObject({ name: 'Renamed Project', path: 'updatable', name_with_namespace: 'Update Owner / Renamed Project' });
    });

    it('path change: the project answers at the new path, the repository stays where it is', async () => {
      const before = git.repositoryPath(p.id);
      const res = await as(owner, t.http.put(`${API}/projects/${p.id}`))
        .send({ path: 'moved-path' })
        .expect(200);
      expect(res.body).toMatchObject({
        path: 'moved-path',
        path_with_namespace: 'upd-owner/moved-path',
        http_url_to_repo: `${EXTERNAL_URL}/upd-owner/moved-path.git`,
      });
      await as(owner, t.http.get(`${API}/projects/${encodeURIComponent('upd-owner/moved-path')}`)).expect(200);
      await as(owner, t.http.get(`${API}/projects/${encodeURIComponent('upd-owner/updatable')}`)).expect(404);
      expect(git.repositoryPath(p.id)).toBe(before);
      expect(git.exists(p.id)).toBe(true);
    });

    it('visibility change needs the owner: master 403, owner 200', async () => {
      await as(master, t.http.put(`${API}/projects/${p.id}`))
        .send({ visibility_level: 20 })
        .expect(403);
      await as(master, t.http.put(`${API}/projects/${p.id}`))
        .send({ public: true })
        .expect(403);
      const res = await as(owner, t.http.put(`${API}/projects/${p.id}`))
        .send({ visibility_level: 10 })
        .expect(200);
      expect(res.body.visibility_level).toBe(10);
      const pub = await as(owner, t.http.put(`${API}/projects/${p.id}`))
        .send({ public: true })
        .expect(200);
      expect(pub.body).toMatchObject({ visibility_level: 20, public: true });
      const back = await as(owner, t.http.put(`${API}/projects/${p.id}`))
        .send({ public: false, visibility_level: 0 })
        .expect(200);
      expect(back.body.visibility_level).toBe(0);
    });

    it.each([
      [{ path: '-bad' }, { path: [PATH_MESSAGE] }],
      [{ path: 'x.atom' }, { path: [PATH_MESSAGE] }],
      [{ name: '' }, { name: ["can't be blank"] }],
      [{ name: '?what' }, { name: [NAME_MESSAGE] }],
      [{ visibility_level: 5 }, { visibility_level: ['is not included in the list'] }],
      [{ builds_enabled: 'perhaps' }, { builds_enabled: ['is invalid'] }],
    ])('invalid %j: 400 with a validation map', async (body, message) => {
      const res = await as(owner, t.http.put(`${API}/projects/${p.id}`))
        .send(body)
        .expect(400);
      expect(res.body).toEqual({ message });
    });

    it('name or path taken by another project of the namespace: 409', async () => {
      const byName = await as(owner, t.http.put(`${API}/projects/${p.id}`))
        .send({ name: 'neighbour' })
        .expect(409);
      expect(byName.body).toEqual({ message: '409 Name has already been taken' });
      const byPath = await as(owner, t.http.put(`${API}/projects/${p.id}`))
        .send({ path: 'NEIGHBOUR' })
        .expect(409);
      expect(byPath.body).toEqual({ message: '409 Path has already been taken' });
      const still = await as(owner, t.http.get(`${API}/projects/${p.id}`)).expect(200);
      expect(still.body).toMatchObject({ name: 'Renamed Project', path: 'moved-path' });
    });

    it('default_branch: 400 for a branch that does not exist, 200 (and HEAD moved) for one that does', async () => {
      const missing = await as(master, t.http.put(`${API}/projects/${p.id}`))
        .send({ default_branch: 'nope' })
        .expect(400);
      expect(missing.body).toEqual({ message: { default_branch: ['does not exist'] } });
      const weird = await as(master, t.http.put(`${API}/projects/${p.id}`))
        .send({ default_branch: '--upload-pack=x' })
        .expect(400);
      expect(weird.body.message).toHaveProperty('default_branch');

      commitTo(p.id, 'master');
      commitTo(p.id, 'develop', 'on develop');
      const res = await as(master, t.http.put(`${API}/projects/${p.id}`))
        .send({ default_branch: 'develop' })
        .expect(200);
      expect(res.body.default_branch).toBe('develop');
      const head = execFileSync('git', ['symbolic-ref', 'HEAD'], { env: { ...process.env, GIT_DIR: git.repositoryPath(p.id) } })
        .toString()
        .trim();
      expect(head).toBe('refs/heads/develop');
    });

    it('unknown project: 404', async () => {
      await as(owner, t.http.put(`${API}/projects/999999`))
        .send({ description: 'x' })
        .expect(404);
    });
  });

  // ------------------------------------------------------------------ fork

  describe('POST /projects/fork/:id', () => {
    let source: Json;
    let forker: TestUser;

    beforeAll(async () => {
      forker = await t.createUser({ username: 'forker' });
      source = await create(alice, { name: 'Fork Me', description: 'original', visibility_level: 10 });
      commitTo(source.id, 'master');
    });

    it('201 with forked_from_project; the repository is copied on disk', async () => {
      const res = await as(forker, t.http.post(`${API}/projects/fork/${source.id}`)).expect(201);
      await expectSchema(res, 'Project');
      expect(res.body).toMatchObject({
        name: 'Fork Me',
        path: 'fork-me',
        description: 'original',
        visibility_level: 10,
        path_with_namespace: 'forker/fork-me',
        owner: { id: forker.id },
        forked_from_project: {
          id: source.id,
          name: 'Fork Me',
          path: 'fork-me',
          path_with_namespace: 'alice/fork-me',
          name_with_namespace: 'Alice Liddell / Fork Me',
        },
      });
      expect(typeof res.body.runners_token).toBe('string');
      expect(res.body.runners_token).not.toBe(source.runners_token);
      expect(res.body).not.toHaveProperty('permissions');
      const forkPath = git.repositoryPath(res.body.id);
      expect(forkPath).not.toBe(git.repositoryPath(source.id));
      expect(existsSync(join(forkPath, 'HEAD'))).toBe(true);
      expect(refsOf(res.body.id)).toBe(refsOf(source.id));
      expect(refsOf(res.body.id)).toMatch(/^refs\/heads\/master [0-9a-f]{40}\n$/);

      const shown = await as(forker, t.http.get(`${API}/projects/${res.body.id}`)).expect(200);
      expect(shown.body.forked_from_project.id).toBe(source.id);
      expect(shown.body.permissions.project_access.access_level).toBe(40);
    });

    it('forks_count of the source becomes 1', async () => {
      const res = await as(alice, t.http.get(`${API}/projects/${source.id}`)).expect(200);
      expect(res.body.forks_count).toBe(1);
      const listed = await as(alice, t.http.get(`${API}/projects?search=fork-me`)).expect(200);
      expect(listed.body.find((p: Json) => p.id === source.id).forks_count).toBe(1);
    });

    it('forking twice: 409', async () => {
      const res = await as(forker, t.http.post(`${API}/projects/fork/${source.id}`)).expect(409);
      expect(res.body).toEqual({ message: '409 Name has already been taken' });
      const again = await as(alice, t.http.get(`${API}/projects/${source.id}`)).expect(200);
      expect(again.body.forks_count).toBe(1);
    });

    it('by namespace%2Fpath; a fork of a fork points at its direct parent', async () => {
      const second = await t.createUser({ username: 'forker2' });
      const res = await as(second, t.http.post(`${API}/projects/fork/${encodeURIComponent('forker/fork-me')}`)).expect(201);
      expect(res.body.forked_from_project.path_with_namespace).toBe('forker/fork-me');
      expect(refsOf(res.body.id)).toBe(refsOf(source.id));
    });

    it('a private project of someone else: 404; unknown: 404', async () => {
      const secret = await create(alice, { name: 'Secret Source' });
      const res = await as(forker, t.http.post(`${API}/projects/fork/${secret.id}`)).expect(404);
      expect(res.body).toEqual({ message: '404 Project Not Found' });
      await as(forker, t.http.post(`${API}/projects/fork/999999`)).expect(404);
    });

    it('the fork counts against the project limit', async () => {
      const tight = await t.createUser({ username: 'tight', projects_limit: 0 });
      const res = await as(tight, t.http.post(`${API}/projects/fork/${source.id}`)).expect(403);
      expect(res.body).toEqual({ message: '403 Your project limit is 0 projects! Please contact your administrator to increase it' });
    });

    it('deleting the source keeps the fork, which no longer names a parent', async () => {
      const src = await create(alice, { name: 'Short Lived', visibility_level: 20 });
      const fork = await as(forker, t.http.post(`${API}/projects/fork/${src.id}`)).expect(201);
      await as(alice, t.http.delete(`${API}/projects/${src.id}`)).expect(200);
      const res = await as(forker, t.http.get(`${API}/projects/${fork.body.id}`)).expect(200);
      expect(res.body).not.toHaveProperty('forked_from_project');
      expect(git.exists(fork.body.id)).toBe(true);
    });
  });

  // ------------------------------------------------------------------ archive

  describe('archive and unarchive', () => {
    let owner: TestUser;
    let master: TestUser;
    let p: Json;

    beforeAll(async () => {
      owner = await t.createUser({ username: 'arch-owner' });
      master = await t.createUser({ username: 'arch-master' });
      p = await create(owner, { name: 'Archivable' });
      await as(owner, t.http.post(`${API}/projects/${p.id}/members`))
        .send({ user_id: master.id, access_level: 40 })
        .expect(201);
    });

    it('master: 403 for both', async () => {
      const a = await as(master, t.http.post(`${API}/projects/${p.id}/archive`)).expect(403);
      expect(a.body).toEqual({ message: '403 Forbidden' });
      await as(master, t.http.post(`${API}/projects/${p.id}/unarchive`)).expect(403);
    });

    it('a stranger: 404', async () => {
      const res = await as(bob, t.http.post(`${API}/projects/${p.id}/archive`)).expect(404);
      expect(res.body).toEqual({ message: '404 Project Not Found' });
    });

    it('owner archives (201, idempotent) and unarchives (201, idempotent)', async () => {
      const a = await as(owner, t.http.post(`${API}/projects/${p.id}/archive`)).expect(201);
      expect(a.body).toMatchObject({ id: p.id, archived: true });
      expect(a.body).not.toHaveProperty('permissions');
      const again = await as(owner, t.http.post(`${API}/projects/${p.id}/archive`)).expect(201);
      expect(again.body.archived).toBe(true);
      const listed = await as(owner, t.http.get(`${API}/projects?archived=true`)).expect(200);
      expect(listed.body.map((x: Json) => x.id)).toEqual([p.id]);

      const u = await as(owner, t.http.post(`${API}/projects/${p.id}/unarchive`)).expect(201);
      expect(u.body.archived).toBe(false);
      const u2 = await as(owner, t.http.post(`${API}/projects/${p.id}/unarchive`)).expect(201);
      expect(u2.body.archived).toBe(false);
    });

    it('an administrator may archive', async () => {
      const res = await root(t.http.post(`${API}/projects/${p.id}/archive`)).expect(201);
      expect(res.body.archived).toBe(true);
      await root(t.http.post(`${API}/projects/${p.id}/unarchive`)).expect(201);
    });
  });

  // ------------------------------------------------------------------ delete

  describe('DELETE /projects/:id', () => {
    it('master: 403; stranger: 404; owner: 200 and members, stars and events go with it', async () => {
      const owner = await t.createUser({ username: 'del-owner' });
      const master = await t.createUser({ username: 'del-master' });
      const p = await create(owner, { name: 'Deletable', visibility_level: 20 });
      await as(owner, t.http.post(`${API}/projects/${p.id}/members`))
        .send({ user_id: master.id, access_level: 40 })
        .expect(201);
      await as(master, t.http.post(`${API}/projects/${p.id}/star`)).expect(201);

      const m = await as(master, t.http.delete(`${API}/projects/${p.id}`)).expect(403);
      expect(m.body).toEqual({ message: '403 Forbidden' });
      const secret = await create(owner, { name: 'Hidden Deletable' });
      await as(bob, t.http.delete(`${API}/projects/${secret.id}`)).expect(404);
      expect(git.exists(p.id)).toBe(true);

      await as(owner, t.http.delete(`${API}/projects/${p.id}`)).expect(200);
      expect(git.exists(p.id)).toBe(false);
      for (const table of ['project_members', 'users_star_projects', 'events']) {
        const rows = await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE project_id = $1`, [p.id]);
        expect(rows[0].n).toBe(0);
      }
      const starred = await as(master, t.http.get(`${API}/projects/starred`)).expect(200);
      expect(starred.body).toEqual([]);
      const again = await as(owner, t.http.delete(`${API}/projects/${p.id}`)).expect(404);
      expect(again.body).toEqual({ message: '404 Project Not Found' });
    });

    it('by namespace%2Fpath', async () => {
      const p = await create(bob, { name: 'Delete By Path' });
      await as(bob, t.http.delete(`${API}/projects/${encodeURIComponent('bob/delete-by-path')}`)).expect(200);
      expect(git.exists(p.id)).toBe(false);
    });
  });

  // ------------------------------------------------------------------ events

  describe('GET /projects/:id/events', () => {
    let owner: TestUser;
    let joiner: TestUser;
    let p: Json;

    beforeAll(async () => {
      owner = await t.createUser({ username: 'ev-owner', name: 'Event Owner' });
      joiner = await t.createUser({ username: 'ev-joiner', name: 'Event Joiner' });
      p = await create(owner, { name: 'Eventful' });
    });

    it('a new project has one `created` event by its creator', async () => {
      const res = await as(owner, t.http.get(`${API}/projects/${p.id}/events`)).expect(200);
      await expectSchema(res, 'Event[]');
      expect(res.body).toHaveLength(1);
      const e = res.body[0];
      expect(Object.keys(e)).toEqual([
        'title',
        'project_id',
        'action_name',
        'target_id',
        'target_type',
        'author_id',
        'data',
        'target_title',
        'created_at',
        'author',
        'author_username',
      ]);
      expect(e).toMatchObject({
        title: null,
        project_id: p.id,
        action_name: 'created',
        target_id: null,
        target_type: null,
        author_id: owner.id,
        data: null,
        target_title: null,
        author: { id: owner.id, username: 'ev-owner', name: 'Event Owner', state: 'active' },
        author_username: 'ev-owner',
      });
      expect(e.created_at).toMatch(ISO);
    });

    it('the author is an author object: created_at always, email for administrators only (decision 18)', async () => {
      const mine = (await as(owner, t.http.get(`${API}/projects/${p.id}/events`)).expect(200)).body;
      const created = mine.find((e: Json) => e.action_name === 'created');
      expect(created.author.created_at).toMatch(ISO);
      expect(created.author).not.toHaveProperty('email');
      const admin = (await root(t.http.get(`${API}/projects/${p.id}/events`)).expect(200)).body;
      expect(admin.find((e: Json) => e.action_name === 'created').author).toMatchObject({
        id: owner.id,
        email: owner.email,
        created_at: expect.stringMatching(ISO),
      });
    });

    it('`joined` when a member is added, `left` when removed, newest first', async () => {
      await as(owner, t.http.post(`${API}/projects/${p.id}/members`))
        .send({ user_id: joiner.id, access_level: 30 })
        .expect(201);
      await as(owner, t.http.delete(`${API}/projects/${p.id}/members/${joiner.id}`)).expect(200);
      // removing a non-member records nothing
      await as(owner, t.http.delete(`${API}/projects/${p.id}/members/${joiner.id}`)).expect(200);
      const res = await as(owner, t.http.get(`${API}/projects/${p.id}/events`)).expect(200);
      expect(res.body.map((e: Json) => e.action_name)).toEqual(['left', 'joined', 'created']);
      expect(res.body[0]).toMatchObject({ author_id: joiner.id, author_username: 'ev-joiner', author: { id: joiner.id } });
      expect(res.body[1]).toMatchObject({ author_id: joiner.id, author_username: 'ev-joiner' });
      expect(res.body[2]).toMatchObject({ author_id: owner.id, author_username: 'ev-owner' });
      const times = res.body.map((e: Json) => Date.parse(e.created_at));
      expect([...times].sort((a, b) => b - a)).toEqual(times);
    });

    it('is paginated', async () => {
      const first = await as(owner, t.http.get(`${API}/projects/${p.id}/events?per_page=2`)).expect(200);
      expect(first.body.map((e: Json) => e.action_name)).toEqual(['left', 'joined']);
      expect(first.headers).toMatchObject({ 'x-total': '3', 'x-total-pages': '2', 'x-page': '1', 'x-next-page': '2' });
      expect(first.headers['link']).toContain('rel="next"');
      const second = await as(owner, t.http.get(`${API}/projects/${p.id}/events?per_page=2&page=2`)).expect(200);
      expect(second.body.map((e: Json) => e.action_name)).toEqual(['created']);
      expect(second.headers['x-prev-page']).toBe('1');
    });

    it('by namespace%2Fpath; readers only (stranger 404, public project readable by anyone signed in)', async () => {
      const byPath = await as(owner, t.http.get(`${API}/projects/${encodeURIComponent('ev-owner/eventful')}/events`)).expect(200);
      expect(byPath.body).toHaveLength(3);
      const hidden = await as(bob, t.http.get(`${API}/projects/${p.id}/events`)).expect(404);
      expect(hidden.body).toEqual({ message: '404 Project Not Found' });
      await t.http.get(`${API}/projects/${p.id}/events`).expect(401);
      await as(owner, t.http.put(`${API}/projects/${p.id}`))
        .send({ visibility_level: 20 })
        .expect(200);
      const open = await as(bob, t.http.get(`${API}/projects/${p.id}/events`)).expect(200);
      expect(open.body).toHaveLength(3);
    });

    it('a comment gives `commented on` with the note; opening an issue gives `opened`', async () => {
      const c = await create(owner, { name: 'Commented' });
      const issue = await as(owner, t.http.post(`${API}/projects/${c.id}/issues`))
        .send({ title: 'Broken build' })
        .expect(201);
      await as(owner, t.http.post(`${API}/projects/${c.id}/issues/${issue.body.id}/notes`))
        .send({ body: 'Looking into it' })
        .expect(201);
      const res = await as(owner, t.http.get(`${API}/projects/${c.id}/events`)).expect(200);
      const [comment, opened] = res.body;
      expect(comment).toMatchObject({
        action_name: 'commented on',
        target_type: 'Note',
        target_title: 'Broken build',
        note: { body: 'Looking into it', noteable_type: 'Issue', noteable_id: issue.body.id, author: { id: owner.id } },
      });
      expect(Object.keys(comment).indexOf('note')).toBe(Object.keys(comment).indexOf('created_at') + 1);
      expect(opened).toMatchObject({ action_name: 'opened', target_type: 'Issue', target_id: issue.body.id, target_title: 'Broken build' });
      expect(opened).not.toHaveProperty('note');
    });

    it('a fork starts with its own `created` event', async () => {
      const fork = await as(bob, t.http.post(`${API}/projects/fork/${p.id}`)).expect(201);
      const res = await as(bob, t.http.get(`${API}/projects/${fork.body.id}/events`)).expect(200);
      expect(res.body.map((e: Json) => [e.action_name, e.author_id])).toEqual([['created', bob.id]]);
    });
  });

  // ------------------------------------------------------------------ resolver

  describe('ProjectResolver.resolve', () => {
    it("loads the project and the caller's access in one SQL statement (by id or path; direct, group or no membership)", async () => {
      const resolver = t.app.app.get(ProjectResolver);
      const users = t.app.app.get(UsersRepository);
      const owner = await t.createUser({ username: 'rs-owner' });
      const member = await t.createUser({ username: 'rs-member' });
      const group = await createGroup(owner, 'rs-group');
      await as(owner, t.http.post(`${API}/groups/${group.id}/members`))
        .send({ user_id: member.id, access_level: 30 })
        .expect(201);
      const p = await create(owner, { name: 'resolved', namespace_id: group.id });
      const own = await create(owner, { name: 'own-resolved', visibility_level: 20 });
      const [ownerRow, memberRow, bobRow] = await Promise.all([owner, member, bob].map((u) => users.byId(u.id)));
      const cases: [typeof ownerRow, ProjectRef, number][] = [
        [ownerRow, { id: p.id }, 50],
        [memberRow, parseProjectRef('rs-group/resolved'), 30],
        [ownerRow, { id: own.id }, 50],
        [bobRow, parseProjectRef(`rs-owner/own-resolved`), 0],
        [undefined as unknown as typeof ownerRow, { id: own.id }, 0],
      ];
      for (const [user, ref, level] of cases) {
        let resolved: Awaited<ReturnType<ProjectResolver['resolve']>> | undefined;
        const queries = await countQueries(t, async () => {
          resolved = await resolver.resolve(user ?? undefined, ref);
        });
        expect(queries).toBe(1);
        expect(resolved?.access.level).toBe(level);
      }
      const viaGroup = await resolver.resolve(memberRow ?? undefined, { id: p.id }, 'push_code');
      expect(viaGroup.access).toMatchObject({ groupMember: { accessLevel: 30 }, projectMember: null, namespaceOwner: false });
      await expect(resolver.resolve(bobRow ?? undefined, { id: p.id })).rejects.toMatchObject({ status: 404 });
      await expect(resolver.resolve(memberRow ?? undefined, { id: p.id }, 'remove_project')).rejects.toMatchObject({ status: 403 });
    });

    it('GET /projects/:id costs fewer queries than before the single-statement resolver', async () => {
      const p = await create(alice, { name: 'counted' });
      const queries = await countQueries(t, () => as(alice, t.http.get(`${API}/projects/${p.id}`)).expect(200));
      // auth (1) + resolver (1) + owner, fork counts, open issues (3); no separate membership query
      expect(queries).toBeLessThanOrEqual(5);
    });
  });

  // ------------------------------------------------------------------ concurrency

  describe('concurrent requests never answer 500', () => {
    let racer: TestUser;
    let src: Json;

    beforeAll(async () => {
      racer = await t.createUser({ username: 'racer', projects_limit: 50 });
      src = await create(alice, { name: 'Race Source', visibility_level: 20 });
    });

    it('the same fork twice at once: one 201, one 409', async () => {
      const results = await Promise.all([as(racer, t.http.post(`${API}/projects/fork/${src.id}`)), as(racer, t.http.post(`${API}/projects/fork/${src.id}`))]);
      expect(results.map((r) => r.status).sort()).toEqual([201, 409]);
      const shown = await as(alice, t.http.get(`${API}/projects/${src.id}`)).expect(200);
      expect(shown.body.forks_count).toBe(1);
    });

    it('the last free project slot taken twice at once: one 201, one 403', async () => {
      const tight = await t.createUser({ username: 'tight-race', projects_limit: 1 });
      const results = await Promise.all([
        as(tight, t.http.post(`${API}/projects`)).send({ name: 'Slot A' }),
        as(tight, t.http.post(`${API}/projects`)).send({ name: 'Slot B' }),
      ]);
      expect(results.map((r) => r.status).sort()).toEqual([201, 403]);
      const owned = await as(tight, t.http.get(`${API}/projects/owned`)).expect(200);
      expect(owned.body).toHaveLength(1);
    });

    it('starring twice at once: one 201, one 304, star_count 1', async () => {
      const results = await Promise.all([as(racer, t.http.post(`${API}/projects/${src.id}/star`)), as(racer, t.http.post(`${API}/projects/${src.id}/star`))]);
      expect(results.map((r) => r.status).sort()).toEqual([201, 304]);
      const shown = await as(alice, t.http.get(`${API}/projects/${src.id}`)).expect(200);
      expect(shown.body.star_count).toBe(1);
      const unstar = await Promise.all([
        as(racer, t.http.delete(`${API}/projects/${src.id}/star`)),
        as(racer, t.http.delete(`${API}/projects/${src.id}/star`)),
      ]);
      expect(unstar.map((r) => r.status).sort()).toEqual([200, 304]);
      const after = await as(alice, t.http.get(`${API}/projects/${src.id}`)).expect(200);
      expect(after.body.star_count).toBe(0);
    });

    it('adding the same member twice at once: both 201 with the one member (8.17 answers a project member added again with it)', async () => {
      for (let round = 0; round < 3; round++) {
        const p = await create(racer, { name: `Member Race ${round}` });
        const results = await Promise.all([
          as(racer, t.http.post(`${API}/projects/${p.id}/members`)).send({ user_id: bob.id, access_level: 20 }),
          as(racer, t.http.post(`${API}/projects/${p.id}/members`)).send({ user_id: bob.id, access_level: 30 }),
        ]);
        expect(results.map((r) => r.status)).toEqual([201, 201]);
        const rows = await t.sql<{ access_level: number }>(`SELECT access_level FROM project_members WHERE project_id = $1 AND user_id = $2`, [p.id, bob.id]);
        expect(rows).toHaveLength(1);
        expect(results.map((r) => r.body.access_level)).toEqual([rows[0].access_level, rows[0].access_level]);
      }
    });

    it('two projects renamed to the same name at once: one 200, one 409', async () => {
      const a = await create(racer, { name: 'Rename A' });
      const b = await create(racer, { name: 'Rename B' });
      const results = await Promise.all([
        as(racer, t.http.put(`${API}/projects/${a.id}`)).send({ name: 'Same Name', path: 'same-path' }),
        as(racer, t.http.put(`${API}/projects/${b.id}`)).send({ name: 'Same Name', path: 'same-path' }),
      ]);
      expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
      const rows = await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM projects WHERE lower(path) = 'same-path'`);
      expect(rows[0].n).toBe(1);
    });
  });

  // ------------------------------------------------------------------ disk invariant

  it('every project has its repository on disk and no repository is left without a project', async () => {
    const rows = await t.sql<{ id: number }>(`SELECT id FROM projects`);
    for (const r of rows) expect(git.exists(r.id)).toBe(true);
    const expected = new Set(rows.map((r) => git.repositoryPath(r.id)));
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
    expect(found.length).toBe(rows.length);
  });
});
