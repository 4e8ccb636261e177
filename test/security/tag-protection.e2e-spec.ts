import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Test } from 'supertest';
import { SshServerService } from '../../src/ssh/ssh-server.service';
import { GitCli } from '../helpers/git-cli';
import { SshCli } from '../helpers/ssh-cli';
import { startTestApp, TestApp, TestUser } from '../helpers/test-app';

const API = '/api/v3';
const CHANGE_TAGS = 'You are not allowed to change existing tags on this project.';

/**
 * Existing tags are moved and deleted by masters and above only, as GitLab 8.17 (its pre-receive
 * `tag_checks`, lib/gitlab/checks/change_access.rb; the permissions table's "Rewrite/remove Git tags"):
 * over git HTTP, git SSH (stock OpenSSH) and the API. Developers still create new tags.
 */
describe('tag protection: developers cannot move or delete existing tags', () => {
  let t: TestApp;
  let tmp: string;
  let http: GitCli;
  let ssh: SshCli;
  let owner: TestUser;
  let dev: TestUser;
  let master: TestUser;
  let devKey: string;
  let masterKey: string;
  let project: { id: number; path_with_namespace: string };
  let c1: string; // the commit tags point at
  let c2: string; // its child, where a forced tag would move to
  let seq = 0;

  const as = (u: TestUser, req: Test) => req.set('PRIVATE-TOKEN', u.token);
  const tagSha = async (name: string) => {
    const res = await as(owner, t.http.get(`${API}/projects/${project.id}/repository/tags/${name}`));
    return res.status === 200 ? (res.body.commit.id as string) : null;
  };

  /** A clone of the project (over HTTP as the owner) holding c1 and c2 locally. */
  async function workTree(): Promise<string> {
    const dir = join(tmp, `w${++seq}`);
    await http.ok(['clone', '-q', http.url(project.path_with_namespace, owner.username, owner.token), dir]);
    return dir;
  }

  /** Makes tag `name` on c1 as the owner (over the API). */
  async function tag(name: string): Promise<void> {
    await as(owner, t.http.post(`${API}/projects/${project.id}/repository/tags`))
      .send({ tag_name: name, ref: c1 })
      .expect(201);
  }

  beforeAll(async () => {
    t = await startTestApp({ SSH_ENABLED: 'true', SSH_PORT: '0', SSH_LISTEN: '127.0.0.1' });
    tmp = mkdtempSync(join(tmpdir(), 'glv3-tags-'));
    http = await GitCli.listen(t, tmp);
    ssh = SshCli.of(t.app.app.get(SshServerService), tmp);
    [owner, dev, master] = [await t.createUser(), await t.createUser(), await t.createUser()];
    const res = await as(owner, t.http.post(`${API}/projects`))
      .send({ name: 'tagged', visibility_level: 0 })
      .expect(201);
    project = res.body;
    for (const [u, level] of [
      [dev, 30],
      [master, 40],
    ] as const) {
      await as(owner, t.http.post(`${API}/projects/${project.id}/members`))
        .send({ user_id: u.id, access_level: level })
        .expect(201);
    }
    for (const [u, name] of [
      [dev, 'dev'],
      [master, 'master'],
    ] as const) {
      const key = await ssh.keygen(name);
      await as(u, t.http.post(`${API}/user/keys`))
        .send({ title: name, key: key.pub })
        .expect(201);
      if (u === dev) devKey = key.file;
      else masterKey = key.file;
    }
    const src = join(tmp, 'src');
    mkdirSync(src);
    await http.ok(['init', '-q', src]);
    c1 = await http.commit(src, { 'a.txt': 'one\n' }, 'one');
    c2 = await http.commit(src, { 'a.txt': 'two\n' }, 'two');
    await http.ok(['push', '-q', http.url(project.path_with_namespace, owner.username, owner.token), 'master'], src);
  });

  afterAll(async () => {
    await t?.close();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  describe.each([
    ['HTTP', (u: TestUser) => http.url(project.path_with_namespace, u.username, u.token), (_u: TestUser, args: string[], cwd: string) => http.run(args, cwd)],
    ['SSH', () => ssh.url(project.path_with_namespace), (u: TestUser, args: string[], cwd: string) => ssh.git(u === dev ? devKey : masterKey, args, cwd)],
  ])('over git %s', (via, remote, git) => {
    it('a developer can neither force-move nor delete an existing tag; the tag stays', async () => {
      const name = `v1-${via}`;
      await tag(name);
      const dir = await workTree();
      const moved = await git(dev, ['push', '--force', remote(dev), `${c2}:refs/tags/${name}`], dir);
      expect(moved.stderr).toContain(`GitLab: ${CHANGE_TAGS}`);
      expect(moved.code).not.toBe(0);
      const deleted = await git(dev, ['push', remote(dev), `:refs/tags/${name}`], dir);
      expect(deleted.stderr).toContain(`GitLab: ${CHANGE_TAGS}`);
      expect(deleted.code).not.toBe(0);
      expect(await tagSha(name)).toBe(c1);
    });

    it('a developer creates a new tag', async () => {
      const dir = await workTree();
      const created = await git(dev, ['push', remote(dev), `${c2}:refs/tags/new-${via}`], dir);
      expect(created.code).toBe(0);
      expect(await tagSha(`new-${via}`)).toBe(c2);
    });

    it('a master moves and deletes an existing tag', async () => {
      const name = `v2-${via}`;
      await tag(name);
      const dir = await workTree();
      expect((await git(master, ['push', '--force', remote(master), `${c2}:refs/tags/${name}`], dir)).code).toBe(0);
      expect(await tagSha(name)).toBe(c2);
      expect((await git(master, ['push', remote(master), `:refs/tags/${name}`], dir)).code).toBe(0);
      expect(await tagSha(name)).toBeNull();
    });
  });

  describe('DELETE /projects/:id/repository/tags/:tag', () => {
    it('DELETE .../tags/:tag by a developer: 403 with GitLab’s words, and the tag (and its release) stay', async () => {
      await as(owner, t.http.post(`${API}/projects/${project.id}/repository/tags`))
        .send({ tag_name: 'api-v1', ref: c1, release_description: 'notes' })
        .expect(201);
      const res = await as(dev, t.http.delete(`${API}/projects/${project.id}/repository/tags/api-v1`)).expect(403);
      expect(res.body).toEqual({ message: `403 ${CHANGE_TAGS}` });
      const kept = await as(dev, t.http.get(`${API}/projects/${project.id}/repository/tags/api-v1`)).expect(200);
      expect(kept.body.commit.id).toBe(c1);
      expect(kept.body.release).toEqual({ tag_name: 'api-v1', description: 'notes' });
    });

    it('a developer still creates tags over the API; a tag that does not exist is a 404 to a developer as before', async () => {
      await as(dev, t.http.post(`${API}/projects/${project.id}/repository/tags`))
        .send({ tag_name: 'api-dev', ref: c2 })
        .expect(201);
      await as(dev, t.http.delete(`${API}/projects/${project.id}/repository/tags/no-such-tag`)).expect(404);
    });

    it('a master deletes a tag', async () => {
      await tag('api-v2');
      const res = await as(master, t.http.delete(`${API}/projects/${project.id}/repository/tags/api-v2`)).expect(200);
      expect(res.body).toEqual({ tag_name: 'api-v2' });
      expect(await tagSha('api-v2')).toBeNull();
    });
  });
});
