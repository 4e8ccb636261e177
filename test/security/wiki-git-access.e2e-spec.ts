import type { Test } from 'supertest';
import { startTestApp, TestApp, TestUser } from '../helpers/test-app';

const API = '/api/v3';
const WRITE_WIKI = "403 You are not allowed to write to this project's wiki.";
const DOWNLOAD = '403 You are not allowed to download code from this project.';

type Role = 'master' | 'developer' | 'reporter' | 'guest' | 'non-member' | 'external' | 'anonymous';
type Visibility = 'private' | 'internal' | 'public';
/** The answer to the wiki's ref advertisement: the HTTP status and, for a 403, GitLab's words. */
type Answer = 200 | 401 | 404 | string;

/**
 * The access matrix of a project's wiki over git (issue 39 item 4), as GitLab 8.17's GitAccessWiki and
 * project policy: each role × visibility × fetch (`download_wiki_code`: whoever may download the
 * project's code) and push (`create_wiki`: developers and above). Asked as git asks first, the ref
 * advertisement of smart HTTP (`info/refs?service=…`), where the transport authorises.
 */
describe('wiki git access matrix', () => {
  let t: TestApp;
  const users = {} as Record<Exclude<Role, 'anonymous'>, TestUser>;
  const projects = {} as Record<Visibility, { id: number; path_with_namespace: string }>;

  const as = (u: TestUser, req: Test) => req.set('PRIVATE-TOKEN', u.token);
  const basic = (u: TestUser) => `Basic ${Buffer.from(`${u.username}:${u.token}`).toString('base64')}`;

  async function ask(role: Role, path: string, service: 'git-upload-pack' | 'git-receive-pack'): Promise<Answer> {
    let req = t.http.get(`/${path}.wiki.git/info/refs?service=${service}`);
    if (role !== 'anonymous') req = req.set('Authorization', basic(users[role]));
    const res = await req;
    if (res.status === 403) return res.body.message as string;
    return res.status as Answer;
  }

  // 8.17: private projects are read by reporters and above (guests see the project, not its code);
  // internal ones by every signed-in user who is not external; public ones by anyone
  const FETCH: Record<Visibility, Record<Role, Answer>> = {
    private: { master: 200, developer: 200, reporter: 200, guest: DOWNLOAD, 'non-member': 404, external: 404, anonymous: 401 },
    internal: { master: 200, developer: 200, reporter: 200, guest: 200, 'non-member': 200, external: 404, anonymous: 401 },
    public: { master: 200, developer: 200, reporter: 200, guest: 200, 'non-member': 200, external: 200, anonymous: 200 },
  };
  const PUSH: Record<Visibility, Record<Role, Answer>> = {
    private: { master: 200, developer: 200, reporter: WRITE_WIKI, guest: WRITE_WIKI, 'non-member': 404, external: 404, anonymous: 401 },
    internal: { master: 200, developer: 200, reporter: WRITE_WIKI, guest: WRITE_WIKI, 'non-member': WRITE_WIKI, external: 404, anonymous: 401 },
    public: { master: 200, developer: 200, reporter: WRITE_WIKI, guest: WRITE_WIKI, 'non-member': WRITE_WIKI, external: WRITE_WIKI, anonymous: 401 },
  };

  beforeAll(async () => {
    t = await startTestApp({ GIT_AUTH_BAN_IP_WHITELIST: '127.0.0.1,::1,::ffff:127.0.0.1' });
    users.master = await t.createUser({ username: 'owner', name: 'Owner', projects_limit: 10 });
    users.developer = await t.createUser({ username: 'dev', name: 'Dev' });
    users.reporter = await t.createUser({ username: 'rep', name: 'Rep' });
    users.guest = await t.createUser({ username: 'guest', name: 'Guest' });
    users['non-member'] = await t.createUser({ username: 'outsider', name: 'Outsider' });
    users.external = await t.createUser({ username: 'ext', name: 'Ext', external: true });
    for (const [visibility, level] of [
      ['private', 0],
      ['internal', 10],
      ['public', 20],
    ] as const) {
      const p = (
        await as(users.master, t.http.post(`${API}/projects`))
          .send({ name: `w-${visibility}`, visibility_level: level })
          .expect(201)
      ).body;
      for (const [role, access] of [
        ['developer', 30],
        ['reporter', 20],
        ['guest', 10],
      ] as const) {
        await as(users.master, t.http.post(`${API}/projects/${p.id}/members`))
          .send({ user_id: users[role].id, access_level: access })
          .expect(201);
      }
      projects[visibility] = p;
    }
  });
  afterAll(() => t.close());

  const cases = (['private', 'internal', 'public'] as const).flatMap((v) =>
    (['master', 'developer', 'reporter', 'guest', 'non-member', 'external', 'anonymous'] as const).map((r) => [v, r] as const),
  );

  it.each(cases)('%s project, %s: fetch and push as 8.17', async (visibility, role) => {
    const path = projects[visibility].path_with_namespace;
    expect([await ask(role, path, 'git-upload-pack'), await ask(role, path, 'git-receive-pack')]).toEqual([FETCH[visibility][role], PUSH[visibility][role]]);
  });

  it('the project repository itself answers reads the same way (the wiki adds no reader)', async () => {
    for (const [visibility, role] of cases) {
      let req = t.http.get(`/${projects[visibility].path_with_namespace}.git/info/refs?service=git-upload-pack`);
      if (role !== 'anonymous') req = req.set('Authorization', basic(users[role]));
      const res = await req;
      expect([visibility, role, res.status]).toEqual([visibility, role, typeof FETCH[visibility][role] === 'string' ? 403 : FETCH[visibility][role]]);
    }
  });

  it('a disabled wiki: nobody fetches or pushes it, not even its master', async () => {
    const p = projects.public;
    await as(users.master, t.http.put(`${API}/projects/${p.id}`))
      .send({ wiki_enabled: false })
      .expect(200);
    try {
      for (const role of ['master', 'developer', 'reporter', 'non-member'] as const) {
        expect([role, await ask(role, p.path_with_namespace, 'git-upload-pack'), await ask(role, p.path_with_namespace, 'git-receive-pack')]).toEqual([
          role,
          DOWNLOAD,
          WRITE_WIKI,
        ]);
      }
      expect(await ask('anonymous', p.path_with_namespace, 'git-upload-pack')).toBe(401);
    } finally {
      await as(users.master, t.http.put(`${API}/projects/${p.id}`))
        .send({ wiki_enabled: true })
        .expect(200);
    }
  });
});
