import request from 'supertest';
import type TestAgent from 'supertest/lib/agent';
import { App, createApp } from '../src/app.factory';
import { startTestApp, TestApp } from './helpers/test-app';

/**
 * Two app instances on one PostgreSQL database and one DATA_DIR, driven alternately: they must
 * answer as one server would. Needs real PostgreSQL (the embedded default is one process).
 */
const pg = !!process.env.DATABASE_URL;
(pg ? describe : describe.skip)('two instances on one database (PostgreSQL only)', () => {
  let a: TestApp;
  let bApp: App;
  let b: TestAgent;
  let project: number;

  beforeAll(async () => {
    a = await startTestApp();
    bApp = await createApp(a.config);
    b = request(bApp.app.getHttpServer());
    const res = await a.http.post('/api/v3/projects').set('PRIVATE-TOKEN', a.root.token).send({ name: 'shared' }).expect(201);
    project = res.body.id;
  });
  afterAll(async () => {
    await bApp.close();
    await a.close();
  });
  const via = (i: number) => (i % 2 === 0 ? a.http : b);

  it('50 concurrent issue creates split over both get 50 distinct iids', async () => {
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        via(i).post(`/api/v3/projects/${project}/issues`).set('PRIVATE-TOKEN', a.root.token).send({ title: `issue ${i}` }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(Array(50).fill(201));
    const iids = results.map((r) => r.body.iid as number).sort((x, y) => x - y);
    expect(iids).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
  });

  it('a commit made through A is seen through B at once (tree, commits, branches)', async () => {
    for (let i = 0; i < 3; i++) {
      const commit = await a.http
        .post(`/api/v3/projects/${project}/repository/files`)
        .set('PRIVATE-TOKEN', a.root.token)
        .send({ file_path: `f${i}.txt`, branch_name: 'master', content: `${i}\n`, commit_message: `add f${i}` })
        .expect(201);
      expect(commit.body.file_path).toBe(`f${i}.txt`);
      const tree = await b.get(`/api/v3/projects/${project}/repository/tree`).set('PRIVATE-TOKEN', a.root.token).expect(200);
      expect(tree.body.map((e: { name: string }) => e.name)).toContain(`f${i}.txt`);
      const commits = await b.get(`/api/v3/projects/${project}/repository/commits`).set('PRIVATE-TOKEN', a.root.token).expect(200);
      expect(commits.body[0].title).toBe(`add f${i}`);
      expect(commits.body).toHaveLength(i + 1);
      const branch = await b.get(`/api/v3/projects/${project}/repository/branches/master`).set('PRIVATE-TOKEN', a.root.token).expect(200);
      expect(branch.body.commit.id).toBe(commits.body[0].id);
    }
  });

  it('20 concurrent files-API commits to different files on one branch, split over A and B: all land, fsck clean', async () => {
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        via(i)
          .post(`/api/v3/projects/${project}/repository/files`)
          .set('PRIVATE-TOKEN', a.root.token)
          .send({ file_path: `many/file-${i}.txt`, branch_name: 'master', content: `${i}\n`, commit_message: `many ${i}` }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(Array(20).fill(201));
    const tree = await b.get(`/api/v3/projects/${project}/repository/tree?path=many`).set('PRIVATE-TOKEN', a.root.token).expect(200);
    expect(tree.body.map((e: { name: string }) => e.name).sort()).toEqual(Array.from({ length: 20 }, (_, i) => `file-${i}.txt`).sort());
    const { GitService } = await import('../src/git/git.service');
    const git = bApp.app.get(GitService);
    const fsck = await git.runner.run(['fsck', '--strict', '--no-progress'], { gitDir: git.repositoryPath(project) });
    expect(fsck.exitCode).toBe(0);
    // the same file changed concurrently is still a real conflict: one wins, the other is refused
    const same = await Promise.all(
      [a.http, b].map((http, i) =>
        http
          .put(`/api/v3/projects/${project}/repository/files`)
          .set('PRIVATE-TOKEN', a.root.token)
          .send({ file_path: 'many/file-0.txt', branch_name: 'master', content: `changed by ${i}\n`, commit_message: `change ${i}` }),
      ),
    );
    expect(same.map((r) => r.status).sort()).toEqual([200, 400]);
  }, 180_000);

  it('wrong passwords split over both instances count towards one throttle', async () => {
    const user = await a.createUser();
    for (let i = 0; i < 10; i++) {
      await via(i).post('/api/v3/session').send({ login: user.username, password: 'wrong-password' }).expect(401);
    }
    for (const http of [a.http, b]) {
      const res = await http.post('/api/v3/session').send({ login: user.username, password: user.password }).expect(429);
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    }
  });

  it('a settings change made through A takes effect on B within 1 s', async () => {
    const before = await b.get('/api/v3/application/settings').set('PRIVATE-TOKEN', a.root.token).expect(200);
    const next = before.body.default_projects_limit + 7;
    await a.http.put('/api/v3/application/settings').set('PRIVATE-TOKEN', a.root.token).send({ default_projects_limit: next }).expect(200);
    const started = Date.now();
    let seen: number | undefined;
    while (Date.now() - started < 1000) {
      const res = await b.get('/api/v3/application/settings').set('PRIVATE-TOKEN', a.root.token).expect(200);
      seen = res.body.default_projects_limit;
      if (seen === next) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(seen).toBe(next);
    // and it is applied, not only shown: a user created through B gets the new default limit
    const u = await b
      .post('/api/v3/users')
      .set('PRIVATE-TOKEN', a.root.token)
      .send({ username: 'limit-check', email: 'limit@example.com', name: 'L', password: 'password-123' })
      .expect(201);
    expect(u.body.projects_limit).toBe(next);
  });
});
