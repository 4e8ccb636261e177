import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApp, App } from '../../src/app.factory';
import { SshServerService } from '../../src/ssh/ssh-server.service';
import { Multiplexed, SshCli } from '../helpers/ssh-cli';
import { startTestApp, TestApp, TestUser } from '../helpers/test-app';

const API = '/api/v3';
const NOT_FOUND = 'GitLab: The project you were looking for could not be found.';
const BLOCKED = 'GitLab: Your account has been blocked.';

/**
 * Access revoked on a connection that is already open (issue 36, item 1): one authenticated SSH
 * connection carries every later command of an OpenSSH client that multiplexes (`ControlMaster`), so
 * the key, its owner's state and the access are checked again on every command, and the connections
 * of a user who is blocked or whose key is removed are closed — running transfers included.
 */
describe('SSH access revoked on an open connection (ControlMaster multiplexing)', () => {
  let t: TestApp;
  let dir: string;
  let cli: SshCli;
  const masters: Multiplexed[] = [];
  let seq = 0;

  /** A user with a key of their own, a private project with one commit, and a multiplexed connection opened by a push. */
  async function setup(): Promise<{ user: TestUser; keyId: number; mux: Multiplexed; path: string }> {
    const n = ++seq;
    const user = await t.createUser();
    const key = await cli.keygen(`u${n}`);
    const added = await t.http.post(`${API}/user/keys`).set('PRIVATE-TOKEN', user.token).send({ title: 'laptop', key: key.pub }).expect(201);
    const project = await t.http
      .post(`${API}/projects`)
      .set('PRIVATE-TOKEN', user.token)
      .send({ name: `p${n}`, visibility_level: 0 })
      .expect(201);
    const path: string = project.body.path_with_namespace;
    const mux = new Multiplexed(cli, key.file, `u${n}`);
    masters.push(mux);
    const work = join(dir, `work${n}`);
    expect((await mux.git(['init', '-q', work])).code).toBe(0);
    writeFileSync(join(work, 'README.md'), `# ${n}\n`);
    await mux.git(['add', '.'], work);
    await mux.git(['commit', '-qm', 'first'], work);
    const push = await mux.git(['push', '-q', cli.url(path), 'master'], work);
    expect(push.stderr).toBe('');
    expect(push.code).toBe(0);
    expect(await mux.alive()).toBe(true); // the push left the master open: the later commands run on it
    return { user, keyId: added.body.id, mux, path };
  }

  /** Another user's project of the given visibility (with a commit, pushed over SSH by its owner). */
  async function othersProject(visibility: number): Promise<string> {
    const owner = await setup();
    await t.http
      .put(`${API}/projects/${encodeURIComponent(owner.path)}`)
      .set('PRIVATE-TOKEN', owner.user.token)
      .send({ visibility_level: visibility })
      .expect(200);
    return owner.path;
  }

  beforeAll(async () => {
    t = await startTestApp({ SSH_ENABLED: 'true', SSH_PORT: '0', SSH_LISTEN: '127.0.0.1', GIT_AUTH_BAN_IP_WHITELIST: '' });
    dir = mkdtempSync(join(tmpdir(), 'glv3-ssh-rev-'));
    cli = SshCli.of(t.app.app.get(SshServerService), dir);
  });

  afterAll(async () => {
    for (const m of masters) await m.exit();
    await t?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('a blocked user: the running transfer is cut, the master is closed, a later clone or push fails', async () => {
    const { user, mux, path } = await setup();
    const open = mux.hold(`git-upload-pack '${path}.git'`);
    expect(await open.advertised()).toBe(true); // git waits for the client: a transfer in progress
    await t.http.put(`${API}/users/${user.id}/block`).set('PRIVATE-TOKEN', t.root.token).expect(200);
    expect((await open.endsWithin(10_000)).ended).toBe(true);
    expect(await mux.closedWithin(5000)).toBe(true);
    const clone = await mux.git(['clone', '-q', cli.url(path), join(dir, `blocked-${user.id}`)]);
    expect(clone.code).not.toBe(0);
    const push = await mux.git(['push', cli.url(path), 'HEAD:refs/heads/after-block'], join(dir, `work${seq}`));
    expect(push.code).not.toBe(0);
  });

  it('a block no notification carried (triggers off) is still refused on the next command, which closes the master', async () => {
    const { user, mux, path } = await setup();
    // as if the instance missed the change: only the per-command check can see it
    await t.sql(`BEGIN; SET LOCAL session_replication_role = replica; UPDATE users SET state = 'ldap_blocked' WHERE id = ${Number(user.id)}; COMMIT;`);
    expect(await mux.alive()).toBe(true);
    const r = await mux.git(['ls-remote', cli.url(path)]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(BLOCKED);
    expect(r.stdout).toBe('');
    expect(await mux.closedWithin(5000)).toBe(true);
    const greeting = await mux.ssh(['-T', 'git@127.0.0.1']);
    expect(greeting.stdout).not.toContain('Welcome');
  });

  it('an LDAP-blocked user (state changed by SQL, as the LDAP sync does): the master is closed', async () => {
    const { user, mux, path } = await setup();
    await t.sql(`UPDATE users SET state = 'ldap_blocked' WHERE id = $1`, [user.id]);
    expect(await mux.closedWithin(5000)).toBe(true);
    expect((await mux.git(['ls-remote', cli.url(path)])).code).not.toBe(0);
  });

  it('a deleted key: ls-remote fails and the master is closed; the owner’s other connections stay', async () => {
    const { user, keyId, mux, path } = await setup();
    // a second key of the same user, with its own master: not the deleted key, so it stays open
    const other = await cli.keygen(`other${user.id}`);
    await t.http.post(`${API}/user/keys`).set('PRIVATE-TOKEN', user.token).send({ title: 'desktop', key: other.pub }).expect(201);
    const second = new Multiplexed(cli, other.file, `other${user.id}`);
    masters.push(second);
    expect((await second.git(['ls-remote', cli.url(path)])).code).toBe(0);

    await t.http.delete(`${API}/user/keys/${keyId}`).set('PRIVATE-TOKEN', user.token).expect(200);
    const r = await mux.git(['ls-remote', cli.url(path)]);
    expect(r.code).not.toBe(0);
    expect(r.stdout).toBe('');
    expect(await mux.closedWithin(5000)).toBe(true);

    expect(await second.alive()).toBe(true);
    const still = await second.git(['ls-remote', cli.url(path)]);
    expect(still.code).toBe(0);
    expect(still.stdout).toMatch(/refs\/heads\/master/);
  });

  it('admin removed: a private project of someone else is no longer readable on the same connection', async () => {
    const secret = await othersProject(0);
    const { user, mux } = await setup();
    await t.http.put(`${API}/users/${user.id}`).set('PRIVATE-TOKEN', t.root.token).send({ admin: true }).expect(200);
    const before = await mux.git(['ls-remote', cli.url(secret)]);
    expect(before.stderr).toBe('');
    expect(before.stdout).toMatch(/refs\/heads\/master/);

    await t.http.put(`${API}/users/${user.id}`).set('PRIVATE-TOKEN', t.root.token).send({ admin: false }).expect(200);
    expect(await mux.alive()).toBe(true); // the same connection
    const after = await mux.git(['ls-remote', cli.url(secret)]);
    expect(after.code).not.toBe(0);
    expect(after.stderr).toContain(NOT_FOUND);
    expect(after.stdout).toBe('');
    expect(await mux.alive()).toBe(true); // not closed: the user may still use their own projects
  });

  it('a user made external no longer reads internal projects on the same connection', async () => {
    const internal = await othersProject(10);
    const { user, mux, path } = await setup();
    expect((await mux.git(['ls-remote', cli.url(internal)])).stdout).toMatch(/refs\/heads\/master/);

    await t.http.put(`${API}/users/${user.id}`).set('PRIVATE-TOKEN', t.root.token).send({ external: true }).expect(200);
    expect(await mux.alive()).toBe(true);
    const after = await mux.git(['ls-remote', cli.url(internal)]);
    expect(after.code).not.toBe(0);
    expect(after.stderr).toContain(NOT_FOUND);
    expect((await mux.git(['ls-remote', cli.url(path)])).code).toBe(0); // their own project still
  });

  it('a member removed from a project cannot push to it on the same connection', async () => {
    const owner = await setup();
    const { user, mux } = await setup();
    const project = (
      await t.http
        .get(`${API}/projects/${encodeURIComponent(owner.path)}`)
        .set('PRIVATE-TOKEN', owner.user.token)
        .expect(200)
    ).body;
    await t.http.post(`${API}/projects/${project.id}/members`).set('PRIVATE-TOKEN', owner.user.token).send({ user_id: user.id, access_level: 30 }).expect(201);
    const work = join(dir, `member${user.id}`);
    expect((await mux.git(['clone', '-q', cli.url(owner.path), work])).code).toBe(0);
    await t.http.delete(`${API}/projects/${project.id}/members/${user.id}`).set('PRIVATE-TOKEN', owner.user.token).expect(200);
    writeFileSync(join(work, 'x.txt'), 'x\n');
    await mux.git(['add', '.'], work);
    await mux.git(['commit', '-qm', 'x'], work);
    const push = await mux.git(['push', 'origin', 'HEAD:refs/heads/x'], work);
    expect(push.code).not.toBe(0);
    expect(push.stderr).toContain(NOT_FOUND);
    expect(await mux.alive()).toBe(true);
  });

  const pg = process.env.DATABASE_URL ? it : it.skip;
  pg('a block made through another instance closes the connections on this one', async () => {
    const other: App = await createApp({ ...t.config });
    try {
      const b = other.app.get(SshServerService);
      const cliB = SshCli.of(b, dir);
      const user = await t.createUser();
      const key = await cliB.keygen(`twin${user.id}`);
      await t.http.post(`${API}/user/keys`).set('PRIVATE-TOKEN', user.token).send({ title: 'k', key: key.pub }).expect(201);
      const project = await t.http.post(`${API}/projects`).set('PRIVATE-TOKEN', user.token).send({ name: 'twin' }).expect(201);
      const mux = new Multiplexed(cliB, key.file, `twin${user.id}`);
      masters.push(mux);
      const first = await mux.ssh(['-T', 'git@127.0.0.1']);
      expect(first.stdout).toBe(`Welcome to GitLab, @${user.username}!\n`);
      expect(await mux.alive()).toBe(true);
      const open = mux.hold(`git-upload-pack '${project.body.path_with_namespace}.git'`);
      expect(await open.advertised()).toBe(true);
      // the block is made through the first instance; the connection is on the second
      await t.http.put(`${API}/users/${user.id}/block`).set('PRIVATE-TOKEN', t.root.token).expect(200);
      expect(await mux.closedWithin(5000)).toBe(true);
      expect((await open.endsWithin(5000)).ended).toBe(true);
    } finally {
      await other.close();
    }
  });
});
