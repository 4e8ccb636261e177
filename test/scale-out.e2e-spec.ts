import request from 'supertest';
import type TestAgent from 'supertest/lib/agent';
import { App, createApp } from '../src/app.factory';
import { QueueService } from '../src/queue/queue.service';
import { ci, Json, waitFor } from './helpers/ci';
import { HookReceiver, sleep } from './helpers/hook-receiver';
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
        via(i)
          .post(`/api/v3/projects/${project}/issues`)
          .set('PRIVATE-TOKEN', a.root.token)
          .send({ title: `issue ${i}` }),
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

  it('a settings change made through A takes effect on B at once (the very next request, 20 changes in a row)', async () => {
    const before = await b.get('/api/v3/application/settings').set('PRIVATE-TOKEN', a.root.token).expect(200);
    let next = before.body.default_projects_limit;
    const stale: string[] = [];
    for (let i = 0; i < 20; i++) {
      next += 1;
      await a.http.put('/api/v3/application/settings').set('PRIVATE-TOKEN', a.root.token).send({ default_projects_limit: next }).expect(200);
      const seen = (await b.get('/api/v3/application/settings').set('PRIVATE-TOKEN', a.root.token).expect(200)).body.default_projects_limit;
      if (seen !== next) stale.push(`change ${i}: B answered ${seen}, not ${next}`);
    }
    expect(stale).toEqual([]);
    // and it is applied, not only shown: a user created through B gets the new default limit
    const u = await b
      .post('/api/v3/users')
      .set('PRIVATE-TOKEN', a.root.token)
      .send({ username: 'limit-check', email: 'limit@example.com', name: 'L', password: 'password-123' })
      .expect(201);
    expect(u.body.projects_limit).toBe(next);
  });

  it('a settings change made through A applies at once on B to a request without a token (sign-in turned off and on, 10 times)', async () => {
    // no authentication on the way (whose cache lookup would sync the notifications anyway): the settings' own copy is checked
    const u = await a.createUser({ username: 'signin-toggle', password: 'password-toggle-1' });
    const signIn = () => b.post('/api/v3/session').send({ login: u.username, password: 'password-toggle-1' });
    const stale: string[] = [];
    try {
      for (let i = 0; i < 10; i++) {
        await a.http.put('/api/v3/application/settings').set('PRIVATE-TOKEN', a.root.token).send({ signin_enabled: false }).expect(200);
        const off = await signIn();
        if (off.status !== 403) stale.push(`off ${i}: ${off.status}`);
        await a.http.put('/api/v3/application/settings').set('PRIVATE-TOKEN', a.root.token).send({ signin_enabled: true }).expect(200);
        const on = await signIn();
        if (on.status !== 201) stale.push(`on ${i}: ${on.status}`);
      }
    } finally {
      await a.http.put('/api/v3/application/settings').set('PRIVATE-TOKEN', a.root.token).send({ signin_enabled: true }).expect(200);
    }
    expect(stale).toEqual([]);
  });

  const api = (http: TestAgent, method: 'get' | 'post' | 'put' | 'delete', path: string) =>
    http[method](`/api/v3/projects/${project}${path}`).set('PRIVATE-TOKEN', a.root.token);

  it('concurrent branch creates and deletes split over A and B lose no update', async () => {
    const names = Array.from({ length: 20 }, (_, i) => `topic-${i}`);
    const created = await Promise.all(names.map((n, i) => api(via(i), 'post', '/repository/branches').send({ branch_name: n, ref: 'master' })));
    expect(created.map((r) => r.status)).toEqual(Array(20).fill(201));
    // delete the even ones while creating ten more, all at once, alternating instances
    const more = Array.from({ length: 10 }, (_, i) => `later-${i}`);
    const mixed = await Promise.all([
      ...names.filter((_, i) => i % 2 === 0).map((n, i) => api(via(i + 1), 'delete', `/repository/branches/${n}`)),
      ...more.map((n, i) => api(via(i), 'post', '/repository/branches').send({ branch_name: n, ref: 'master' })),
    ]);
    expect(mixed.map((r) => r.status)).toEqual([...Array(10).fill(200), ...Array(10).fill(201)]);
    for (const http of [a.http, b]) {
      const list = await api(http, 'get', '/repository/branches').expect(200);
      const got = list.body
        .map((x: { name: string }) => x.name)
        .filter((n: string) => n !== 'master')
        .sort();
      expect(got).toEqual([...names.filter((_, i) => i % 2 === 1), ...more].sort());
    }
    // the same name through both at once: one is created, the other refused
    const same = await Promise.all([a.http, b].map((http) => api(http, 'post', '/repository/branches').send({ branch_name: 'race', ref: 'master' })));
    expect(same.map((r) => r.status).sort()).toEqual([201, 400]);
    // tags likewise
    const tags = await Promise.all(Array.from({ length: 10 }, (_, i) => api(via(i), 'post', '/repository/tags').send({ tag_name: `v${i}`, ref: 'master' })));
    expect(tags.map((r) => r.status)).toEqual(Array(10).fill(201));
    const tagList = await api(b, 'get', '/repository/tags').expect(200);
    expect(tagList.body).toHaveLength(10);
  }, 180_000);

  it('concurrent merges of six merge requests into one branch, split over A and B: all merged, none lost', async () => {
    const mrs: number[] = [];
    for (let i = 0; i < 6; i++) {
      await api(via(i), 'post', '/repository/branches')
        .send({ branch_name: `feature-${i}`, ref: 'master' })
        .expect(201);
      await api(via(i + 1), 'post', '/repository/files')
        .send({ file_path: `features/f${i}.txt`, branch_name: `feature-${i}`, content: `${i}\n`, commit_message: `feature ${i}` })
        .expect(201);
      const mr = await api(via(i), 'post', '/merge_requests')
        .send({ source_branch: `feature-${i}`, target_branch: 'master', title: `Feature ${i}` })
        .expect(201);
      mrs.push(mr.body.id);
    }
    const merged = await Promise.all(mrs.map((id, i) => api(via(i), 'put', `/merge_requests/${id}/merge`).send({})));
    expect(merged.map((r) => r.status)).toEqual(Array(6).fill(200));
    expect(merged.map((r) => r.body.state)).toEqual(Array(6).fill('merged'));
    const tree = await api(b, 'get', '/repository/tree?path=features').expect(200);
    expect(tree.body.map((e: { name: string }) => e.name).sort()).toEqual(Array.from({ length: 6 }, (_, i) => `f${i}.txt`));
    const { GitService } = await import('../src/git/git.service');
    const git = bApp.app.get(GitService);
    const fsck = await git.runner.run(['fsck', '--strict', '--no-progress'], { gitDir: git.repositoryPath(project) });
    expect(fsck.exitCode).toBe(0);
  }, 180_000);

  it('a background job enqueued by A runs once over both instances (jobs and the pipeline of a push)', async () => {
    const runs: { instance: string; n: number }[] = [];
    for (const [instance, app] of [
      ['A', a.app.app],
      ['B', bApp.app],
    ] as const) {
      await app.get(QueueService).register<{ n: number }>('test.once', {
        handler: async (job) => {
          runs.push({ instance, n: job.data.n });
        },
      });
    }
    const qa = a.app.app.get(QueueService);
    for (let n = 0; n < 20; n++) await qa.send('test.once', { n });
    await waitFor(async () => runs.length >= 20, '20 jobs', 30_000);
    await sleep(2500); // more than a poll interval: a second run would show
    expect(runs.map((r) => r.n).sort((x, y) => x - y)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    // a push through A: its pipeline is created once, by whichever worker took the job
    const c = ci(a);
    const yml = await api(a.http, 'post', '/repository/files')
      .send({ file_path: '.gitlab-ci.yml', branch_name: 'master', content: 'job:\n  script: x\n', commit_message: 'ci' })
      .expect(201);
    expect(yml.body.file_path).toBe('.gitlab-ci.yml');
    const head = await api(b, 'get', '/repository/commits/master').expect(200);
    await waitFor(async () => (await c.pipelines(project)).some((p: Json) => p.sha === head.body.id), 'pipeline', 30_000);
    await sleep(2500);
    expect((await c.pipelines(project)).filter((p: Json) => p.sha === head.body.id)).toHaveLength(1);
  }, 120_000);

  it('runners claiming through A and B alternately never get the same build twice', async () => {
    const c = ci(a);
    const pipeline = (await c.pipelines(project)).at(-1) as Json;
    const [head] = await a.sql<{ sha: string }>(`SELECT sha FROM ci_pipelines WHERE id = $1`, [pipeline.id]);
    await a.sql(
      `WITH s AS (
         INSERT INTO commit_statuses (project_id, sha, ref, name, stage, status, allow_failure, pipeline_id)
         SELECT $1, $2, 'master', 'job ' || g, 'test', 'pending', false, $3 FROM generate_series(1, 200) g RETURNING id)
       INSERT INTO ci_builds (id, pipeline_id, project_id, stage_idx, commands)
       SELECT id, $3, $1, 1, 'x' FROM s`,
      [project, head.sha, pipeline.id],
    );
    const pending = await a.sql<{ n: number }>(
      `SELECT count(*)::int AS n FROM ci_builds b JOIN commit_statuses s ON s.id = b.id WHERE b.project_id = $1 AND s.status = 'pending'`,
      [project],
    );
    const runners = await Promise.all(Array.from({ length: 10 }, () => c.registerRunner()));
    const claimed: number[] = [];
    const statuses = new Set<number>();
    await Promise.all(
      runners.map(async (r, k) => {
        for (let i = k; ; i++) {
          const res = await via(i)
            .post('/ci/api/v1/builds/register.json')
            .set('Content-Type', 'application/json')
            .send(JSON.stringify({ token: r.token }));
          statuses.add(res.status);
          if (res.status !== 201) return;
          claimed.push(res.body.id);
        }
      }),
    );
    expect([...statuses].sort()).toEqual([201, 404]);
    expect(claimed).toHaveLength(pending[0].n);
    expect(new Set(claimed).size).toBe(claimed.length);
  }, 120_000);

  it('a hook delivery enqueued through A is delivered once', async () => {
    const rx = await HookReceiver.start();
    try {
      await a.http
        .put('/api/v3/application/settings')
        .set('PRIVATE-TOKEN', a.root.token)
        .send({ allow_local_requests_from_hooks_and_services: true })
        .expect(200);
      await api(a.http, 'post', '/hooks')
        .send({ url: rx.url('/once'), issues_events: true, push_events: true })
        .expect(201);
      await api(a.http, 'post', '/issues').send({ title: 'hooked' }).expect(201);
      await api(a.http, 'post', '/repository/files')
        .send({ file_path: 'hooked.txt', branch_name: 'master', content: 'h\n', commit_message: 'hooked' })
        .expect(201);
      await rx.waitFor('/once', 2, 30_000);
      await sleep(3000);
      const kinds = rx.at('/once').map((r) => r.headers['x-gitlab-event']);
      expect(kinds.sort()).toEqual(['Issue Hook', 'Push Hook']);
    } finally {
      await rx.close();
    }
  }, 120_000);
});
