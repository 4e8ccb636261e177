import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AutomaticMerges } from '../src/merge-requests/automatic-merges.service';
import { SshServerService } from '../src/ssh/ssh-server.service';
import { waitFor } from './helpers/ci';
import { GitCli } from './helpers/git-cli';
import { expectSchema } from './helpers/schema';
import { SshCli } from './helpers/ssh-cli';
import { startTestApp, TestApp, TestUser } from './helpers/test-app';

const API = '/api/v3';
const NOT_PROTECTED = 'GitLab: You are not allowed to push code to protected branches on this project.';

/**
 * Protected branches for developers (issue 39, item 2): GitLab 8.17's `developers_can_push` and
 * `developers_can_merge` on `PUT …/branches/:branch/protect` (lib/api/branches.rb, the
 * ProtectedBranches::Api{Create,Update}Service), shown in the branch JSON (Entities::RepoBranch), and
 * honoured by git over HTTP and SSH, the files API, merges and merge when build succeeds — one rule
 * (git/receive-hooks.ts `branchProtection`, `mayWriteBranch`, `mayMergeIntoBranch`).
 */
describe('protected branches: developers_can_push and developers_can_merge', () => {
  let t: TestApp;
  let dir: string;
  let cli: GitCli;
  let ssh: SshCli;
  let owner: TestUser;
  let developer: TestUser;
  let reporter: TestUser;
  let outsider: TestUser;
  let devKey: string;
  let seq = 0;

  const as = (u: TestUser) => ({ 'PRIVATE-TOKEN': u.token });
  const protect = (u: TestUser, id: number, branch: string, flags: Record<string, unknown> = {}) =>
    t.http
      .put(`${API}/projects/${id}/repository/branches/${encodeURIComponent(branch)}/protect`)
      .set(as(u))
      .send(flags);
  const head = async (id: number, branch: string): Promise<string> =>
    (
      await t.http
        .get(`${API}/projects/${id}/repository/commits/${encodeURIComponent(branch)}`)
        .set(as(owner))
        .expect(200)
    ).body.id;

  /**
   * A private project of the owner with a README on master, which is left unprotected (the first push
   * protected it as the instance's default_branch_protection says); the developer and reporter are members.
   */
  async function project(unprotect = true): Promise<{ id: number; path: string }> {
    const p = await t.http
      .post(`${API}/projects`)
      .set(as(owner))
      .send({ name: `pb-${++seq}` })
      .expect(201);
    await t.http
      .post(`${API}/projects/${p.body.id}/repository/files`)
      .set(as(owner))
      .send({ file_path: 'README.md', branch_name: 'master', content: 'hello\n', commit_message: 'first' })
      .expect(201);
    await t.http.post(`${API}/projects/${p.body.id}/members`).set(as(owner)).send({ user_id: developer.id, access_level: 30 }).expect(201);
    await t.http.post(`${API}/projects/${p.body.id}/members`).set(as(owner)).send({ user_id: reporter.id, access_level: 20 }).expect(201);
    if (unprotect) await t.http.put(`${API}/projects/${p.body.id}/repository/branches/master/unprotect`).set(as(owner)).expect(200);
    return { id: p.body.id, path: p.body.path_with_namespace };
  }

  /** The developer's branch `feature` with one commit, and a merge request of it into master. */
  async function mergeRequest(p: { id: number }): Promise<{ url: string; head: string }> {
    await t.http.post(`${API}/projects/${p.id}/repository/branches`).set(as(developer)).send({ branch_name: 'feature', ref: 'master' }).expect(201);
    await t.http
      .post(`${API}/projects/${p.id}/repository/files`)
      .set(as(developer))
      .send({ file_path: 'feature.txt', branch_name: 'feature', content: 'x\n', commit_message: 'feature' })
      .expect(201);
    const mr = await t.http
      .post(`${API}/projects/${p.id}/merge_requests`)
      .set(as(developer))
      .send({ source_branch: 'feature', target_branch: 'master', title: 'Feature' })
      .expect(201);
    return { url: `${API}/projects/${p.id}/merge_requests/${mr.body.id}`, head: await head(p.id, 'feature') };
  }

  beforeAll(async () => {
    t = await startTestApp({ SSH_ENABLED: 'true', SSH_PORT: '0', SSH_LISTEN: '127.0.0.1', GIT_AUTH_BAN_IP_WHITELIST: '' });
    dir = mkdtempSync(join(tmpdir(), 'glv3-pb-dev-'));
    cli = await GitCli.listen(t, dir);
    ssh = SshCli.of(t.app.app.get(SshServerService), dir);
    owner = await t.createUser();
    developer = await t.createUser();
    reporter = await t.createUser();
    outsider = await t.createUser();
    const key = await ssh.keygen('developer');
    await t.http.post(`${API}/user/keys`).set(as(developer)).send({ title: 'laptop', key: key.pub }).expect(201);
    devKey = key.file;
  });

  afterAll(async () => {
    await t?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('PUT …/protect takes both flags and the branch JSON shows them; protecting again changes only the flags given (8.17)', async () => {
    const p = await project();
    const first = await protect(owner, p.id, 'master', { developers_can_merge: true }).expect(200);
    await expectSchema(first, 'Branch');
    expect(Object.keys(first.body)).toEqual(['name', 'commit', 'protected', 'developers_can_push', 'developers_can_merge']);
    expect(first.body).toMatchObject({ name: 'master', protected: true, developers_can_push: false, developers_can_merge: true });
    const push = await protect(owner, p.id, 'master', { developers_can_push: 'true' }).expect(200);
    expect(push.body).toMatchObject({ developers_can_push: true, developers_can_merge: true });
    const none = await protect(owner, p.id, 'master').expect(200);
    expect(none.body).toMatchObject({ developers_can_push: true, developers_can_merge: true });
    const off = await protect(owner, p.id, 'master', { developers_can_merge: false }).expect(200);
    expect(off.body).toMatchObject({ developers_can_push: true, developers_can_merge: false });
    const list = await t.http.get(`${API}/projects/${p.id}/repository/branches`).set(as(developer)).expect(200);
    await expectSchema(list, 'Branch[]');
    expect(list.body[0]).toMatchObject({ name: 'master', developers_can_push: true, developers_can_merge: false });
    // unprotected and protected anew: a flag not given is false
    const un = await t.http.put(`${API}/projects/${p.id}/repository/branches/master/unprotect`).set(as(owner)).expect(200);
    expect(un.body).toMatchObject({ protected: false, developers_can_push: false, developers_can_merge: false });
    const anew = await protect(owner, p.id, 'master', { developers_can_merge: true }).expect(200);
    expect(anew.body).toMatchObject({ developers_can_push: false, developers_can_merge: true });
    // a wildcard rule's flags show on the branches it protects (any matching rule, as 8.17)
    await t.http.post(`${API}/projects/${p.id}/repository/branches`).set(as(owner)).send({ branch_name: 'release-1', ref: 'master' }).expect(201);
    await t.sql(`INSERT INTO protected_branches (project_id, name, developers_can_push, developers_can_merge) VALUES ($1, 'release-*', true, false)`, [p.id]);
    const rel = await t.http.get(`${API}/projects/${p.id}/repository/branches/release-1`).set(as(owner)).expect(200);
    expect(rel.body).toMatchObject({ protected: true, developers_can_push: true, developers_can_merge: false });
  });

  it('default_branch_protection 3 (8.17: developers can merge): the first push protects the default branch so', async () => {
    const before = (await t.http.get(`${API}/application/settings`).set(as(t.root)).expect(200)).body.default_branch_protection;
    const set = await t.http.put(`${API}/application/settings`).set(as(t.root)).send({ default_branch_protection: 3 }).expect(200);
    expect(set.body.default_branch_protection).toBe(3);
    try {
      const p = await project(false);
      const master = await t.http.get(`${API}/projects/${p.id}/repository/branches/master`).set(as(owner)).expect(200);
      expect(master.body).toMatchObject({ protected: true, developers_can_push: false, developers_can_merge: true });
      await t.http.put(`${API}/application/settings`).set(as(t.root)).send({ default_branch_protection: 4 }).expect(400);
    } finally {
      await t.http.put(`${API}/application/settings`).set(as(t.root)).send({ default_branch_protection: before }).expect(200);
    }
  });

  it('who may protect: 401 without a token, 404 for a non-member, 403 for a developer; 400 for a flag that is no boolean', async () => {
    const p = await project();
    await protect(owner, p.id, 'master').expect(200);
    await t.http.put(`${API}/projects/${p.id}/repository/branches/master/protect`).send({ developers_can_merge: true }).expect(401);
    await protect(outsider, p.id, 'master', { developers_can_merge: true }).expect(404);
    await protect(developer, p.id, 'master', { developers_can_merge: true }).expect(403);
    const bad = await protect(owner, p.id, 'master', { developers_can_merge: 'perhaps' }).expect(400);
    expect(JSON.stringify(bad.body)).toContain('developers_can_merge');
    const shown = await t.http.get(`${API}/projects/${p.id}/repository/branches/master`).set(as(owner)).expect(200);
    expect(shown.body).toMatchObject({ developers_can_push: false, developers_can_merge: false });
  });

  it('git over HTTP and SSH: a developer pushes to a protected branch only when developers may push; creates one a pattern protects when they may merge', async () => {
    const p = await project();
    await protect(owner, p.id, 'master', { developers_can_merge: true }).expect(200);
    const work = join(dir, `push-${p.id}`);
    await cli.ok(['clone', '-q', cli.url(p.path, developer.username, developer.password), work]);
    await cli.commit(work, { 'dev.txt': 'dev\n' }, 'by the developer');
    const http = await cli.run(['push', 'origin', 'HEAD:master'], work);
    expect(http.code).not.toBe(0);
    expect(http.stderr).toContain(NOT_PROTECTED);
    const overSsh = await ssh.git(devKey, ['push', ssh.url(p.path), 'HEAD:master'], work);
    expect(overSsh.code).not.toBe(0);
    expect(overSsh.stderr).toContain(NOT_PROTECTED);

    await protect(owner, p.id, 'master', { developers_can_push: true }).expect(200);
    expect((await cli.run(['push', 'origin', 'HEAD:master'], work)).code).toBe(0);
    await cli.commit(work, { 'dev.txt': 'dev 2\n' }, 'by the developer, over SSH');
    expect((await ssh.git(devKey, ['push', ssh.url(p.path), 'HEAD:master'], work)).code).toBe(0);
    expect(await head(p.id, 'master')).toBe((await cli.ok(['rev-parse', 'HEAD'], work)).trim());
    // a reporter still cannot push at all
    const byReporter = await cli.run(['push', cli.url(p.path, reporter.username, reporter.password), 'HEAD:refs/heads/rep'], work);
    expect(byReporter.code).not.toBe(0);

    // release-* with developers_can_merge: a developer may create release-1 but not move it
    await t.sql(`INSERT INTO protected_branches (project_id, name, developers_can_push, developers_can_merge) VALUES ($1, 'release-*', false, true)`, [p.id]);
    expect((await cli.run(['push', 'origin', 'HEAD:refs/heads/release-1'], work)).code).toBe(0);
    expect((await ssh.git(devKey, ['push', ssh.url(p.path), 'HEAD:refs/heads/release-2'], work)).code).toBe(0);
    await cli.commit(work, { 'dev.txt': 'dev 3\n' }, 'onto the release');
    const moved = await cli.run(['push', 'origin', 'HEAD:refs/heads/release-1'], work);
    expect(moved.code).not.toBe(0);
    expect(moved.stderr).toContain(NOT_PROTECTED);
    // and the API's branch creation follows the same rule
    await t.http.post(`${API}/projects/${p.id}/repository/branches`).set(as(developer)).send({ branch_name: 'release-3', ref: 'master' }).expect(201);
    await t.sql(`UPDATE protected_branches SET developers_can_merge = false WHERE project_id = $1 AND name = 'release-*'`, [p.id]);
    await t.http.post(`${API}/projects/${p.id}/repository/branches`).set(as(developer)).send({ branch_name: 'release-4', ref: 'master' }).expect(403);
    const refused = await cli.run(['push', 'origin', 'HEAD:refs/heads/release-5'], work);
    expect(refused.code).not.toBe(0);
  });

  it('files API: a developer writes to a protected branch only when developers may push', async () => {
    const p = await project();
    await protect(owner, p.id, 'master', { developers_can_merge: true }).expect(200);
    const write = (n: number) =>
      t.http
        .put(`${API}/projects/${p.id}/repository/files`)
        .set(as(developer))
        .send({ file_path: 'README.md', branch_name: 'master', content: `v${n}\n`, commit_message: `edit ${n}` });
    const refused = await write(1).expect(400);
    expect(refused.body.message).toContain('You are not allowed to push into this branch');
    await protect(owner, p.id, 'master', { developers_can_push: true }).expect(200);
    await write(2).expect(200);
    const raw = await t.http.get(`${API}/projects/${p.id}/repository/blobs/master?filepath=README.md`).set(as(developer)).expect(200);
    expect(raw.text).toBe('v2\n');
  });

  it('merge: a developer merges into a protected branch when developers may merge (or push), else 401', async () => {
    const p = await project();
    await protect(owner, p.id, 'master').expect(200);
    const mr = await mergeRequest(p);
    await t.http.put(`${mr.url}/merge`).set(as(developer)).send({}).expect(401);
    await t.http.put(`${mr.url}/merge`).set(as(reporter)).send({}).expect(401);
    await protect(owner, p.id, 'master', { developers_can_merge: true }).expect(200);
    const merged = await t.http.put(`${mr.url}/merge`).set(as(developer)).send({}).expect(200);
    expect(merged.body.state).toBe('merged');
    const files = await t.http.get(`${API}/projects/${p.id}/repository/tree?ref_name=master`).set(as(owner)).expect(200);
    expect(files.body.map((f: { name: string }) => f.name)).toContain('feature.txt');

    // developers_can_push alone lets them merge too (8.17's can_push_to_branch? || can_merge_to_branch?)
    const q = await project();
    await protect(owner, q.id, 'master', { developers_can_push: true }).expect(200);
    const mr2 = await mergeRequest(q);
    expect((await t.http.put(`${mr2.url}/merge`).set(as(developer)).send({}).expect(200)).body.state).toBe('merged');
  });

  it('merge when build succeeds: set by a developer with developers_can_merge, merged when the build succeeds; not once that permission is gone', async () => {
    const status = (pid: number, sha: string, state: string) =>
      t.http.post(`${API}/projects/${pid}/statuses/${sha}`).set(as(owner)).send({ state, name: 'ci' }).expect(201);
    const succeed = async (pid: number, sha: string) => {
      await status(pid, sha, 'success');
      await t.app.app.get(AutomaticMerges).afterCommitStatus({ projectId: pid, sha, status: 'success' });
    };

    const p = await project();
    await protect(owner, p.id, 'master', { developers_can_merge: true }).expect(200);
    const mr = await mergeRequest(p);
    await status(p.id, mr.head, 'running');
    const set = await t.http.put(`${mr.url}/merge`).set(as(developer)).send({ merge_when_build_succeeds: true }).expect(200);
    expect(set.body).toMatchObject({ state: 'opened', merge_when_build_succeeds: true });
    await succeed(p.id, mr.head);
    await waitFor(async () => (await t.http.get(mr.url).set(as(owner)).expect(200)).body.state === 'merged', 'merged');

    // without developers_can_merge the developer cannot even ask
    const q = await project();
    await protect(owner, q.id, 'master').expect(200);
    const mr2 = await mergeRequest(q);
    await status(q.id, mr2.head, 'running');
    await t.http.put(`${mr2.url}/merge`).set(as(developer)).send({ merge_when_build_succeeds: true }).expect(401);

    // asked while allowed, the permission withdrawn before the build succeeds: nothing is merged
    await protect(owner, q.id, 'master', { developers_can_merge: true }).expect(200);
    await t.http.put(`${mr2.url}/merge`).set(as(developer)).send({ merge_when_build_succeeds: true }).expect(200);
    const target = await head(q.id, 'master');
    await protect(owner, q.id, 'master', { developers_can_merge: false }).expect(200);
    await succeed(q.id, mr2.head);
    expect((await t.http.get(mr2.url).set(as(owner)).expect(200)).body.state).toBe('opened');
    expect(await head(q.id, 'master')).toBe(target);
  });
});
