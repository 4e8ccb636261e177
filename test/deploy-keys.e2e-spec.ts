import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SshServerService } from '../src/ssh/ssh-server.service';
import { waitFor } from './helpers/ci';
import { expectSchema } from './helpers/schema';
import { Multiplexed, SshCli } from './helpers/ssh-cli';
import { startTestApp, TestApp, TestUser } from './helpers/test-app';

const API = '/api/v3';
const NOT_FOUND = 'GitLab: The project you were looking for could not be found.';

interface Project {
  id: number;
  path_with_namespace: string;
}

/**
 * Deploy keys (issue 39, item 1): v3's routes (lib/api/v3/deploy_keys.rb of GitLab 8.17, with its
 * `/projects/:id/keys` alias) and git over SSH with a deploy key, through the stock OpenSSH client.
 */
describe('deploy keys', () => {
  let t: TestApp;
  let dir: string;
  let cli: SshCli;
  let owner: TestUser; // owner of p1 and p2
  let developer: TestUser; // developer of p1
  let outsider: TestUser; // no membership in p1; owner of p3
  let p1: Project;
  let p2: Project;
  let p3: Project;
  let ownerKey: { file: string; pub: string };
  let deployKey: { file: string; pub: string };
  let deployKeyId: number;
  const masters: Multiplexed[] = [];

  const as = (u: TestUser) => ({ 'PRIVATE-TOKEN': u.token });
  const project = async (u: TestUser, name: string, visibility = 0): Promise<Project> =>
    (await t.http.post(`${API}/projects`).set(as(u)).send({ name, visibility_level: visibility }).expect(201)).body as Project;
  const keyIds = async (p: Project, u: TestUser = owner): Promise<number[]> =>
    ((await t.http.get(`${API}/projects/${p.id}/deploy_keys`).set(as(u)).expect(200)).body as { id: number }[]).map((k) => k.id);

  beforeAll(async () => {
    t = await startTestApp({ SSH_ENABLED: 'true', SSH_PORT: '0', SSH_LISTEN: '127.0.0.1', GIT_AUTH_BAN_IP_WHITELIST: '' });
    dir = mkdtempSync(join(tmpdir(), 'glv3-deploy-keys-'));
    cli = SshCli.of(t.app.app.get(SshServerService), dir);
    owner = await t.createUser();
    developer = await t.createUser();
    outsider = await t.createUser();
    p1 = await project(owner, 'dk-one');
    p2 = await project(owner, 'dk-two');
    p3 = await project(outsider, 'dk-three');
    await t.http.post(`${API}/projects/${p1.id}/members`).set(as(owner)).send({ user_id: developer.id, access_level: 30 }).expect(201);
    ownerKey = await cli.keygen('owner');
    await t.http.post(`${API}/user/keys`).set(as(owner)).send({ title: 'laptop', key: ownerKey.pub }).expect(201);
    deployKey = await cli.keygen('deploy');
    // p1 gets a commit, pushed by its owner
    const work = join(dir, 'seed');
    expect((await cli.git(ownerKey.file, ['init', '-q', work])).code).toBe(0);
    writeFileSync(join(work, 'README.md'), '# one\n');
    await cli.git(ownerKey.file, ['add', '.'], work);
    await cli.git(ownerKey.file, ['commit', '-qm', 'first'], work);
    expect((await cli.git(ownerKey.file, ['push', '-q', cli.url(p1.path_with_namespace), 'master'], work)).code).toBe(0);
  });

  afterAll(async () => {
    for (const m of masters) await m.exit();
    await t?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  describe('API', () => {
    it('POST /projects/:id/deploy_keys: 201 with the SSHKey fields and can_push false', async () => {
      const res = await t.http
        .post(`${API}/projects/${p1.id}/deploy_keys`)
        .set(as(owner))
        .send({ title: 'deploy box', key: `  ${deployKey.pub}\n` })
        .expect(201);
      await expectSchema(res, 'DeployKey');
      expect(Object.keys(res.body)).toEqual(['id', 'title', 'key', 'created_at', 'can_push']);
      expect(res.body).toMatchObject({ title: 'deploy box', key: deployKey.pub, can_push: false });
      deployKeyId = res.body.id;
      expect(await keyIds(p1)).toEqual([deployKeyId]);
    });

    it('POST of a key already enabled here answers it again (201), nothing added', async () => {
      const res = await t.http.post(`${API}/projects/${p1.id}/deploy_keys`).set(as(owner)).send({ title: 'again', key: deployKey.pub }).expect(201);
      expect(res.body).toMatchObject({ id: deployKeyId, title: 'deploy box' });
      expect(await keyIds(p1)).toEqual([deployKeyId]);
      const all = await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM keys WHERE type = 'DeployKey'`);
      expect(all[0].n).toBe(1);
    });

    it('POST of a deploy key of another project the caller is a member of enables that key (one key, two projects)', async () => {
      const res = await t.http.post(`${API}/projects/${p2.id}/keys`).set(as(owner)).send({ title: 'other title', key: deployKey.pub }).expect(201);
      expect(res.body.id).toBe(deployKeyId);
      expect(await keyIds(p2)).toEqual([deployKeyId]);
    });

    it('the same key as a user key, or a deploy key out of reach: 400 fingerprint has already been taken, nothing stored', async () => {
      const before = await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM keys`);
      const asUserKey = await t.http.post(`${API}/projects/${p1.id}/deploy_keys`).set(as(owner)).send({ title: 'mine', key: ownerKey.pub }).expect(400);
      expect(asUserKey.body).toEqual({ message: { fingerprint: ['has already been taken'], key: ['has already been taken'] } });
      // the outsider is no member of p1 or p2: the deploy key is not theirs to reuse
      const outOfReach = await t.http.post(`${API}/projects/${p3.id}/deploy_keys`).set(as(outsider)).send({ title: 'x', key: deployKey.pub }).expect(400);
      expect(outOfReach.body.message.fingerprint).toEqual(['has already been taken']);
      // and the other way round: a deploy key cannot become a user's key
      const userKey = await t.http.post(`${API}/user/keys`).set(as(outsider)).send({ title: 'stolen', key: deployKey.pub }).expect(400);
      expect(userKey.body.message.fingerprint).toEqual(['has already been taken']);
      expect(await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM keys`)).toEqual(before);
      expect(await keyIds(p3, outsider)).toEqual([]);
    });

    it('bad input: 400 for a missing key or title, an invalid key, a DSA key', async () => {
      const missingKey = await t.http.post(`${API}/projects/${p1.id}/deploy_keys`).set(as(owner)).send({ title: 'x' }).expect(400);
      expect(JSON.stringify(missingKey.body)).toContain('key');
      await t.http.post(`${API}/projects/${p1.id}/deploy_keys`).set(as(owner)).send({ key: deployKey.pub }).expect(400);
      const invalid = await t.http.post(`${API}/projects/${p1.id}/deploy_keys`).set(as(owner)).send({ title: 'x', key: 'ssh-rsa garbage' }).expect(400);
      expect(invalid.body).toEqual({ message: { key: ['is invalid'], fingerprint: ['cannot be generated'] } });
      const dsa = await cli.keygen('dsa', 'dsa').catch(() => undefined); // OpenSSH builds without DSA cannot make one
      if (dsa) await t.http.post(`${API}/projects/${p1.id}/deploy_keys`).set(as(owner)).send({ title: 'x', key: dsa.pub }).expect(400);
      expect(await keyIds(p1)).toEqual([deployKeyId]);
    });

    it('GET list and one key, under deploy_keys and keys; another id is 404 Not found', async () => {
      for (const path of ['deploy_keys', 'keys']) {
        const list = await t.http.get(`${API}/projects/${p1.id}/${path}`).set(as(owner)).expect(200);
        await expectSchema(list, 'DeployKey[]');
        expect(list.body.map((k: { title: string }) => k.title)).toEqual(['deploy box']);
        const one = await t.http
          .get(`${API}/projects/${encodeURIComponent(p1.path_with_namespace)}/${path}/${deployKeyId}`)
          .set(as(owner))
          .expect(200);
        expect(one.body).toMatchObject({ id: deployKeyId, can_push: false });
        const missing = await t.http
          .get(`${API}/projects/${p1.id}/${path}/${deployKeyId + 1000}`)
          .set(as(owner))
          .expect(404);
        expect(missing.body).toEqual({ message: '404 Not found' });
      }
      // enabled on p2, not on p3
      await t.http.get(`${API}/projects/${p3.id}/deploy_keys/${deployKeyId}`).set(as(outsider)).expect(404);
    });

    it('who may manage them: 401 without a token, 404 for a non-member of a private project, 403 for a developer (master needed)', async () => {
      await t.http.get(`${API}/projects/${p1.id}/deploy_keys`).expect(401);
      const hidden = await t.http.get(`${API}/projects/${p1.id}/deploy_keys`).set(as(outsider)).expect(404);
      expect(hidden.body).toEqual({ message: '404 Project Not Found' });
      await t.http.get(`${API}/projects/${p1.id}/deploy_keys`).set(as(developer)).expect(403);
      await t.http.get(`${API}/projects/${p1.id}/keys/${deployKeyId}`).set(as(developer)).expect(403);
      await t.http
        .post(`${API}/projects/${p1.id}/deploy_keys`)
        .set(as(developer))
        .send({ title: 'x', key: (await cli.keygen('dev')).pub })
        .expect(403);
      await t.http.delete(`${API}/projects/${p1.id}/deploy_keys/${deployKeyId}`).set(as(developer)).expect(403);
      await t.http.post(`${API}/projects/${p1.id}/deploy_keys/${deployKeyId}/enable`).set(as(developer)).expect(403);
      await t.http.delete(`${API}/projects/${p1.id}/deploy_keys/${deployKeyId}/disable`).set(as(developer)).expect(403);
      expect(await keyIds(p1)).toEqual([deployKeyId]);
    });

    it('GET /deploy_keys: every deploy key for an administrator, 403 for anyone else, 401 without a token', async () => {
      const all = await t.http.get(`${API}/deploy_keys`).set(as(t.root)).expect(200);
      await expectSchema(all, 'DeployKey[]');
      expect(all.body.map((k: { id: number }) => k.id)).toEqual([deployKeyId]);
      await t.http.get(`${API}/deploy_keys`).set(as(owner)).expect(403);
      await t.http.get(`${API}/deploy_keys`).expect(401);
    });

    it('enable: 404 Deploy Key Not Found for a key out of reach; 201 once the caller is a member of a project that has it', async () => {
      const refused = await t.http.post(`${API}/projects/${p3.id}/deploy_keys/${deployKeyId}/enable`).set(as(outsider)).expect(404);
      expect(refused.body).toEqual({ message: '404 Deploy Key Not Found' });
      await t.http
        .post(`${API}/projects/${p3.id}/deploy_keys/${deployKeyId + 1000}/enable`)
        .set(as(outsider))
        .expect(404);
      expect(await keyIds(p3, outsider)).toEqual([]);
      // a guest of p2 may reuse p2's key on a project of their own (8.17's accessible_deploy_keys)
      await t.http.post(`${API}/projects/${p2.id}/members`).set(as(owner)).send({ user_id: outsider.id, access_level: 10 }).expect(201);
      const enabled = await t.http.post(`${API}/projects/${p3.id}/deploy_keys/${deployKeyId}/enable`).set(as(outsider)).expect(201);
      await expectSchema(enabled, 'DeployKey');
      expect(enabled.body.id).toBe(deployKeyId);
      // enabling again changes nothing
      await t.http.post(`${API}/projects/${p3.id}/deploy_keys/${deployKeyId}/enable`).set(as(outsider)).expect(201);
      expect(await keyIds(p3, outsider)).toEqual([deployKeyId]);
      // an administrator reaches every deploy key
      const p4 = await project(t.root, 'dk-four');
      await t.http.post(`${API}/projects/${p4.id}/keys/${deployKeyId}/enable`).set(as(t.root)).expect(201);
      await t.http.delete(`${API}/projects/${p4.id}/keys/${deployKeyId}/disable`).set(as(t.root)).expect(200);
    });

    it('disable (DELETE, as v3; POST too): 200 with the key, then 404; the key stays enabled elsewhere', async () => {
      const res = await t.http.delete(`${API}/projects/${p3.id}/deploy_keys/${deployKeyId}/disable`).set(as(outsider)).expect(200);
      await expectSchema(res, 'DeployKey');
      expect(res.body.id).toBe(deployKeyId);
      expect(await keyIds(p3, outsider)).toEqual([]);
      const again = await t.http.delete(`${API}/projects/${p3.id}/deploy_keys/${deployKeyId}/disable`).set(as(outsider)).expect(404);
      expect(again.body).toEqual({ message: '404 Deploy Key Not Found' });
      await t.http.post(`${API}/projects/${p3.id}/deploy_keys/${deployKeyId}/enable`).set(as(outsider)).expect(201);
      await t.http.post(`${API}/projects/${p3.id}/deploy_keys/${deployKeyId}/disable`).set(as(outsider)).expect(201);
      expect(await keyIds(p3, outsider)).toEqual([]);
      expect(await keyIds(p1)).toEqual([deployKeyId]);
    });

    it('DELETE /projects/:id/deploy_keys/:key_id answers the removed link; a key on no project is gone and its fingerprint free', async () => {
      const spare = await cli.keygen('spare', 'rsa', 3072);
      const created = await t.http
        .post(`${API}/projects/${p2.id}/deploy_keys`)
        .set(as(owner))
        .send({ title: 'spare', key: spare.pub, can_push: true })
        .expect(201);
      expect(created.body.can_push).toBe(true);
      const res = await t.http.delete(`${API}/projects/${p2.id}/deploy_keys/${created.body.id}`).set(as(owner)).expect(200);
      await expectSchema(res, 'DeployKeysProject');
      expect(res.body).toMatchObject({ deploy_key_id: created.body.id, project_id: p2.id });
      await t.http.delete(`${API}/projects/${p2.id}/deploy_keys/${created.body.id}`).set(as(owner)).expect(404);
      const all = await t.http.get(`${API}/deploy_keys`).set(as(t.root)).expect(200);
      expect(all.body.map((k: { id: number }) => k.id)).not.toContain(created.body.id);
      await t.http.post(`${API}/user/keys`).set(as(outsider)).send({ title: 'now mine', key: spare.pub }).expect(201);
    });
  });

  it('a deleted project takes a deploy key enabled nowhere else with it (8.17 orphans); a key enabled elsewhere stays', async () => {
    const gone = await project(owner, 'dk-deleted');
    const only = await cli.keygen('only-there');
    const k = await t.http.post(`${API}/projects/${gone.id}/deploy_keys`).set(as(owner)).send({ title: 'only', key: only.pub }).expect(201);
    await t.http.post(`${API}/projects/${gone.id}/deploy_keys/${deployKeyId}/enable`).set(as(owner)).expect(201);
    await t.http.delete(`${API}/projects/${gone.id}`).set(as(owner)).expect(200);
    const ids = async () => ((await t.http.get(`${API}/deploy_keys`).set(as(t.root)).expect(200)).body as { id: number }[]).map((x) => x.id);
    await waitFor(async () => !(await ids()).includes(k.body.id) || undefined, 'orphaned deploy key removed');
    expect(await ids()).toContain(deployKeyId);
    await t.http.post(`${API}/user/keys`).set(as(outsider)).send({ title: 'free again', key: only.pub }).expect(201);
  });

  describe('git over SSH with a deploy key', () => {
    let writer: { file: string; pub: string };
    let writerId: number;

    beforeAll(async () => {
      writer = await cli.keygen('writer', 'ecdsa');
      const res = await t.http.post(`${API}/projects/${p1.id}/deploy_keys`).set(as(owner)).send({ title: 'ci', key: writer.pub, can_push: true }).expect(201);
      writerId = res.body.id;
    });

    it('`ssh -T` greets a deploy key as nobody', async () => {
      const r = await cli.ssh(deployKey.file, ['-T', 'git@127.0.0.1']);
      expect(r.stdout).toBe('Welcome to GitLab, Anonymous!\n');
      expect(r.code).toBe(0);
    });

    it('clones a project it is enabled on; cannot push without can_push', async () => {
      const work = join(dir, 'ro');
      const clone = await cli.git(deployKey.file, ['clone', '-q', cli.url(p1.path_with_namespace), work]);
      expect(clone.code).toBe(0);
      writeFileSync(join(work, 'ro.txt'), 'ro\n');
      await cli.git(deployKey.file, ['add', '.'], work);
      await cli.git(deployKey.file, ['commit', '-qm', 'ro'], work);
      const push = await cli.git(deployKey.file, ['push', 'origin', 'HEAD:refs/heads/ro'], work);
      expect(push.code).not.toBe(0);
      expect(push.stderr).toContain('GitLab: This deploy key does not have write access to this project.');
    });

    it('a project it is not enabled on is not found, whatever its visibility', async () => {
      const open = await project(owner, 'dk-public', 20);
      for (const path of [p3.path_with_namespace, open.path_with_namespace, `${owner.username}/no-such-project`]) {
        const r = await cli.git(deployKey.file, ['ls-remote', cli.url(path)]);
        expect(r.code).not.toBe(0);
        expect(r.stderr).toContain(NOT_FOUND);
      }
    });

    it('with can_push: pushes a branch and creates a tag; not a protected branch, unless developers may push to it; never moves a tag', async () => {
      const work = join(dir, 'rw');
      expect((await cli.git(writer.file, ['clone', '-q', cli.url(p1.path_with_namespace), work])).code).toBe(0);
      writeFileSync(join(work, 'rw.txt'), 'rw\n');
      await cli.git(writer.file, ['add', '.'], work);
      await cli.git(writer.file, ['commit', '-qm', 'by the deploy key'], work);
      const branch = await cli.git(writer.file, ['push', 'origin', 'HEAD:refs/heads/deploy'], work);
      expect(branch.code).toBe(0);
      expect((await cli.git(writer.file, ['push', 'origin', 'HEAD:refs/tags/v1'], work)).code).toBe(0);
      await cli.git(writer.file, ['commit', '-qm', 'more', '--allow-empty'], work);
      const moveTag = await cli.git(writer.file, ['push', '-f', 'origin', 'HEAD:refs/tags/v1'], work);
      expect(moveTag.code).not.toBe(0);
      expect(moveTag.stderr).toContain('GitLab: You are not allowed to change existing tags on this project.');

      // master came protected with developers_can_push (default_branch_protection 1): protecting again keeps a flag not given
      await t.http.put(`${API}/projects/${p1.id}/repository/branches/master/protect`).set(as(owner)).send({ developers_can_push: false }).expect(200);
      const refused = await cli.git(writer.file, ['push', 'origin', 'HEAD:master'], work);
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toContain('GitLab: You are not allowed to push code to protected branches on this project.');
      await t.http.put(`${API}/projects/${p1.id}/repository/branches/master/protect`).set(as(owner)).send({ developers_can_push: true }).expect(200);
      expect((await cli.git(writer.file, ['push', 'origin', 'HEAD:master'], work)).code).toBe(0);
      const master = await t.http.get(`${API}/projects/${p1.id}/repository/branches/master`).set(as(owner)).expect(200);
      expect(master.body.commit.message.trim()).toBe('more');
      await t.http.put(`${API}/projects/${p1.id}/repository/branches/master/unprotect`).set(as(owner)).expect(200);
      // as 8.17 (PostReceive found no user for a deploy key): no push event
      const events = await t.http.get(`${API}/projects/${p1.id}/events`).set(as(owner)).expect(200);
      expect(events.body.filter((e: { data?: { ref?: string } }) => e.data?.ref === 'refs/heads/deploy')).toEqual([]);
    });

    it('an archived project is read-only for it', async () => {
      await t.http.post(`${API}/projects/${p1.id}/archive`).set(as(owner)).expect(201);
      const work = join(dir, 'rw');
      const push = await cli.git(writer.file, ['push', 'origin', 'HEAD:refs/heads/archived'], work);
      expect(push.code).not.toBe(0);
      expect(push.stderr).toContain('GitLab: This deploy key does not have write access to this project.');
      expect((await cli.git(writer.file, ['ls-remote', cli.url(p1.path_with_namespace)])).code).toBe(0);
      await t.http.post(`${API}/projects/${p1.id}/unarchive`).set(as(owner)).expect(201);
    });

    it('disabled on a project while a transfer runs there: the connection is closed; the next command there is refused', async () => {
      const mux = new Multiplexed(cli, writer.file, 'writer');
      masters.push(mux);
      expect((await mux.git(['ls-remote', cli.url(p1.path_with_namespace)])).code).toBe(0);
      const held = mux.hold(`git-upload-pack '${p1.path_with_namespace}.git'`);
      expect(await held.advertised()).toBe(true);
      // enabled on p2 as well, so the key itself stays
      await t.http.post(`${API}/projects/${p2.id}/deploy_keys/${writerId}/enable`).set(as(owner)).expect(201);
      await t.http.delete(`${API}/projects/${p1.id}/deploy_keys/${writerId}/disable`).set(as(owner)).expect(200);
      expect((await held.endsWithin(10_000)).ended).toBe(true);
      expect(await mux.closedWithin(5000)).toBe(true);
      const r = await cli.git(writer.file, ['ls-remote', cli.url(p1.path_with_namespace)]);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain(NOT_FOUND);
    });

    it('deleted (its last project): an idle multiplexed connection is closed and the key no longer authenticates', async () => {
      const mux = new Multiplexed(cli, writer.file, 'writer2');
      masters.push(mux);
      expect((await mux.git(['ls-remote', cli.url(p2.path_with_namespace)])).code).toBe(0);
      expect(await mux.alive()).toBe(true);
      await t.http.delete(`${API}/projects/${p2.id}/deploy_keys/${writerId}`).set(as(owner)).expect(200);
      expect(await mux.closedWithin(5000)).toBe(true);
      const greeting = await cli.ssh(writer.file, ['-T', 'git@127.0.0.1']);
      expect(greeting.code).not.toBe(0);
      expect(greeting.stdout).not.toContain('Welcome');
    });

    it('a deploy key is nothing to the API: no token comes from it and its key text authenticates nothing', async () => {
      await t.http.get(`${API}/user`).set('PRIVATE-TOKEN', deployKey.pub).expect(401);
    });
  });
});
