import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { connect } from 'node:net';
import { createApp, App } from '../src/app.factory';
import { SshServerService } from '../src/ssh/ssh-server.service';
import { HookReceiver } from './helpers/hook-receiver';
import { run, SshCli, sshArgs } from './helpers/ssh-cli';
import { startTestApp, TestApp, TestUser } from './helpers/test-app';

const API = '/api/v3';

/**
 * Git over SSH against the built-in server, with the stock OpenSSH client: a real key per user, a
 * `known_hosts` made from the server's host key and `StrictHostKeyChecking=yes`.
 */
describe('git over SSH (stock OpenSSH client)', () => {
  let t: TestApp;
  let dir: string;
  let port: number;
  let alice: TestUser;
  let bob: TestUser;
  let project: { id: number; path_with_namespace: string; ssh_url_to_repo: string };

  let cli: SshCli;
  const keyFor = (name: string, type = 'ed25519', bits?: number) => cli.keygen(name, type, bits);
  const sshArgs = (keyFile: string) => cli.args(keyFile);
  const ssh = (keyFile: string, args: string[]) => cli.ssh(keyFile, args);
  const git = (keyFile: string, args: string[], cwd = dir) => cli.git(keyFile, args, cwd);
  const url = (path: string) => cli.url(path);
  let aliceKey: { file: string; pub: string };
  let bobKey: { file: string; pub: string };

  beforeAll(async () => {
    t = await startTestApp({ SSH_ENABLED: 'true', SSH_PORT: '0', SSH_LISTEN: '127.0.0.1', GIT_AUTH_BAN_IP_WHITELIST: '' });
    dir = mkdtempSync(join(tmpdir(), 'glv3-ssh-'));
    const server = t.app.app.get(SshServerService);
    port = server.port!;
    cli = SshCli.of(server, dir);
    alice = await t.createUser();
    bob = await t.createUser();
    aliceKey = await keyFor('alice');
    bobKey = await keyFor('bob', 'ecdsa');
    await t.http.post(`${API}/user/keys`).set('PRIVATE-TOKEN', alice.token).send({ title: 'laptop', key: aliceKey.pub }).expect(201);
    await t.http.post(`${API}/user/keys`).set('PRIVATE-TOKEN', bob.token).send({ title: 'laptop', key: bobKey.pub }).expect(201);
    const res = await t.http.post(`${API}/projects`).set('PRIVATE-TOKEN', alice.token).send({ name: 'demo', visibility_level: 0 }).expect(201);
    project = res.body;
  });

  afterAll(async () => {
    await t?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('hands out ssh:// URLs with the port when it is not 22', () => {
    expect(project.ssh_url_to_repo).toBe(`ssh://git@gitlab.test:${port}/${project.path_with_namespace}.git`);
  });

  it('`ssh -T` answers GitLab greeting and exits 0', async () => {
    const r = await ssh(aliceKey.file, ['-T', 'git@127.0.0.1']);
    expect(r.stdout).toBe(`Welcome to GitLab, @${alice.username}!\n`);
    expect(r.code).toBe(0);
  });

  it('push, clone and fetch; protocol v2; the push makes the same event as over HTTP', async () => {
    const work = join(dir, 'work');
    expect((await git(aliceKey.file, ['init', '-q', work])).code).toBe(0);
    writeFileSync(join(work, 'README.md'), '# demo\n');
    await git(aliceKey.file, ['add', '.'], work);
    await git(aliceKey.file, ['commit', '-qm', 'first'], work);
    const push = await git(aliceKey.file, ['push', url(project.path_with_namespace), 'master'], work);
    expect(push.stderr).toContain('[new branch]');
    expect(push.code).toBe(0);

    const clone = await git(aliceKey.file, ['clone', '-q', url(project.path_with_namespace), join(dir, 'clone')]);
    expect(clone.code).toBe(0);
    expect(readFileSync(join(dir, 'clone', 'README.md'), 'utf8')).toBe('# demo\n');
    // quoted path without `.git` and a leading `/`, as some clients send it
    const fetch = await git(aliceKey.file, ['fetch', '-q', `ssh://git@127.0.0.1:${port}/${project.path_with_namespace}`], join(dir, 'clone'));
    expect(fetch.code).toBe(0);

    const v2 = await git(aliceKey.file, ['-c', 'protocol.version=2', 'ls-remote', url(project.path_with_namespace)]);
    expect(v2.code).toBe(0);
    expect(v2.stdout).toMatch(/^[0-9a-f]{40}\trefs\/heads\/master$/m);

    const events = await t.http.get(`${API}/projects/${project.id}/events`).set('PRIVATE-TOKEN', alice.token).expect(200);
    expect(events.body.some((e: { action_name: string; author_id: number }) => e.action_name === 'pushed new' && e.author_id === alice.id)).toBe(true);
    const branches = await t.http.get(`${API}/projects/${project.id}/repository/branches`).set('PRIVATE-TOKEN', alice.token).expect(200);
    expect(branches.body.map((b: { name: string }) => b.name)).toEqual(['master']);
  });

  it('a private project read by a non-member gets the same answer as one that does not exist', async () => {
    const hidden = await git(bobKey.file, ['ls-remote', url(project.path_with_namespace)]);
    const missing = await git(bobKey.file, ['ls-remote', url(`${alice.username}/no-such-project`)]);
    expect(hidden.code).not.toBe(0);
    expect(hidden.stderr).toContain('GitLab: The project you were looking for could not be found.');
    expect(hidden.stderr).toBe(missing.stderr);
  });

  it('a developer cannot push to a protected branch: git shows the reason', async () => {
    await t.http.post(`${API}/projects/${project.id}/members`).set('PRIVATE-TOKEN', alice.token).send({ user_id: bob.id, access_level: 30 }).expect(201);
    // master came protected with developers_can_push (default_branch_protection 1); protecting again keeps a flag not given (8.17)
    await t.http
      .put(`${API}/projects/${project.id}/repository/branches/master/protect`)
      .set('PRIVATE-TOKEN', alice.token)
      .send({ developers_can_push: false })
      .expect(200);
    const work = join(dir, 'bob');
    expect((await git(bobKey.file, ['clone', '-q', url(project.path_with_namespace), work])).code).toBe(0);
    writeFileSync(join(work, 'b.txt'), 'bob\n');
    await git(bobKey.file, ['add', '.'], work);
    await git(bobKey.file, ['commit', '-qm', 'by bob'], work);
    const refused = await git(bobKey.file, ['push', 'origin', 'master'], work);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('GitLab: You are not allowed to push code to protected branches on this project.');
    // a branch of his own is fine
    const ok = await git(bobKey.file, ['push', 'origin', 'HEAD:refs/heads/feature'], work);
    expect(ok.code).toBe(0);
    // a reporter may read but not push
    await t.http.put(`${API}/projects/${project.id}/members/${bob.id}`).set('PRIVATE-TOKEN', alice.token).send({ access_level: 20 }).expect(200);
    const reporter = await git(bobKey.file, ['push', 'origin', 'HEAD:refs/heads/feature2'], work);
    expect(reporter.code).not.toBe(0);
    expect(reporter.stderr).toContain('GitLab: You are not allowed to push code to this project.');
  });

  it('refuses a shell command, a subsystem and port forwarding', async () => {
    const bash = await ssh(aliceKey.file, ['git@127.0.0.1', 'bash']);
    expect(bash.code).toBe(1);
    expect(bash.stderr).toContain('GitLab: Disallowed command');
    const inject = await ssh(aliceKey.file, ['git@127.0.0.1', `git-upload-pack '${project.path_with_namespace}.git'; id`]);
    expect(inject.code).toBe(1);
    expect(inject.stderr).toContain('GitLab: Disallowed command');
    const sftp = await ssh(aliceKey.file, ['-s', 'git@127.0.0.1', 'sftp']);
    expect(sftp.code).not.toBe(0);
    const forward = await ssh(aliceKey.file, ['-N', '-o', 'ExitOnForwardFailure=yes', '-R', '0:127.0.0.1:9', 'git@127.0.0.1']);
    expect(forward.code).not.toBe(0);
    expect(forward.stderr).toMatch(/forwarding failed/i);
  });

  it('refuses unknown keys and passwords', async () => {
    const stranger = await keyFor('stranger');
    const r = await ssh(stranger.file, ['-T', 'git@127.0.0.1']);
    expect(r.code).toBe(255);
    expect(r.stderr).toContain('Permission denied (publickey)');
    const pw = await run('ssh', [
      ...sshArgs(stranger.file),
      '-o',
      'PubkeyAuthentication=no',
      '-o',
      'PreferredAuthentications=password,keyboard-interactive',
      '-T',
      'git@127.0.0.1',
    ]);
    expect(pw.code).toBe(255);
    expect(pw.stderr).toContain('Permission denied (publickey)');
  });

  it('the API refuses keys the server would never accept (DSA, RSA under 2048 bits)', async () => {
    const rsa1024 = await keyFor('small', 'rsa', 1024);
    const small = await t.http.post(`${API}/user/keys`).set('PRIVATE-TOKEN', alice.token).send({ title: 'small', key: rsa1024.pub });
    expect(small.status).toBe(400);
    const dsa =
      'ssh-dss AAAAB3NzaC1kc3MAAACBAP1/U4EddRIpUt9KnC7s5Of2EbdSPO9EAMMeP4C2USZpRV1AIlH7WT2NWPq/xfW6MPbLm1Vs14E7gB00b/JmYLdrmVClpJ+f6AR7ECLCT7up1/63xhv4O1fnxqimFQ8E+4P208UewwI1VBNaFpEy9nXzrith1yrv8iIDGZ3RSAHHAAAAFQCXYFCPFSMLzLKSuYKi64QL8Fgc9QAAAIEA9+GghdabPd7LvKtcNrhXuXmUr7v6OuqC+VdMCz0HgmdRWVeOutRZT+ZxBxCBgLRJFnEj6EwoFhO3zwkyjMim4TwWeotUfI0o4KOuHiuzpnWRbqN/C/ohNWLx+2J6ASQ7zKTxvqhRkImog9/hWuWfBpKLZl6Ae1UlZAFMO/7PSSoAAACBAPPTc5vH9VlNvAAdWcPxN4xa3P3NWwQf1k/gvsQ6Yj0tdJf3vYwcL9bcQDzQn8z6n7KoIuqaNsj3bULIsW9tAXBMmBAOsu0xPvnw2nc4WSKiDTWhQ4xgOqMGmwnDkH3SXzS0WP7nkBAq1vq9l5n7jMBKNzD7IlYiAUddgVRdwdbV dsa';
    const refused = await t.http.post(`${API}/user/keys`).set('PRIVATE-TOKEN', alice.token).send({ title: 'dsa', key: dsa });
    expect(refused.status).toBe(400);
    expect(JSON.stringify(refused.body)).toMatch(/key/);
  });

  it('a push over SSH runs the same reactions as over HTTP: pipeline with builds, webhook delivery', async () => {
    const rx = await HookReceiver.start();
    try {
      await t.http
        .put(`${API}/application/settings`)
        .set('PRIVATE-TOKEN', t.root.token)
        .send({ allow_local_requests_from_hooks_and_services: true })
        .expect(200);
      await t.http
        .post(`${API}/projects/${project.id}/hooks`)
        .set('PRIVATE-TOKEN', alice.token)
        .send({ url: rx.url('/push'), push_events: true })
        .expect(201);
      const work = join(dir, 'work');
      writeFileSync(join(work, '.gitlab-ci.yml'), 'test:\n  script: echo ok\n');
      await git(aliceKey.file, ['add', '.'], work);
      await git(aliceKey.file, ['commit', '-qm', 'ci'], work);
      const push = await git(aliceKey.file, ['push', url(project.path_with_namespace), 'master'], work);
      expect(push.code).toBe(0);
      let builds: { name: string; ref: string }[] = [];
      for (let i = 0; i < 100 && (builds.length === 0 || !rx.received.some((r) => r.path === '/push')); i++) {
        await new Promise((r) => setTimeout(r, 200));
        builds = (await t.http.get(`${API}/projects/${project.id}/builds`).set('PRIVATE-TOKEN', alice.token).expect(200)).body;
      }
      expect(builds.map((b) => [b.name, b.ref])).toEqual([['test', 'master']]);
      const hook = rx.received.find((r) => r.path === '/push');
      expect(hook?.body).toMatchObject({ object_kind: 'push', ref: 'refs/heads/master', user_name: expect.any(String), project_id: project.id });
      expect(hook?.body.repository.git_ssh_url).toBe(project.ssh_url_to_repo);
    } finally {
      await rx.close();
    }
  });

  it('/-/metrics counts SSH sessions by command and result', async () => {
    const res = await t.http.get('/-/metrics').expect(200);
    expect(res.text).toMatch(/^ssh_sessions_total\{command="shell",result="ok"\} [1-9]/m);
    expect(res.text).toMatch(/^ssh_sessions_total\{command="git-receive-pack",result="ok"\} [1-9]/m);
    expect(res.text).toMatch(/^ssh_sessions_total\{command="git-upload-pack",result="not_found"\} [1-9]/m);
    expect(res.text).toMatch(/^ssh_sessions_total\{command="disallowed",result="refused"\} [1-9]/m);
    expect(res.text).toMatch(/^ssh_sessions_total\{command="none",result="denied"\} [1-9]/m);
  });

  it('a deleted key and a blocked user are refused on the very next connection', async () => {
    const carol = await t.createUser();
    const k = await keyFor('carol');
    const added = await t.http.post(`${API}/user/keys`).set('PRIVATE-TOKEN', carol.token).send({ title: 'k', key: k.pub }).expect(201);
    expect((await ssh(k.file, ['-T', 'git@127.0.0.1'])).code).toBe(0);
    await t.http.put(`${API}/users/${carol.id}/block`).set('PRIVATE-TOKEN', t.root.token).expect(200);
    const blocked = await ssh(k.file, ['-T', 'git@127.0.0.1']);
    expect(blocked.code).toBe(255);
    expect(blocked.stderr).toContain('Permission denied (publickey)');
    await t.http.put(`${API}/users/${carol.id}/unblock`).set('PRIVATE-TOKEN', t.root.token).expect(200);
    expect((await ssh(k.file, ['-T', 'git@127.0.0.1'])).code).toBe(0);
    await t.http.delete(`${API}/user/keys/${added.body.id}`).set('PRIVATE-TOKEN', carol.token).expect(200);
    const deleted = await ssh(k.file, ['-T', 'git@127.0.0.1']);
    expect(deleted.code).toBe(255);
    expect(deleted.stderr).toContain('Permission denied (publickey)');
  });
});

describe('git over SSH: abuse limits and several instances', () => {
  let t: TestApp;
  let dir: string;

  const ssh = (port: number, keyFile: string, knownHosts: string, args: string[]) => run('ssh', [...sshArgs(keyFile, knownHosts, port), ...args]);
  const keygen = async (name: string) => {
    const file = join(dir, `id_${name}`);
    await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', file]);
    return { file, pub: readFileSync(`${file}.pub`, 'utf8').trim() };
  };
  const knownHostsFor = (server: SshServerService, name: string) => {
    const file = join(dir, name);
    writeFileSync(file, server.fingerprints.map((k) => `[127.0.0.1]:${server.port} ${k.publicKey}`).join('\n') + '\n');
    return file;
  };

  beforeAll(async () => {
    t = await startTestApp({
      SSH_ENABLED: 'true',
      SSH_PORT: '0',
      SSH_LISTEN: '127.0.0.1',
      SSH_AUTH_TIMEOUT: '1',
      SSH_MAX_SESSIONS_PER_IP: '2',
      GIT_AUTH_BAN_IP_WHITELIST: '',
      GIT_AUTH_BAN_MAX_RETRY: '3',
    });
    dir = mkdtempSync(join(tmpdir(), 'glv3-ssh-limits-'));
  });

  afterAll(async () => {
    await t?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('a client that connects and sends nothing is cut after SSH_AUTH_TIMEOUT', async () => {
    const server = t.app.app.get(SshServerService);
    const started = Date.now();
    const closed = await new Promise<number>((resolve, reject) => {
      const sock = connect(server.port!, '127.0.0.1');
      sock.on('data', () => undefined); // the server's identification line; we never answer
      sock.on('error', reject);
      sock.on('close', () => resolve(Date.now() - started));
    });
    expect(closed).toBeGreaterThanOrEqual(900);
    expect(closed).toBeLessThan(10_000);
  });

  it('caps concurrent connections per IP', async () => {
    const server = t.app.app.get(SshServerService);
    const held = [0, 1].map(() => connect(server.port!, '127.0.0.1'));
    await Promise.all(held.map((s) => new Promise((r) => s.once('data', r))));
    try {
      const kh = knownHostsFor(server, 'kh-cap');
      const k = await keygen('cap');
      const third = await ssh(server.port!, k.file, kh, ['-T', 'git@127.0.0.1']);
      expect(third.code).toBe(255);
      expect(third.stderr).not.toContain('Permission denied');
    } finally {
      held.forEach((s) => s.destroy());
    }
  });

  it('failed SSH authentications count toward the same per-IP ban as git over HTTP', async () => {
    const server = t.app.app.get(SshServerService);
    const kh = knownHostsFor(server, 'kh-ban');
    const user = await t.createUser();
    const good = await keygen('good');
    await t.http.post('/api/v3/user/keys').set('PRIVATE-TOKEN', user.token).send({ title: 'k', key: good.pub }).expect(201);
    const project = (await t.http.post('/api/v3/projects').set('PRIVATE-TOKEN', user.token).send({ name: 'banned', visibility_level: 20 }).expect(201)).body;
    const stranger = await keygen('stranger');
    for (let i = 0; i < 3; i++) expect((await ssh(server.port!, stranger.file, kh, ['-T', 'git@127.0.0.1'])).code).toBe(255);
    await new Promise((r) => setTimeout(r, 300)); // the last failure is counted when its connection closes
    const now = await ssh(server.port!, good.file, kh, ['-T', 'git@127.0.0.1']);
    expect(now.code).toBe(255);
    expect(now.stdout).not.toContain('Welcome');
    // and git over HTTP from the same address is banned too (403 before credentials are looked at)
    await t.app.app.listen(0, '127.0.0.1');
    const port = (t.app.app.getHttpServer().address() as { port: number }).port;
    const res = await fetch(`http://127.0.0.1:${port}/${project.path_with_namespace}.git/info/refs?service=git-upload-pack`);
    expect(res.status).toBe(403);
  });

  const pg = process.env.DATABASE_URL ? it : it.skip;
  pg('two instances on one database and one DATA_DIR present the same host key and see a key removal at once', async () => {
    const other: App = await createApp({ ...t.config });
    try {
      const a = t.app.app.get(SshServerService);
      const b = other.app.get(SshServerService);
      expect(b.port).toBeDefined();
      expect(b.port).not.toBe(a.port);
      expect(b.fingerprints).toEqual(a.fingerprints);
      await t.sql('DELETE FROM login_attempts');
      const user = await t.createUser();
      const k = await keygen('twin');
      const added = await t.http.post('/api/v3/user/keys').set('PRIVATE-TOKEN', user.token).send({ title: 'k', key: k.pub }).expect(201);
      const khB = knownHostsFor(b, 'kh-b');
      expect((await ssh(b.port!, k.file, khB, ['-T', 'git@127.0.0.1'])).code).toBe(0);
      await t.http.delete(`/api/v3/user/keys/${added.body.id}`).set('PRIVATE-TOKEN', user.token).expect(200);
      const refused = await ssh(b.port!, k.file, khB, ['-T', 'git@127.0.0.1']);
      expect(refused.code).toBe(255);
      expect(refused.stderr).toContain('Permission denied (publickey)');
    } finally {
      await other.close();
    }
  });

  it('a graceful stop refuses new connections and lets a running git transfer finish', async () => {
    const server = t.app.app.get(SshServerService);
    const sshPort = server.port!;
    const user = await t.createUser();
    const cli = SshCli.of(server, dir);
    const k = await cli.keygen('graceful');
    await t.http.post('/api/v3/user/keys').set('PRIVATE-TOKEN', user.token).send({ title: 'k', key: k.pub }).expect(201);
    const project = (await t.http.post('/api/v3/projects').set('PRIVATE-TOKEN', user.token).send({ name: 'graceful' }).expect(201)).body;
    await t.sql('DELETE FROM login_attempts');
    // upload-pack advertises its refs, then waits for the client: a transfer in progress
    const child = spawn('ssh', [...cli.args(k.file), 'git@127.0.0.1', `git-upload-pack '${project.path_with_namespace}.git'`], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString('latin1')));
    const exited = new Promise<number | null>((r) => child.on('close', r));
    for (let i = 0; i < 100 && !out.includes('0000'); i++) await new Promise((r) => setTimeout(r, 100));
    expect(out).toContain('0000'); // the (empty) advertisement ended with a flush
    let closed = false;
    const closing = t.close().then(() => (closed = true));
    await new Promise((r) => setTimeout(r, 700));
    expect(closed).toBe(false); // waiting for the transfer
    const late = await cli.ssh(k.file, ['-T', 'git@127.0.0.1']);
    expect(late.code).toBe(255); // no new connections
    child.stdin.end('0000'); // the client is done: upload-pack ends
    expect(await exited).toBe(0);
    await closing;
    expect(closed).toBe(true);
    t = undefined as unknown as TestApp; // closed here, not in afterAll
    expect(sshPort).toBeGreaterThan(0);
  }, 60_000);
});
