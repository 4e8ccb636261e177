import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SshServerService } from '../src/ssh/ssh-server.service';
import { SshCli } from './helpers/ssh-cli';
import { startTestApp, TestApp, TestUser } from './helpers/test-app';

const API = '/api/v3';
const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

/**
 * `git-lfs-authenticate` over the built-in SSH server (gitlab-shell's command with GitLab 8.17's
 * /internal/lfs_authenticate and Gitlab::LfsToken), with the stock OpenSSH client and git-lfs: the JSON
 * it answers, the short-lived token accepted by the batch API, who may ask for what, deploy keys.
 */
describe('Git LFS over SSH (git-lfs-authenticate)', () => {
  let t: TestApp;
  let dir: string;
  let cli: SshCli;
  let httpPort: number;
  let alice: TestUser; // owner
  let carol: TestUser; // reporter
  let dave: TestUser; // non-member
  let project: { id: number; path_with_namespace: string };
  const keys: Record<string, { file: string; pub: string }> = {};
  let deployKeyId: number;

  const lfsAuth = (who: string, path: string, op: string) => cli.ssh(keys[who].file, ['git@127.0.0.1', `git-lfs-authenticate ${path} ${op}`]);
  const batch = (path: string, authorization: string, operation: string, objects: { oid: string; size: number }[]) =>
    t.http
      .post(`/${path}.git/info/lfs/objects/batch`)
      .set('Authorization', authorization)
      .set('Content-Type', 'application/vnd.git-lfs+json')
      .send(JSON.stringify({ operation, objects }));

  beforeAll(async () => {
    httpPort = await freePort();
    t = await startTestApp({
      SSH_ENABLED: 'true',
      SSH_PORT: '0',
      SSH_LISTEN: '127.0.0.1',
      GIT_AUTH_BAN_IP_WHITELIST: '',
      EXTERNAL_URL: `http://127.0.0.1:${httpPort}`,
    });
    await t.app.app.listen(httpPort, '127.0.0.1');
    dir = mkdtempSync(join(tmpdir(), 'glv3-lfs-ssh-'));
    cli = SshCli.of(t.app.app.get(SshServerService), dir);
    alice = await t.createUser({ username: 'alice' });
    carol = await t.createUser({ username: 'carol' });
    dave = await t.createUser({ username: 'dave' });
    for (const [name, user] of [
      ['alice', alice],
      ['carol', carol],
      ['dave', dave],
    ] as const) {
      keys[name] = await cli.keygen(name);
      await t.http.post(`${API}/user/keys`).set('PRIVATE-TOKEN', user.token).send({ title: 'laptop', key: keys[name].pub }).expect(201);
    }
    project = (await t.http.post(`${API}/projects`).set('PRIVATE-TOKEN', alice.token).send({ name: 'big', visibility_level: 0 }).expect(201)).body;
    await t.http.post(`${API}/projects/${project.id}/members`).set('PRIVATE-TOKEN', alice.token).send({ user_id: carol.id, access_level: 20 }).expect(201);
    keys.deploy = await cli.keygen('deploy');
    deployKeyId = (
      await t.http
        .post(`${API}/projects/${project.id}/deploy_keys`)
        .set('PRIVATE-TOKEN', alice.token)
        .send({ title: 'ci box', key: keys.deploy.pub })
        .expect(201)
    ).body.id;
    expect((await cli.git(keys.alice.file, ['lfs', 'install', '--skip-repo'])).code).toBe(0);
  });

  afterAll(async () => {
    await t?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('answers 8.17’s JSON: the Basic header of a short-lived token and the LFS href; the token works for the batch API', async () => {
    const r = await lfsAuth('alice', `'${project.path_with_namespace}.git'`, 'upload');
    expect(r.code).toBe(0);
    const answer = JSON.parse(r.stdout);
    expect(Object.keys(answer)).toEqual(['header', 'href']);
    expect(answer.href).toBe(`http://127.0.0.1:${httpPort}/${project.path_with_namespace}.git/info/lfs/`);
    const authorization = answer.header.Authorization as string;
    const [login] = Buffer.from(authorization.replace(/^Basic /, ''), 'base64')
      .toString()
      .split(':');
    expect(login).toBe('alice');
    const body = Buffer.from('via ssh token\n');
    const oid = sha256(body);
    const res = await batch(project.path_with_namespace, authorization, 'upload', [{ oid, size: body.length }]).expect(200);
    expect(JSON.parse(res.text).objects[0].actions.upload.header.Authorization).toBe(authorization);
    await t.http.put(`/${project.path_with_namespace}.git/gitlab-lfs/objects/${oid}/${body.length}`).set('Authorization', authorization).send(body).expect(200);
  });

  it('a forged or altered token is refused (401)', async () => {
    const r = await lfsAuth('carol', project.path_with_namespace, 'download');
    const authorization = JSON.parse(r.stdout).header.Authorization as string;
    const [login, token] = Buffer.from(authorization.replace(/^Basic /, ''), 'base64')
      .toString()
      .split(':');
    expect(login).toBe('carol');
    await batch(project.path_with_namespace, authorization, 'download', [{ oid: sha256('x'), size: 1 }]).expect(200);
    const [id, exp, mac] = token.split('.');
    const forged = (l: string, s: string) => `Basic ${Buffer.from(`${l}:${s}`).toString('base64')}`;
    // another user's id with carol's signature, a later expiry, and carol's token under alice's name
    await batch(project.path_with_namespace, forged('carol', `${alice.id}.${exp}.${mac}`), 'download', [{ oid: sha256('x'), size: 1 }]).expect(401);
    await batch(project.path_with_namespace, forged('carol', `${id}.${Number(exp) + 1000}.${mac}`), 'download', [{ oid: sha256('x'), size: 1 }]).expect(401);
    await batch(project.path_with_namespace, forged('alice', token), 'download', [{ oid: sha256('x'), size: 1 }]).expect(401);
  });

  it('who may ask: a reporter downloads but may not upload; an outsider is told the project is not found; other operations are disallowed', async () => {
    expect((await lfsAuth('carol', project.path_with_namespace, 'download')).code).toBe(0);
    const up = await lfsAuth('carol', project.path_with_namespace, 'upload');
    expect(up.code).toBe(1);
    expect(up.stderr).toContain('GitLab: You are not allowed to push code to this project.');
    expect(up.stdout).toBe('');
    const out = await lfsAuth('dave', project.path_with_namespace, 'download');
    expect(out.code).toBe(1);
    expect(out.stderr).toContain('GitLab: The project you were looking for could not be found.');
    const bad = await lfsAuth('alice', project.path_with_namespace, 'delete');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('GitLab: Disallowed command');
  });

  it('a deploy key gets an lfs+deploy-key-<id> token that downloads and never uploads', async () => {
    const r = await lfsAuth('deploy', project.path_with_namespace, 'download');
    expect(r.code).toBe(0);
    const authorization = JSON.parse(r.stdout).header.Authorization as string;
    expect(Buffer.from(authorization.replace(/^Basic /, ''), 'base64').toString()).toMatch(new RegExp(`^lfs\\+deploy-key-${deployKeyId}:`));
    await batch(project.path_with_namespace, authorization, 'download', [{ oid: sha256('x'), size: 1 }]).expect(200);
    await batch(project.path_with_namespace, authorization, 'upload', [{ oid: sha256('x'), size: 1 }]).expect(403);
    // a read-only deploy key may not even ask for upload
    const up = await lfsAuth('deploy', project.path_with_namespace, 'upload');
    expect(up.code).toBe(1);
    expect(up.stderr).toContain('GitLab: This deploy key does not have write access to this project.');
    // another project: not found for the key
    await t.http.post(`${API}/projects`).set('PRIVATE-TOKEN', alice.token).send({ name: 'other', visibility_level: 0 }).expect(201);
    expect((await lfsAuth('deploy', 'alice/other', 'download')).stderr).toContain('could not be found');
  });

  it('the stock git-lfs client pushes and clones LFS files over an ssh:// remote', async () => {
    const work = join(dir, 'work');
    const content = Buffer.alloc(5000, 'ssh-lfs ');
    const git = (args: string[], cwd = work, key = keys.alice.file) => cli.git(key, args, cwd);
    expect((await git(['init', '-q', work], dir)).code).toBe(0);
    expect((await git(['lfs', 'track', '*.bin'])).code).toBe(0);
    writeFileSync(join(work, 'asset.bin'), content);
    await git(['add', '.']);
    expect((await git(['commit', '-qm', 'lfs over ssh'])).code).toBe(0);
    const push = await git(['push', cli.url(project.path_with_namespace), 'master']);
    expect(push.code).toBe(0);
    const oid = sha256(content);
    const rows = await t.sql<{ oid: string }>(
      `SELECT o.oid FROM lfs_objects o JOIN lfs_objects_projects l ON l.lfs_object_id = o.id WHERE l.project_id = $1 AND o.oid = $2`,
      [project.id, oid],
    );
    expect(rows).toHaveLength(1);
    const clone = join(dir, 'clone');
    const c = await git(['clone', '-q', cli.url(project.path_with_namespace), clone], dir, keys.carol.file);
    expect(c.code).toBe(0);
    expect(readFileSync(join(clone, 'asset.bin'))).toEqual(content);
    // the deploy key clones it too
    const viaKey = join(dir, 'clone-deploy');
    expect((await git(['clone', '-q', cli.url(project.path_with_namespace), viaKey], dir, keys.deploy.file)).code).toBe(0);
    expect(readFileSync(join(viaKey, 'asset.bin'))).toEqual(content);
  });
});
