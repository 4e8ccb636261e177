import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GitCli } from './helpers/git-cli';
import { startTestApp, TestApp } from './helpers/test-app';

const API = '/api/v3';

/** `import_url`: a real clone through the git module, refused for the local network unless allowed. */
describe('project import', () => {
  let t: TestApp;
  let git: GitCli;
  let home: string;
  const root = (r: ReturnType<TestApp['http']['get']>) => r.set('PRIVATE-TOKEN', t.root.token);

  beforeAll(async () => {
    t = await startTestApp();
    home = mkdtempSync(join(tmpdir(), 'glv3-import-'));
    git = await GitCli.listen(t, home);
    // a public source project with two commits and a tag
    const src = await root(t.http.post(`${API}/projects`))
      .send({ name: 'upstream', visibility_level: 20 })
      .expect(201);
    const work = join(home, 'work');
    await git.ok(['init', '-q', work]);
    await git.commit(work, { 'README.md': '# upstream\n' }, 'first');
    await git.commit(work, { 'lib/a.txt': 'a\n' }, 'second');
    await git.ok(['tag', 'v1'], work);
    await git.ok(['push', '-q', git.url(src.body.path_with_namespace, 'root', t.root.token), 'master', 'v1'], work);
  });
  afterAll(async () => {
    await t.close();
    rmSync(home, { recursive: true, force: true });
  });

  async function waitForImport(id: number): Promise<Record<string, unknown>> {
    for (let i = 0; i < 100; i++) {
      const p = await root(t.http.get(`${API}/projects/${id}`)).expect(200);
      if (p.body.import_status === 'finished' || p.body.import_status === 'failed') return p.body;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error('import did not finish');
  }

  it('refuses a loopback URL while the local network is not allowed, and stores nothing', async () => {
    const res = await root(t.http.post(`${API}/projects`))
      .send({ name: 'refused', import_url: `http://127.0.0.1:${git.port}/root/upstream.git` })
      .expect(400);
    expect(res.body.message.import_url[0]).toMatch(/local network/);
    const rows = await t.sql(`SELECT id FROM projects WHERE path = 'refused'`);
    expect(rows).toHaveLength(0);
  });

  it('refuses IPv4-compatible and IPv4-mapped IPv6 forms of local addresses (::/96, ::ffff:0:0/96), storing nothing', async () => {
    for (const [i, url] of [
      `http://[::127.0.0.1]:${git.port}/root/upstream.git`,
      `http://[::7f00:1]:${git.port}/root/upstream.git`,
      `http://[::a9fe:a9fe]/latest/meta-data/`,
      `http://[::ffff:127.0.0.1]:${git.port}/root/upstream.git`,
      `http://[::ffff:a9fe:a9fe]/latest/meta-data/`,
    ].entries()) {
      const res = await root(t.http.post(`${API}/projects`))
        .send({ name: `refused-v6-${i}`, import_url: url })
        .expect(400);
      expect(res.body.message.import_url[0]).toMatch(/local network/);
    }
    const rows = await t.sql(`SELECT id FROM projects WHERE path LIKE 'refused-v6-%'`);
    expect(rows).toHaveLength(0);
  });

  it('with the local network allowed, clones branches and tags, sets the default branch, hides credentials', async () => {
    await root(t.http.put(`${API}/application/settings`))
      .send({ allow_local_requests_from_hooks_and_services: true })
      .expect(200);
    try {
      const res = await root(t.http.post(`${API}/projects`))
        .send({ name: 'imported', import_url: `http://root:${t.root.token}@127.0.0.1:${git.port}/root/upstream.git` })
        .expect(201);
      expect(JSON.stringify(res.body)).not.toContain(t.root.token);
      const done = await waitForImport(res.body.id);
      expect(done).toMatchObject({ import_status: 'finished', default_branch: 'master' });
      const stored = await t.sql<{ import_url: string }>(`SELECT import_url FROM projects WHERE id = $1`, [res.body.id]);
      expect(stored[0].import_url).toBe(`http://127.0.0.1:${git.port}/root/upstream.git`);
      const commits = await root(t.http.get(`${API}/projects/${res.body.id}/repository/commits`)).expect(200);
      expect(commits.body.map((c: { title: string }) => c.title)).toEqual(['second', 'first']);
      const tags = await root(t.http.get(`${API}/projects/${res.body.id}/repository/tags`)).expect(200);
      expect(tags.body.map((x: { name: string }) => x.name)).toEqual(['v1']);
      const events = await root(t.http.get(`${API}/projects/${res.body.id}/events`)).expect(200);
      expect(events.body[events.body.length - 1].action_name).toBe('imported');
    } finally {
      await root(t.http.put(`${API}/application/settings`))
        .send({ allow_local_requests_from_hooks_and_services: false })
        .expect(200);
    }
  });

  it('a source that does not answer ends as a failed import with an empty repository', async () => {
    await root(t.http.put(`${API}/application/settings`))
      .send({ allow_local_requests_from_hooks_and_services: true })
      .expect(200);
    try {
      const res = await root(t.http.post(`${API}/projects`))
        .send({ name: 'broken', import_url: `http://127.0.0.1:${git.port}/root/does-not-exist.git` })
        .expect(201);
      const done = await waitForImport(res.body.id);
      expect(done).toMatchObject({ import_status: 'failed', default_branch: null });
      await root(t.http.get(`${API}/projects/${res.body.id}/repository/branches`)).expect(200, []);
    } finally {
      await root(t.http.put(`${API}/application/settings`))
        .send({ allow_local_requests_from_hooks_and_services: false })
        .expect(200);
    }
  });
});
