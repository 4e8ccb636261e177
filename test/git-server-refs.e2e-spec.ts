import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Test } from 'supertest';
import { GitCli } from './helpers/git-cli';
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

  beforeAll(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'glv3-server-refs-'));
    t = await startTestApp();
    cli = await GitCli.listen(t, tmp);
    alice = await t.createUser({ username: 'alice', name: 'Alice', projects_limit: 100 });
    bob = await t.createUser({ username: 'bob', name: 'Bob' });
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
});
