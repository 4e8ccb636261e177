import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { GitService } from '../../src/git/git.service';
import { AutomaticMerges } from '../../src/merge-requests/automatic-merges.service';
import { ci, Json, waitFor } from '../helpers/ci';
import { GitCli } from '../helpers/git-cli';
import { SshCli } from '../helpers/ssh-cli';
import { SshServerService } from '../../src/ssh/ssh-server.service';
import { startTestApp, TestApp, TestUser } from '../helpers/test-app';

const YML = `
test:
  script: ["make test"]
`;
const CANCELED = 'Canceled the automatic merge';

/**
 * "Merge when build succeeds" is an approval of one commit. A master sets it on a merge request; a
 * developer (or, from a fork, the fork's owner, whose builds run on a runner of their own) then
 * moves the source branch and makes the new head's build succeed. Unreviewed code must not reach
 * the protected target: every push to the source branch calls the automatic merge off (GitLab's
 * RefreshService#reset_merge_when_build_succeeds), and the automatic merge itself merges only the
 * approved sha, only while it is still the source head.
 */
describe('security: merge when build succeeds does not survive a change of the source branch', () => {
  let t: TestApp;
  let c: ReturnType<typeof ci>;
  let cli: GitCli;
  let sshCli: SshCli;
  let developerKey: string;
  let tmp: string;
  let owner: TestUser;
  let master: TestUser;
  let developer: TestUser;
  let forker: TestUser;
  let runner: { id: number; token: string };

  const api = (u: TestUser, method: 'get' | 'post' | 'put', path: string) => t.http[method](`/api/v3${path}`).set('PRIVATE-TOKEN', u.token);

  beforeAll(async () => {
    t = await startTestApp({ SSH_ENABLED: 'true', SSH_PORT: '0', SSH_LISTEN: '127.0.0.1' });
    c = ci(t);
    tmp = mkdtempSync(join(tmpdir(), 'mwbs-sec-'));
    cli = await GitCli.listen(t, tmp);
    owner = await t.createUser();
    master = await t.createUser();
    developer = await t.createUser();
    forker = await t.createUser();
    runner = await c.registerRunner();
    sshCli = SshCli.of(t.app.app.get(SshServerService), tmp);
    const key = await sshCli.keygen('developer');
    await api(developer, 'post', '/user/keys').send({ title: 'laptop', key: key.pub }).expect(201);
    developerKey = key.file;
  });
  afterAll(async () => {
    await t.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  /** A project with CI, a master and a developer; the developer's branch `feature` with a commit and an MR into master. */
  async function setup(branch = 'feature'): Promise<{ project: Json; mrUrl: string; mr: Json; head: string; masterHead: string }> {
    const p = await c.project(owner, YML);
    await api(owner, 'post', `/projects/${p.id}/members`).send({ user_id: master.id, access_level: 40 }).expect(201);
    await api(owner, 'post', `/projects/${p.id}/members`).send({ user_id: developer.id, access_level: 30 }).expect(201);
    await api(developer, 'post', `/projects/${p.id}/repository/branches`).send({ branch_name: branch, ref: 'master' }).expect(201);
    await api(developer, 'post', `/projects/${p.id}/repository/files`)
      .send({ file_path: 'feature.txt', branch_name: branch, content: 'reviewed\n', commit_message: 'reviewed change' })
      .expect(201);
    const head = (await api(developer, 'get', `/projects/${p.id}/repository/commits/${branch}`).expect(200)).body.id;
    const mr = (
      await api(developer, 'post', `/projects/${p.id}/merge_requests`).send({ source_branch: branch, target_branch: 'master', title: 'Reviewed' }).expect(201)
    ).body;
    await waitFor(async () => (await c.pipelines(p.id)).find((pl) => pl.sha === head && pl.status === 'pending'), 'source pipeline');
    return { project: p, mrUrl: `/projects/${p.id}/merge_requests/${mr.id}`, mr, head, masterHead: p.sha };
  }

  async function setMergeWhenBuildSucceeds(mrUrl: string): Promise<void> {
    const res = await api(master, 'put', `${mrUrl}/merge`).send({ merge_when_build_succeeds: true, should_remove_source_branch: true }).expect(200);
    expect(res.body).toMatchObject({ state: 'opened', merge_when_build_succeeds: true });
  }

  /**
   * Builds a runner claimed while looking for another one, by runner token, project and sha: finished when
   * their turn comes. The project is part of the key: two tests' setups in the same second make the same
   * commits (same tree, parent, author and time), so a sha alone can name another project's build.
   */
  const claimedBuilds = new Map<string, number>();

  /** The runner (with `token`) claims the build of `sha` in `projectId` (or takes the one it claimed before) and reports `state`. */
  async function runBuildOf(token: string, projectId: number, sha: string, state: 'success' | 'failed' = 'success'): Promise<void> {
    const id =
      claimedBuilds.get(`${token}:${projectId}:${sha}`) ??
      (await waitFor(async () => {
        const res = await c.api.requestBuild(token);
        if (res.status !== 201) return undefined;
        claimedBuilds.set(`${token}:${res.body.project_id}:${res.body.sha}`, res.body.id);
        return res.body.sha === sha && res.body.project_id === projectId ? (res.body.id as number) : undefined;
      }, `build of ${sha}`));
    await c.api.update(id, { token, state: 'running', trace: 'running\n' }).expect(200);
    await c.api.update(id, { token, state, trace: `done: ${state}\n` }).expect(200);
  }

  /**
   * After the build of `sha` in `projectId` succeeded: the reaction to that outcome has run (it is
   * also run once more here, awaited, so that a merge it would make cannot come after the checks).
   */
  async function afterSuccessOf(projectId: number, sha: string): Promise<void> {
    await waitFor(async () => (await c.pipelines(projectId)).find((pl) => pl.sha === sha && pl.status === 'success'), `green pipeline of ${sha}`);
    await t.app.app.get(AutomaticMerges).afterCommitStatus({ projectId, sha, status: 'success' });
  }

  /** Not merged, the flag and the merging user cleared, GitLab's system note, the target unchanged. */
  async function expectCalledOff(projectId: number, mrUrl: string, masterHead: string, noteAuthor: TestUser): Promise<void> {
    await waitFor(async () => (await api(master, 'get', mrUrl).expect(200)).body.merge_when_build_succeeds === false, 'flag cleared');
    const mr = (await api(master, 'get', mrUrl).expect(200)).body;
    expect(mr).toMatchObject({ state: 'opened', merge_when_build_succeeds: false });
    const [row] = await t.sql<Json>(`SELECT merge_user_id, merge_params, merge_when_build_succeeds_sha, merge_commit_sha FROM merge_requests WHERE id = $1`, [
      mr.id,
    ]);
    expect(row).toEqual({ merge_user_id: null, merge_params: null, merge_when_build_succeeds_sha: null, merge_commit_sha: null });
    const notes = (await api(master, 'get', `${mrUrl}/notes`).expect(200)).body as Json[];
    expect(notes.filter((n) => n.system && n.body === CANCELED).map((n) => n.author.id)).toEqual([noteAuthor.id]);
    expect((await api(master, 'get', `/projects/${projectId}/repository/commits/master`).expect(200)).body.id).toBe(masterHead);
  }

  it('a developer pushes over git smart HTTP after the master set it: the new head’s green build merges nothing', async () => {
    const s = await setup();
    await setMergeWhenBuildSucceeds(s.mrUrl);
    const dir = join(tmp, `clone-${s.project.id}`);
    await cli.ok(['clone', '-q', '-b', 'feature', cli.url(s.project.path, developer.username, developer.token), dir]);
    const unreviewed = await cli.commit(dir, { 'feature.txt': 'unreviewed\n' }, 'unreviewed change');
    await cli.ok(['push', '-q', 'origin', 'feature'], dir);
    await runBuildOf(runner.token, s.project.id, unreviewed);
    await afterSuccessOf(s.project.id, unreviewed);
    await expectCalledOff(s.project.id, s.mrUrl, s.masterHead, developer);
    // and the approved head's own build succeeding later does not bring it back
    await runBuildOf(runner.token, s.project.id, s.head);
    await afterSuccessOf(s.project.id, s.head);
    expect((await api(master, 'get', s.mrUrl).expect(200)).body).toMatchObject({ state: 'opened', merge_when_build_succeeds: false });
  });

  it('a developer pushes over SSH after the master set it: the new head’s green build merges nothing', async () => {
    const s = await setup();
    await setMergeWhenBuildSucceeds(s.mrUrl);
    const dir = join(tmp, `ssh-clone-${s.project.id}`);
    const ok = async (args: string[], cwd?: string) => {
      const r = await sshCli.git(developerKey, args, cwd);
      if (r.code !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
    };
    await ok(['clone', '-q', '-b', 'feature', sshCli.url(s.project.path), dir]);
    const unreviewed = await cli.commit(dir, { 'feature.txt': 'unreviewed over ssh\n' }, 'unreviewed change');
    await ok(['push', '-q', 'origin', 'feature'], dir);
    await runBuildOf(runner.token, s.project.id, unreviewed);
    await afterSuccessOf(s.project.id, unreviewed);
    await expectCalledOff(s.project.id, s.mrUrl, s.masterHead, developer);
  });

  it('a developer commits through the files API after the master set it: the new head’s green build merges nothing', async () => {
    const s = await setup();
    await setMergeWhenBuildSucceeds(s.mrUrl);
    await api(developer, 'put', `/projects/${s.project.id}/repository/files`)
      .send({ file_path: 'feature.txt', branch_name: 'feature', content: 'unreviewed\n', commit_message: 'unreviewed change' })
      .expect(200);
    const unreviewed = (await api(developer, 'get', `/projects/${s.project.id}/repository/commits/feature`).expect(200)).body.id;
    expect(unreviewed).not.toBe(s.head);
    await runBuildOf(runner.token, s.project.id, unreviewed);
    await afterSuccessOf(s.project.id, unreviewed);
    await expectCalledOff(s.project.id, s.mrUrl, s.masterHead, developer);
  });

  it('the branch is deleted and re-created at another commit through the branches API: called off', async () => {
    const s = await setup();
    await setMergeWhenBuildSucceeds(s.mrUrl);
    await t.http.delete(`/api/v3/projects/${s.project.id}/repository/branches/feature`).set('PRIVATE-TOKEN', developer.token).expect(200);
    await api(developer, 'post', `/projects/${s.project.id}/repository/branches`).send({ branch_name: 'feature', ref: 'master' }).expect(201);
    await expectCalledOff(s.project.id, s.mrUrl, s.masterHead, developer);
  });

  it('from a fork: its owner pushes to the fork’s branch and makes the build green on their own runner; nothing is merged', async () => {
    const up = await c.project(owner, YML, { visibility_level: 10 });
    await api(owner, 'post', `/projects/${up.id}/members`).send({ user_id: master.id, access_level: 40 }).expect(201);
    const fork = (await api(forker, 'post', `/projects/fork/${up.id}`).expect(201)).body;
    const forkRunnersToken = (await api(forker, 'get', `/projects/${fork.id}`).expect(200)).body.runners_token;
    const own = await c.api.register({ token: forkRunnersToken });
    expect(own.status).toBe(201);
    const forkRunner = own.body.token as string;
    const dir = join(tmp, `fork-${fork.id}`);
    await cli.ok(['clone', '-q', cli.url(fork.path_with_namespace, forker.username, forker.token), dir]);
    await cli.ok(['checkout', '-q', '-b', 'from-fork'], dir);
    const reviewed = await cli.commit(dir, { 'fork.txt': 'reviewed\n' }, 'reviewed change');
    await cli.ok(['push', '-q', 'origin', 'from-fork'], dir);
    await waitFor(async () => (await c.pipelines(fork.id)).find((pl) => pl.sha === reviewed && pl.status === 'pending'), 'fork pipeline');
    const mr = (
      await api(forker, 'post', `/projects/${fork.id}/merge_requests`)
        .send({ source_branch: 'from-fork', target_branch: 'master', title: 'From the fork', target_project_id: up.id })
        .expect(201)
    ).body;
    const mrUrl = `/projects/${up.id}/merge_requests/${mr.id}`;
    await setMergeWhenBuildSucceeds(mrUrl);
    const unreviewed = await cli.commit(dir, { 'fork.txt': 'unreviewed\n' }, 'unreviewed change');
    await cli.ok(['push', '-q', 'origin', 'from-fork'], dir);
    await runBuildOf(forkRunner, fork.id, unreviewed);
    await afterSuccessOf(fork.id, unreviewed);
    await expectCalledOff(up.id, mrUrl, up.sha, forker);
  });

  it('merges exactly the approved sha: a source head that moved without a push (no reaction) is not merged, and the flag is cleared', async () => {
    const s = await setup();
    await setMergeWhenBuildSucceeds(s.mrUrl);
    // another commit, on another branch, with its own (green) build
    await api(developer, 'post', `/projects/${s.project.id}/repository/branches`).send({ branch_name: 'other', ref: 'feature' }).expect(201);
    await api(developer, 'put', `/projects/${s.project.id}/repository/files`)
      .send({ file_path: 'feature.txt', branch_name: 'other', content: 'unreviewed\n', commit_message: 'unreviewed change' })
      .expect(200);
    const unreviewed = (await api(developer, 'get', `/projects/${s.project.id}/repository/commits/other`).expect(200)).body.id;
    // the source branch moves to it behind the push pipeline's back (a transport that forgot it, or
    // the reaction not run yet): only the compare-and-swap on the approved sha stands in the way
    const gitDir = t.app.app.get(GitService).repositoryPath(s.project.id);
    await promisify(execFile)('git', ['--git-dir', gitDir, 'update-ref', 'refs/heads/feature', unreviewed, s.head]);
    await runBuildOf(runner.token, s.project.id, unreviewed);
    await afterSuccessOf(s.project.id, unreviewed);
    await expectCalledOff(s.project.id, s.mrUrl, s.masterHead, master);
  });

  it('when the approved head’s build succeeds, the approved sha is what is merged', async () => {
    const s = await setup();
    await setMergeWhenBuildSucceeds(s.mrUrl);
    const [row] = await t.sql<Json>(`SELECT merge_when_build_succeeds_sha FROM merge_requests WHERE id = $1`, [s.mr.id]);
    expect(row.merge_when_build_succeeds_sha).toBe(s.head);
    await runBuildOf(runner.token, s.project.id, s.head);
    const merged = await waitFor(async () => {
      const res = await api(master, 'get', s.mrUrl).expect(200);
      return res.body.state === 'merged' ? res.body : undefined;
    }, 'merged');
    expect(merged.merge_when_build_succeeds).toBe(false);
    const tip = (await api(master, 'get', `/projects/${s.project.id}/repository/commits/master`).expect(200)).body;
    expect(tip.parent_ids).toEqual([s.masterHead, s.head]);
  });

  it('PUT .../merge with the reviewed `sha`: 409 once the source moved on (nothing merged), that very sha merged otherwise', async () => {
    const s = await setup();
    await api(developer, 'put', `/projects/${s.project.id}/repository/files`)
      .send({ file_path: 'feature.txt', branch_name: 'feature', content: 'unreviewed\n', commit_message: 'unreviewed change' })
      .expect(200);
    const moved = (await api(developer, 'get', `/projects/${s.project.id}/repository/commits/feature`).expect(200)).body.id;
    for (const body of [{ sha: s.head }, { sha: s.head, merge_when_build_succeeds: true }]) {
      const res = await api(master, 'put', `${s.mrUrl}/merge`).send(body).expect(409);
      expect(res.body).toEqual({ message: `409 SHA does not match HEAD of source branch: ${moved}` });
    }
    expect((await api(master, 'get', s.mrUrl).expect(200)).body).toMatchObject({ state: 'opened', merge_when_build_succeeds: false });
    expect((await api(master, 'get', `/projects/${s.project.id}/repository/commits/master`).expect(200)).body.id).toBe(s.masterHead);
    const merged = await api(master, 'put', `${s.mrUrl}/merge`).send({ sha: moved.toUpperCase() }).expect(200);
    expect(merged.body.state).toBe('merged');
    const tip = (await api(master, 'get', `/projects/${s.project.id}/repository/commits/master`).expect(200)).body;
    expect(tip.parent_ids).toEqual([s.masterHead, moved]);
  });

  it('a merging user blocked since is not acted for: the approved head’s green build merges nothing', async () => {
    const s = await setup();
    const gone = await t.createUser();
    await api(owner, 'post', `/projects/${s.project.id}/members`).send({ user_id: gone.id, access_level: 40 }).expect(201);
    await api(gone, 'put', `${s.mrUrl}/merge`).send({ merge_when_build_succeeds: true }).expect(200);
    await api(t.root, 'put', `/users/${gone.id}/block`).expect(200);
    await runBuildOf(runner.token, s.project.id, s.head);
    await afterSuccessOf(s.project.id, s.head);
    expect((await api(master, 'get', s.mrUrl).expect(200)).body.state).toBe('opened');
    expect((await api(master, 'get', `/projects/${s.project.id}/repository/commits/master`).expect(200)).body.id).toBe(s.masterHead);
  });

  it('changing the target branch calls the automatic merge off (it was approved into the old target)', async () => {
    const s = await setup();
    await api(owner, 'post', `/projects/${s.project.id}/repository/branches`).send({ branch_name: 'production', ref: 'master' }).expect(201);
    await setMergeWhenBuildSucceeds(s.mrUrl);
    const res = await api(developer, 'put', s.mrUrl).send({ target_branch: 'production' }).expect(200);
    expect(res.body).toMatchObject({ target_branch: 'production', merge_when_build_succeeds: false });
    await expectCalledOff(s.project.id, s.mrUrl, s.masterHead, developer);
  });
});
