import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Logger } from '../src/common/logging/logger';
import { ci, Json, waitFor } from './helpers/ci';
import { GitCli } from './helpers/git-cli';
import { expectSchema } from './helpers/schema';
import { startTestApp, TestApp, TestUser } from './helpers/test-app';

const SIMPLE = 'build:\n  stage: build\n  script: make\ntest:\n  script: make test\n';
const NO_SCRIPT = 'job1:\n  stage: test\n  tags: [ruby]\n';

describe('CI pipelines API (v3, GitLab 8.11–8.14) and the CI lint', () => {
  let t: TestApp;
  let c: ReturnType<typeof ci>;
  let owner: TestUser;
  let reporter: TestUser;
  let guest: TestUser;
  let stranger: TestUser;
  let home: string;
  let git: GitCli;

  const as = (u: TestUser) => ({
    get: (path: string) => t.http.get(`/api/v3${path}`).set('PRIVATE-TOKEN', u.token),
    post: (path: string, body: Json = {}) => t.http.post(`/api/v3${path}`).set('PRIVATE-TOKEN', u.token).send(body),
  });
  const addMember = (projectId: number, u: TestUser, level: number) =>
    as(owner).post(`/projects/${projectId}/members`, { user_id: u.id, access_level: level }).expect(201);

  beforeAll(async () => {
    t = await startTestApp();
    c = ci(t);
    owner = await t.createUser();
    reporter = await t.createUser();
    guest = await t.createUser();
    stranger = await t.createUser();
    await t.http.put(`/api/v3/users/${owner.id}`).set('PRIVATE-TOKEN', t.root.token).send({ projects_limit: 100 }).expect(200);
    home = mkdtempSync(join(tmpdir(), 'ci-pipelines-api-'));
    git = await GitCli.listen(t, home);
  });
  afterAll(async () => {
    await t.close();
    rmSync(home, { recursive: true, force: true });
  });

  describe('an invalid .gitlab-ci.yml pushed over git', () => {
    it('the push is accepted; the commit gets a failed status carrying the error, logged once; the pipeline shows yaml_errors', async () => {
      const logger = t.app.app.get(Logger);
      const warn = jest.spyOn(logger, 'warn');
      try {
        const p = await c.project(owner, null);
        const work = join(home, `w-${p.id}`);
        await git.ok(['clone', '-q', git.url(p.path, owner.username, owner.password), work]);
        const sha = await git.commit(work, { '.gitlab-ci.yml': NO_SCRIPT }, 'add ci');
        await git.ok(['push', '-q', 'origin', 'master'], work); // accepted: ok() throws on a non-zero exit
        const [pl] = await waitFor(async () => {
          const list = await c.pipelines(p.id);
          return list.length ? list : undefined;
        }, 'pipeline of the push');
        expect(pl).toMatchObject({ status: 'failed', yaml_errors: "jobs:job1 script can't be blank" });
        expect(await c.builds(p.id)).toEqual([]);

        const statuses = await as(owner).get(`/projects/${p.id}/repository/commits/${sha}/statuses`).expect(200);
        expect(statuses.body).toHaveLength(1);
        expect(statuses.body[0]).toMatchObject({
          name: 'gitlab-ci.yml',
          status: 'failed',
          ref: 'master',
          sha,
          description: "jobs:job1 script can't be blank",
          allow_failure: false,
        });
        expect(statuses.body[0].author.id).toBe(owner.id);
        const commit = await as(owner).get(`/projects/${p.id}/repository/commits/${sha}`).expect(200);
        expect(commit.body.status).toBe('failed');

        const logged = warn.mock.calls.filter(([msg]) => /gitlab-ci\.yml/.test(String(msg)));
        expect(logged).toHaveLength(1);
        expect(logged[0][1]).toMatchObject({ project_id: p.id, pipeline_id: pl.id, ref: 'master', sha, error: "jobs:job1 script can't be blank" });

        const shown = await as(owner).get(`/projects/${p.id}/pipelines/${pl.id}`).expect(200);
        await expectSchema(shown, 'Pipeline');
        expect(shown.body).toMatchObject({ id: pl.id, status: 'failed', yaml_errors: "jobs:job1 script can't be blank", ref: 'master', sha, tag: false });
      } finally {
        warn.mockRestore();
      }
    });

    it('a trigger on an invalid file: 400 No builds created, and neither the pipeline nor its failed status is left', async () => {
      const p = await c.project(owner, NO_SCRIPT);
      const token = (await as(owner).post(`/projects/${p.id}/triggers`).expect(201)).body.token;
      const before = await as(owner).get(`/projects/${p.id}/repository/commits/${p.sha}/statuses?all=true`).expect(200);
      expect(before.body).toHaveLength(1);
      const res = await t.http.post(`/api/v3/projects/${p.id}/trigger/builds`).send({ token, ref: 'master' }).expect(400);
      expect(res.body).toEqual({ message: '400 No builds created' });
      expect(await c.pipelines(p.id)).toHaveLength(1);
      const after = await as(owner).get(`/projects/${p.id}/repository/commits/${p.sha}/statuses?all=true`).expect(200);
      expect(after.body.map((s: Json) => s.id)).toEqual(before.body.map((s: Json) => s.id));
    });

    it('a trigger runs the builds of a [ci skip] head (GitLab 8.17 ignores [ci skip] for triggers)', async () => {
      const p = await c.project(owner, null);
      await as(owner)
        .post(`/projects/${p.id}/repository/files`, { file_path: '.gitlab-ci.yml', branch_name: 'master', content: SIMPLE, commit_message: 'ci [Skip CI]' })
        .expect(201);
      await waitFor(async () => (await c.pipelines(p.id)).length === 1, 'the skipped pipeline of the push');
      expect((await c.pipelines(p.id))[0].status).toBe('skipped');
      const token = (await as(owner).post(`/projects/${p.id}/triggers`).expect(201)).body.token;
      await t.http.post(`/api/v3/projects/${p.id}/trigger/builds`).send({ token, ref: 'master' }).expect(201);
      // 8.17: the later stage exists from the start, `created`
      expect((await c.builds(p.id)).map((b: Json) => [b.name, b.status])).toEqual([
        ['build', 'pending'],
        ['test', 'created'],
      ]);
      const pls = await c.pipelines(p.id);
      expect(pls.map((x) => x.status)).toEqual(['skipped', 'pending']);
      await as(owner).post(`/projects/${p.id}/pipelines/${pls[1].id}/cancel`).expect(200); // no pending build left for other tests
    });

    it('a valid file gets no such status', async () => {
      const p = await c.project(owner, SIMPLE);
      const statuses = await as(owner).get(`/projects/${p.id}/repository/commits/${p.sha}/statuses`).expect(200);
      // the commit's statuses are its builds (8.17: the later stage's too, `created`), no gitlab-ci.yml status
      expect(statuses.body.map((s: Json) => [s.name, s.status])).toEqual([
        ['test', 'created'],
        ['build', 'pending'],
      ]);
    });
  });

  describe('GET /projects/:id/pipelines and /pipelines/:pipeline_id', () => {
    let p: Awaited<ReturnType<typeof c.project>>;
    beforeAll(async () => {
      p = await c.project(owner, SIMPLE);
      await as(owner).post(`/projects/${p.id}/repository/branches`, { branch_name: 'feature', ref: 'master' }).expect(201);
      await as(owner).post(`/projects/${p.id}/repository/tags`, { tag_name: 'v1.0', ref: 'master' }).expect(201);
      await waitFor(async () => (await c.pipelines(p.id)).length === 3, 'three pipelines');
      await addMember(p.id, reporter, 20);
      await addMember(p.id, guest, 10);
    });

    it("lists newest first with GitLab's Pipeline entity and the standard pagination headers", async () => {
      const res = await as(reporter).get(`/projects/${p.id}/pipelines?per_page=2`).expect(200);
      await expectSchema(res, 'Pipeline[]');
      expect(res.headers['x-total']).toBe('3');
      expect(res.headers['x-total-pages']).toBe('2');
      expect(res.headers['x-per-page']).toBe('2');
      expect(res.headers['x-next-page']).toBe('2');
      expect(res.headers.link).toMatch(/rel="next"/);
      expect(res.body).toHaveLength(2);
      const ids = (await c.pipelines(p.id)).map((r) => r.id);
      expect(res.body.map((x: Json) => x.id)).toEqual([ids[2], ids[1]]);
      const first = res.body[1];
      expect(Object.keys(first)).toEqual([
        'id',
        'sha',
        'ref',
        'status',
        'before_sha',
        'tag',
        'yaml_errors',
        'user',
        'created_at',
        'updated_at',
        'started_at',
        'finished_at',
        'committed_at',
        'duration',
        'coverage',
      ]);
      expect(first).toMatchObject({ sha: p.sha, status: 'pending', yaml_errors: null, duration: null, coverage: null });
      expect(first.user).toMatchObject({ id: owner.id, username: owner.username });
      expect(first.committed_at).toEqual(expect.any(String));
      const page2 = await as(reporter).get(`/projects/${p.id}/pipelines?per_page=2&page=2`).expect(200);
      expect(page2.body.map((x: Json) => x.id)).toEqual([ids[0]]);
    });

    it('coverage: the mean of the pipeline\'s latest builds\' coverage, "%.2f", the same in the list and the show; null without', async () => {
      const [oldest, , newest] = (await c.pipelines(p.id)).map((r) => r.id);
      const builds = await t.sql<{ id: number; name: string }>(
        `SELECT b.id, s.name FROM ci_builds b JOIN commit_statuses s ON s.id = b.id WHERE b.pipeline_id = $1 ORDER BY b.id`,
        [oldest],
      );
      // the pipeline's builds (its first stage so far): 41.666…, and 25 + 16.666… = 41.666… when there are two
      for (const b of builds)
        await t.sql('UPDATE ci_builds SET coverage = $2 WHERE id = $1', [b.id, builds.length === 1 ? 125 / 3 : b.name === 'build' ? 50 : 100 / 3]);
      const list = (await as(reporter).get(`/projects/${p.id}/pipelines?per_page=100`).expect(200)).body as Json[];
      expect(list.find((x) => x.id === oldest)!.coverage).toBe('41.67');
      expect(list.find((x) => x.id === newest)!.coverage).toBeNull();
      expect((await as(reporter).get(`/projects/${p.id}/pipelines/${oldest}`).expect(200)).body.coverage).toBe('41.67');
      for (const b of builds) await t.sql('UPDATE ci_builds SET coverage = NULL WHERE id = $1', [b.id]);
    });

    it('filters by scope, status and ref; a bad scope or status is 400', async () => {
      const list = async (q: string) => (await as(owner).get(`/projects/${p.id}/pipelines?${q}`).expect(200)).body.map((x: Json) => `${x.ref}:${x.tag}`);
      expect(await list('scope=tags')).toEqual(['v1.0:true']);
      expect((await list('scope=branches')).sort()).toEqual(['feature:false', 'master:false']);
      expect(await list('ref=feature')).toEqual(['feature:false']);
      expect(await list('scope=pending')).toHaveLength(3);
      expect(await list('scope=running')).toEqual([]);
      expect(await list('scope=finished')).toEqual([]);
      expect(await list('status=pending&ref=master')).toEqual(['master:false']);
      expect(await list('status=success')).toEqual([]);
      expect(await list('scope=finished&status=pending')).toEqual([]);
      expect((await as(owner).get(`/projects/${p.id}/pipelines?scope=nope`).expect(400)).body).toEqual({ message: '400 (Bad request) "scope" is invalid' });
      expect((await as(owner).get(`/projects/${p.id}/pipelines?status=nope`).expect(400)).body).toEqual({ message: '400 (Bad request) "status" is invalid' });
    });

    it('401 without a token; 404 for a project the caller cannot see; 403 for a guest; unknown pipeline 404', async () => {
      await t.http.get(`/api/v3/projects/${p.id}/pipelines`).expect(401);
      await t.http.get(`/api/v3/projects/${p.id}/pipelines/${p.pipelineId}`).expect(401);
      expect((await as(stranger).get(`/projects/${p.id}/pipelines`).expect(404)).body).toEqual({ message: '404 Project Not Found' });
      await as(stranger).get(`/projects/${p.id}/pipelines/${p.pipelineId}`).expect(404);
      expect((await as(guest).get(`/projects/${p.id}/pipelines`).expect(403)).body).toEqual({ message: '403 Forbidden' });
      await as(guest).get(`/projects/${p.id}/pipelines/${p.pipelineId}`).expect(403);
      expect((await as(owner).get(`/projects/${p.id}/pipelines/999999`).expect(404)).body).toEqual({ message: '404 Pipeline Not Found' });
      await as(owner).get(`/projects/${p.id}/pipelines/abc`).expect(404);
      const other = await c.project(owner, SIMPLE);
      await as(owner).get(`/projects/${p.id}/pipelines/${other.pipelineId}`).expect(404);
    });

    it('a public project with public builds shows its pipelines to anyone signed in; without public builds only to reporters', async () => {
      const pub = await c.project(owner, SIMPLE, { visibility_level: 20, public_builds: true });
      const list = await as(stranger).get(`/projects/${pub.id}/pipelines`).expect(200);
      expect(list.body.map((x: Json) => x.id)).toEqual([pub.pipelineId]);
      await as(stranger).get(`/projects/${pub.id}/pipelines/${pub.pipelineId}`).expect(200);
      const closed = await c.project(owner, SIMPLE, { visibility_level: 20, public_builds: false });
      await as(stranger).get(`/projects/${closed.id}/pipelines`).expect(403);
    });
  });

  describe('POST /projects/:id/pipeline', () => {
    it('creates the pipeline of a branch head exactly as a push does (same builds), ignoring [ci skip]', async () => {
      const p = await c.project(owner, null);
      await as(owner)
        .post(`/projects/${p.id}/repository/files`, { file_path: '.gitlab-ci.yml', branch_name: 'master', content: SIMPLE, commit_message: 'ci [ci skip]' })
        .expect(201);
      const pushed = await waitFor(async () => (await c.pipelines(p.id))[0], 'pipeline of the push');
      expect(pushed.status).toBe('skipped');
      const res = await as(owner).post(`/projects/${p.id}/pipeline`, { ref: 'master' }).expect(201);
      await expectSchema(res, 'Pipeline');
      expect(res.body).toMatchObject({ ref: 'master', tag: false, status: 'pending', yaml_errors: null, before_sha: '0'.repeat(40) });
      expect(res.body.user.id).toBe(owner.id);
      const builds = (await c.builds(p.id)).filter((b) => b.pipeline_id === res.body.id);
      expect(builds.map((b) => [b.name, b.stage, b.status])).toEqual([
        ['build', 'build', 'pending'],
        ['test', 'test', 'created'],
      ]);
      expect(res.body.sha).toBe(builds[0].sha);

      // the same as a push of the same file would create
      const pushedToo = await c.project(owner, SIMPLE);
      expect((await c.builds(pushedToo.id)).map((b) => [b.name, b.stage, b.stage_idx])).toEqual(builds.map((b) => [b.name, b.stage, b.stage_idx]));
    });

    it('for a tag: tag true; an invalid file: a failed pipeline with yaml_errors and the failed commit status', async () => {
      const p = await c.project(owner, NO_SCRIPT);
      await as(owner).post(`/projects/${p.id}/repository/tags`, { tag_name: 'v2', ref: 'master' }).expect(201);
      await waitFor(async () => (await c.pipelines(p.id)).length === 2, 'pipeline of the tag');
      const res = await as(owner).post(`/projects/${p.id}/pipeline`, { ref: 'v2' }).expect(201);
      expect(res.body).toMatchObject({ ref: 'v2', tag: true, status: 'failed', yaml_errors: "jobs:job1 script can't be blank" });
      const statuses = await as(owner).get(`/projects/${p.id}/repository/commits/${p.sha}/statuses?all=true`).expect(200);
      expect(statuses.body.filter((s: Json) => s.status === 'failed' && s.description === "jobs:job1 script can't be blank").length).toBe(3);
    });

    it('400 for a missing ref, an unknown ref, no .gitlab-ci.yml or no job for the ref (nothing saved)', async () => {
      const p = await c.project(owner, 'deploy:\n  script: x\n  only: [production]\n');
      const before = (await c.pipelines(p.id)).length;
      expect((await as(owner).post(`/projects/${p.id}/pipeline`, {}).expect(400)).body).toEqual({ message: '400 (Bad request) "ref" not given' });
      expect((await as(owner).post(`/projects/${p.id}/pipeline`, { ref: 'nope' }).expect(400)).body).toEqual({ message: { base: ['Reference not found'] } });
      expect((await as(owner).post(`/projects/${p.id}/pipeline`, { ref: '--upload-pack=x' }).expect(400)).body).toEqual({
        message: { base: ['Reference not found'] },
      });
      expect((await as(owner).post(`/projects/${p.id}/pipeline`, { ref: p.sha }).expect(400)).body).toEqual({ message: { base: ['Reference not found'] } });
      expect((await as(owner).post(`/projects/${p.id}/pipeline`, { ref: 'master' }).expect(400)).body).toEqual({
        message: { base: ['No builds for this pipeline.'] },
      });
      expect((await c.pipelines(p.id)).length).toBe(before);
      const bare = await c.project(owner, null);
      expect((await as(owner).post(`/projects/${bare.id}/pipeline`, { ref: 'master' }).expect(400)).body).toEqual({
        message: { base: ['Missing .gitlab-ci.yml file'] },
      });
      expect(await c.pipelines(bare.id)).toEqual([]);
    });

    it('401 without a token; 404 for the invisible; 403 for a reporter and a guest', async () => {
      const p = await c.project(owner, SIMPLE);
      await addMember(p.id, reporter, 20);
      await addMember(p.id, guest, 10);
      await t.http.post(`/api/v3/projects/${p.id}/pipeline`).send({ ref: 'master' }).expect(401);
      await as(stranger).post(`/projects/${p.id}/pipeline`, { ref: 'master' }).expect(404);
      expect((await as(reporter).post(`/projects/${p.id}/pipeline`, { ref: 'master' }).expect(403)).body).toEqual({ message: '403 Forbidden' });
      await as(guest).post(`/projects/${p.id}/pipeline`, { ref: 'master' }).expect(403);
      expect((await c.pipelines(p.id)).length).toBe(1);
    });
  });

  describe('retry and cancel', () => {
    it('retry makes a new pending build of each failed or canceled job; cancel cancels the pending and running ones', async () => {
      const p = await c.project(owner, 'a:\n  script: x\nb:\n  script: y\nc:\n  script: z\n');
      const runner = (await c.api.register({ token: p.runnersToken })).body;
      const first = (await c.api.requestBuild(runner.token).expect(201)).body;
      await c.api.update(first.id, { token: runner.token, state: 'failed' }).expect(200);
      const second = (await c.api.requestBuild(runner.token).expect(201)).body; // running
      await waitFor(async () => (await c.builds(p.id)).find((b) => b.id === second.id)?.status === 'running', 'running build');

      const canceled = await as(owner).post(`/projects/${p.id}/pipelines/${p.pipelineId}/cancel`).expect(200);
      await expectSchema(canceled, 'Pipeline');
      const afterCancel = await c.builds(p.id);
      expect(afterCancel.map((b) => b.status).sort()).toEqual(['canceled', 'canceled', 'failed']);
      expect(canceled.body).toMatchObject({ id: p.pipelineId, status: 'failed' });
      expect(canceled.body.finished_at).toEqual(expect.any(String));

      const retried = await as(owner).post(`/projects/${p.id}/pipelines/${p.pipelineId}/retry`).expect(201);
      await expectSchema(retried, 'Pipeline');
      const afterRetry = await c.builds(p.id);
      expect(afterRetry).toHaveLength(6);
      const fresh = afterRetry.slice(3);
      expect(fresh.map((b) => b.status)).toEqual(['pending', 'pending', 'pending']);
      expect(fresh.map((b) => b.name).sort()).toEqual(['a', 'b', 'c']);
      expect(
        afterRetry
          .slice(0, 3)
          .map((b) => b.status)
          .sort(),
      ).toEqual(['canceled', 'canceled', 'failed']); // the old ones keep theirs
      expect(retried.body).toMatchObject({ id: p.pipelineId, status: 'pending', finished_at: null });

      // retry again: nothing failed now, nothing new
      await as(owner).post(`/projects/${p.id}/pipelines/${p.pipelineId}/retry`).expect(201);
      expect(await c.builds(p.id)).toHaveLength(6);
    });

    it('401, 404 for the invisible, 404 for an unknown pipeline, 403 for a reporter', async () => {
      const p = await c.project(owner, SIMPLE);
      await addMember(p.id, reporter, 20);
      for (const action of ['retry', 'cancel']) {
        await t.http.post(`/api/v3/projects/${p.id}/pipelines/${p.pipelineId}/${action}`).expect(401);
        await as(stranger).post(`/projects/${p.id}/pipelines/${p.pipelineId}/${action}`).expect(404);
        await as(owner).post(`/projects/${p.id}/pipelines/999999/${action}`).expect(404);
        expect((await as(reporter).post(`/projects/${p.id}/pipelines/${p.pipelineId}/${action}`).expect(403)).body).toEqual({ message: '403 Forbidden' });
      }
      expect((await c.builds(p.id)).map((b) => b.status)).toEqual(['pending', 'created']);
    });
  });

  describe('POST /ci/lint', () => {
    it('valid content: status valid, no errors', async () => {
      const res = await as(stranger).post('/ci/lint', { content: SIMPLE }).expect(200);
      await expectSchema(res, 'CiLint');
      expect(res.body).toEqual({ status: 'valid', errors: [] });
    });

    it('invalid content: status invalid with the message naming the job and the key', async () => {
      expect((await as(stranger).post('/ci/lint', { content: NO_SCRIPT }).expect(200)).body).toEqual({
        status: 'invalid',
        errors: ["jobs:job1 script can't be blank"],
      });
      expect((await as(stranger).post('/ci/lint', { content: 'rspec:\n  script: x\n  when: sometimes\n' }).expect(200)).body).toEqual({
        status: 'invalid',
        errors: ['jobs:rspec when should be on_success, on_failure, always or manual'],
      });
      expect((await as(stranger).post('/ci/lint', { content: 'rspec:\n  script: x\n  foo: 1\n' }).expect(200)).body.errors).toEqual([
        'jobs:rspec config contains unknown keys: foo',
      ]);
      expect((await as(stranger).post('/ci/lint', { content: '' }).expect(200)).body).toEqual({
        status: 'invalid',
        errors: ['Please provide content of .gitlab-ci.yml'],
      });
      // a form body works as well as JSON
      const form = await t.http.post('/api/v3/ci/lint').set('PRIVATE-TOKEN', stranger.token).type('form').send({ content: 'x: [' }).expect(200);
      expect(form.body.status).toBe('invalid');
      expect(form.body.errors[0]).toMatch(/^\(<unknown>\): /);
    });

    it('400 without content; 401 without a token', async () => {
      expect((await as(stranger).post('/ci/lint', {}).expect(400)).body).toEqual({ message: '400 (Bad request) "content" not given' });
      await t.http.post('/api/v3/ci/lint').send({ content: SIMPLE }).expect(401);
    });
  });
});
