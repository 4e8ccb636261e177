import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Test } from 'supertest';
import { GitService } from '../src/git/git.service';
import { SshServerService } from '../src/ssh/ssh-server.service';
import { GitCli } from './helpers/git-cli';
import { SshCli } from './helpers/ssh-cli';
import { startTestApp, TestApp, TestUser } from './helpers/test-app';

const API = '/api/v3';

type Json = Record<string, any>;

/**
 * Refs the server keeps itself (issue 39 items 5 and 6), with the stock git CLI over smart HTTP:
 * `git push --mirror` of a clone of a GitLab repository lands its branches and tags and has its
 * server-managed refs (refs/merge-requests/, refs/keep-around/, refs/environments/, refs/pipelines/)
 * refused one by one with git's per-ref status; protected-branch and tag rules still apply ref by ref.
 */
describe('server-managed refs', () => {
  let t: TestApp;
  let cli: GitCli;
  let tmp: string;
  let alice: TestUser; // owner (master rights)
  let bob: TestUser; // developer
  let carol: TestUser; // reporter
  let dave: TestUser; // no member

  const as = (u: TestUser, req: Test) => req.set('PRIVATE-TOKEN', u.token);
  let dirSeq = 0;
  const newDir = (name: string) => {
    const d = join(tmp, `${++dirSeq}-${name}`);
    mkdirSync(d, { recursive: true });
    return d;
  };
  const ok = (args: string[], cwd?: string) => cli.ok(args, cwd);
  const url = (path: string, u: TestUser) => cli.url(path, u.username, u.token);

  async function createProject(owner: TestUser, name: string, extra: Json = {}): Promise<Json> {
    const res = await as(owner, t.http.post(`${API}/projects`)).send({ name, visibility_level: 0, ...extra });
    if (res.status !== 201) throw new Error(`create project: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  }

  /** The refs the server has, as `ref → sha` (ls-remote as alice). */
  async function remoteRefs(path: string): Promise<Record<string, string>> {
    const out = await ok(['ls-remote', url(path, alice)]);
    return Object.fromEntries(
      out
        .split('\n')
        .filter(Boolean)
        .map((l) => l.split('\t').reverse()),
    );
  }

  async function until<T>(fn: () => Promise<T>, done: (v: T) => boolean, ms = 10_000): Promise<T> {
    const end = Date.now() + ms;
    for (;;) {
      const v = await fn();
      if (done(v) || Date.now() > end) return v;
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  beforeAll(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'glv3-server-refs-'));
    t = await startTestApp({ SSH_ENABLED: 'true', SSH_PORT: '0', SSH_LISTEN: '127.0.0.1', GIT_AUTH_BAN_IP_WHITELIST: '' });
    cli = await GitCli.listen(t, tmp);
    alice = await t.createUser({ username: 'alice', name: 'Alice', projects_limit: 100 });
    bob = await t.createUser({ username: 'bob', name: 'Bob' });
    carol = await t.createUser({ username: 'carol', name: 'Carol' });
    dave = await t.createUser({ username: 'dave', name: 'Dave', projects_limit: 10 });
  });
  afterAll(async () => {
    await t.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  describe('git push --mirror', () => {
    let work: string;
    let c1: string;
    let c2: string;

    beforeAll(async () => {
      // "a clone of a GitLab repository": branches, a tag, and the refs GitLab keeps beside them
      work = newDir('clone');
      await ok(['init', '-q', work]);
      c1 = await cli.commit(work, { 'README.md': 'one\n' }, 'one');
      c2 = await cli.commit(work, { 'README.md': 'two\n' }, 'two');
      await ok(['branch', 'feature', c1], work);
      await ok(['tag', 'v1.0', c1], work);
      await ok(['update-ref', 'refs/merge-requests/1/head', c2], work);
      await ok(['update-ref', `refs/keep-around/${c1}`, c1], work);
      await ok(['update-ref', 'refs/environments/production/deployments/1', c1], work);
      await ok(['update-ref', 'refs/pipelines/7', c2], work);
    });

    it('lands the branches and tags; each server-managed ref is rejected alone with its reason', async () => {
      const p = await createProject(alice, 'mirror');
      const r = await cli.run(['push', '--porcelain', '--mirror', url('alice/mirror', alice)], work);
      expect(r.code).toBe(1); // git says some refs were rejected
      expect(r.stdout).toContain(`*\trefs/heads/master:refs/heads/master\t[new branch]`);
      expect(r.stdout).toContain(`*\trefs/heads/feature:refs/heads/feature\t[new branch]`);
      expect(r.stdout).toContain(`*\trefs/tags/v1.0:refs/tags/v1.0\t[new tag]`);
      for (const ref of ['refs/merge-requests/1/head', `refs/keep-around/${c1}`, 'refs/environments/production/deployments/1', 'refs/pipelines/7']) {
        expect(r.stdout).toContain(`!\t${ref}:${ref}\t[remote rejected] (hook declined)`);
        expect(r.stderr).toContain(`remote: GitLab: You are not allowed to push to ${ref}`);
      }
      expect(await remoteRefs('alice/mirror')).toEqual({ HEAD: c2, 'refs/heads/master': c2, 'refs/heads/feature': c1, 'refs/tags/v1.0': c1 });
      // the push was processed as one: the first branch became the default one and is protected
      const proj = await as(alice, t.http.get(`${API}/projects/${p.id}`)).expect(200);
      expect(proj.body.default_branch).toBe('master');
      const b = await as(alice, t.http.get(`${API}/projects/${p.id}/repository/branches/master`)).expect(200);
      expect(b.body).toMatchObject({ protected: true, commit: { id: c2 } });
    });

    it('over SSH (stock OpenSSH) the same: branches and tags land, server-managed refs are rejected one by one', async () => {
      const ssh = SshCli.of(t.app.app.get(SshServerService), tmp);
      const key = await ssh.keygen('alice-mirror');
      await as(alice, t.http.post(`${API}/user/keys`))
        .send({ title: 'mirror', key: key.pub })
        .expect(201);
      await createProject(alice, 'mirror-ssh');
      const r = await ssh.git(key.file, ['push', '--porcelain', '--mirror', ssh.url('alice/mirror-ssh')], work);
      expect(r.code).toBe(1);
      expect(r.stdout).toContain(`*\trefs/heads/master:refs/heads/master\t[new branch]`);
      expect(r.stdout).toContain(`*\trefs/tags/v1.0:refs/tags/v1.0\t[new tag]`);
      expect(r.stdout).toContain(`!\trefs/merge-requests/1/head:refs/merge-requests/1/head\t[remote rejected] (hook declined)`);
      expect(r.stdout).toContain(`!\trefs/keep-around/${c1}:refs/keep-around/${c1}\t[remote rejected] (hook declined)`);
      expect(r.stderr).toContain('remote: GitLab: You are not allowed to push to refs/pipelines/7');
      expect(await remoteRefs('alice/mirror-ssh')).toEqual({ HEAD: c2, 'refs/heads/master': c2, 'refs/heads/feature': c1, 'refs/tags/v1.0': c1 });
    });

    it('protected-branch and tag rules still apply ref by ref: a developer lands the rest', async () => {
      const p = await createProject(alice, 'mirror-dev');
      await as(alice, t.http.post(`${API}/projects/${p.id}/members`))
        .send({ user_id: bob.id, access_level: 30 })
        .expect(201);
      await ok(['push', '-q', url('alice/mirror-dev', alice), `${c1}:refs/heads/master`, `${c2}:refs/tags/v1.0`], work);
      await as(alice, t.http.put(`${API}/projects/${p.id}/repository/branches/master/protect`))
        .send({ developers_can_push: false })
        .expect(200);
      const r = await cli.run(['push', '--porcelain', '--mirror', url('alice/mirror-dev', bob)], work);
      expect(r.code).toBe(1);
      expect(r.stdout).toContain(`!\trefs/heads/master:refs/heads/master\t[remote rejected] (hook declined)`);
      expect(r.stderr).toContain('remote: GitLab: You are not allowed to push code to protected branches on this project.');
      expect(r.stdout).toContain(`!\trefs/tags/v1.0:refs/tags/v1.0\t[remote rejected] (hook declined)`);
      expect(r.stderr).toContain('remote: GitLab: You are not allowed to change existing tags on this project.');
      expect(r.stdout).toContain(`*\trefs/heads/feature:refs/heads/feature\t[new branch]`);
      expect(r.stdout).toContain(`!\trefs/merge-requests/1/head:refs/merge-requests/1/head\t[remote rejected] (hook declined)`);
      expect(await remoteRefs('alice/mirror-dev')).toEqual({ HEAD: c1, 'refs/heads/master': c1, 'refs/heads/feature': c1, 'refs/tags/v1.0': c2 });
    });
  });

  describe('refs/merge-requests/:iid/head and refs/keep-around/<sha>', () => {
    let p: Json;
    let work: string;
    let base: string;
    let first: string;
    let mrId: number; // v3 names a merge request by its id

    beforeAll(async () => {
      p = await createProject(alice, 'reviewed');
      for (const [u, level] of [
        [bob, 30],
        [carol, 20],
      ] as const) {
        await as(alice, t.http.post(`${API}/projects/${p.id}/members`))
          .send({ user_id: u.id, access_level: level })
          .expect(201);
      }
      work = newDir('reviewed');
      await ok(['init', '-q', work]);
      base = await cli.commit(work, { 'README.md': 'base\n' }, 'base');
      await ok(['push', '-q', url('alice/reviewed', alice), 'master'], work);
      await ok(['checkout', '-q', '-b', 'feature'], work);
      first = await cli.commit(work, { 'feature.txt': 'first\n' }, 'first try');
      await ok(['push', '-q', url('alice/reviewed', bob), 'feature'], work);
    });

    it('are written when a merge request is created, and a reader fetches the head', async () => {
      const mr = (
        await as(bob, t.http.post(`${API}/projects/${p.id}/merge_requests`))
          .send({ source_branch: 'feature', target_branch: 'master', title: 'Feature' })
          .expect(201)
      ).body;
      expect(mr.iid).toBe(1);
      mrId = mr.id;
      const refs = await remoteRefs('alice/reviewed');
      expect(refs['refs/merge-requests/1/head']).toBe(first);
      expect(refs[`refs/keep-around/${first}`]).toBe(first);
      expect(refs[`refs/keep-around/${base}`]).toBe(base); // the merge base
      // a reporter (read access) fetches it, as reviewers and CI do
      const review = newDir('review');
      await ok(['init', '-q', review]);
      await ok(['fetch', '-q', url('alice/reviewed', carol), 'refs/merge-requests/1/head'], review);
      expect((await ok(['rev-parse', 'FETCH_HEAD'], review)).trim()).toBe(first);
      // someone who cannot see the private project cannot
      const r = await cli.run(['fetch', '-q', url('alice/reviewed', dave), 'refs/merge-requests/1/head'], review);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toMatch(/not found|404/i);
    });

    it('follow the source branch; a force-pushed-away commit survives housekeeping', async () => {
      await ok(['reset', '-q', '--hard', base], work);
      const second = await cli.commit(work, { 'feature.txt': 'second\n' }, 'second try');
      await ok(['push', '-q', '--force', url('alice/reviewed', bob), 'feature'], work);
      const refs = await until(
        () => remoteRefs('alice/reviewed'),
        (r) => r[`refs/keep-around/${second}`] === second, // written after the head ref
      );
      expect(refs['refs/merge-requests/1/head']).toBe(second);
      expect(refs[`refs/keep-around/${second}`]).toBe(second);
      expect(refs[`refs/keep-around/${first}`]).toBe(first);
      // gc as housekeeping runs it: the first try, on no branch any more, is kept
      const gitDir = t.app.app.get(GitService).repositoryPath(p.id);
      execFileSync('git', ['--git-dir', gitDir, 'gc', '-q', '--prune=now']);
      expect(execFileSync('git', ['--git-dir', gitDir, 'cat-file', '-t', first], { encoding: 'utf8' }).trim()).toBe('commit');
      // and a push cannot move them
      const r = await cli.run(
        ['push', '--porcelain', '--force', url('alice/reviewed', alice), `${base}:refs/merge-requests/1/head`, `${base}:refs/keep-around/${first}`],
        work,
      );
      expect(r.code).toBe(1);
      expect(r.stdout).toContain('[remote rejected] (hook declined)');
      const after = await remoteRefs('alice/reviewed');
      expect(after['refs/merge-requests/1/head']).toBe(second);
      expect(after[`refs/keep-around/${first}`]).toBe(first);
    });

    it('a merge keeps its merge commit around; the head ref stays', async () => {
      const merged = (await as(alice, t.http.put(`${API}/projects/${p.id}/merge_requests/${mrId}/merge`)).expect(200)).body;
      expect(merged.state).toBe('merged');
      const refs = await remoteRefs('alice/reviewed');
      const sha = refs['refs/heads/master'];
      expect(sha).not.toBe(base); // the merge commit
      expect(refs[`refs/keep-around/${sha}`]).toBe(sha);
      expect(refs['refs/merge-requests/1/head']).toBe(refs['refs/heads/feature']);
    });

    it("from a fork: the fork's commits are fetched into the target, and follow later pushes to the fork", async () => {
      const pub = await createProject(alice, 'upstream', { visibility_level: 20 });
      await ok(['push', '-q', url('alice/upstream', alice), `${base}:refs/heads/master`], work);
      const fork = (await as(dave, t.http.post(`${API}/projects/fork/${pub.id}`)).expect(201)).body;
      const forked = newDir('forked');
      await ok(['init', '-q', forked]);
      await ok(['fetch', '-q', url('alice/upstream', dave), 'master:upstream'], forked);
      await ok(['checkout', '-q', '-b', 'fix', 'upstream'], forked);
      const one = await cli.commit(forked, { 'fix.txt': 'one\n' }, 'fix one');
      await ok(['push', '-q', url(fork.path_with_namespace, dave), 'fix'], forked);
      const mr = (
        await as(dave, t.http.post(`${API}/projects/${fork.id}/merge_requests`))
          .send({ source_branch: 'fix', target_branch: 'master', title: 'Fix', target_project_id: pub.id })
          .expect(201)
      ).body;
      const ref = `refs/merge-requests/${mr.iid}/head`;
      expect((await remoteRefs('alice/upstream'))[ref]).toBe(one);
      const two = await cli.commit(forked, { 'fix.txt': 'two\n' }, 'fix two');
      await ok(['push', '-q', url(fork.path_with_namespace, dave), 'fix'], forked);
      const refs = await until(
        () => remoteRefs('alice/upstream'),
        (r) => r[`refs/keep-around/${two}`] === two,
      );
      expect(refs[ref]).toBe(two);
      expect(refs[`refs/keep-around/${two}`]).toBe(two);
      // an anonymous reader of the public upstream fetches it
      const anon = newDir('anon');
      await ok(['init', '-q', anon]);
      await ok(['fetch', '-q', cli.url('alice/upstream'), ref], anon);
      expect((await ok(['rev-parse', 'FETCH_HEAD'], anon)).trim()).toBe(two);
    });
  });

  describe('pipelines keep their commits around', () => {
    it('the sha of a pushed pipeline gets refs/keep-around/<sha> and survives a force push and gc (8.17 Ci::Pipeline#keep_around_commits)', async () => {
      const p = await createProject(alice, 'built');
      const work = newDir('built');
      await ok(['init', '-q', work]);
      const built = await cli.commit(work, { '.gitlab-ci.yml': 'rspec:\n  script: echo hi\n' }, 'with ci');
      await ok(['push', '-q', url('alice/built', alice), 'master'], work);
      await ok(['push', '-q', url('alice/built', alice), 'master:topic'], work);
      const pipelines = await until(
        async () => (await as(alice, t.http.get(`${API}/projects/${p.id}/pipelines`))).body as Json[],
        (v) => Array.isArray(v) && v.length > 0,
      );
      expect(pipelines[0].sha).toBe(built);
      const refs = await until(
        () => remoteRefs('alice/built'),
        (r) => r[`refs/keep-around/${built}`] === built,
      );
      expect(refs[`refs/keep-around/${built}`]).toBe(built);
      // rewrite both branches so the built commit is on none; the server's gc keeps it
      await ok(['checkout', '-q', '--orphan', 'other'], work);
      await cli.commit(work, { 'other.txt': 'x\n' }, 'rewritten');
      await as(alice, t.http.put(`${API}/projects/${p.id}/repository/branches/master/unprotect`)).expect(200);
      await ok(['push', '-q', '-f', url('alice/built', alice), 'other:master', 'other:topic'], work);
      expect(Object.values(await remoteRefs('alice/built')).filter((sha) => sha === built)).toEqual([built]); // the keep-around ref alone
      const gitDir = t.app.app.get(GitService).repositoryPath(p.id);
      execFileSync('git', ['--git-dir', gitDir, 'gc', '-q', '--prune=now']);
      expect(execFileSync('git', ['--git-dir', gitDir, 'cat-file', '-t', built]).toString().trim()).toBe('commit');
    });
  });
});
