import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SshServerService } from '../src/ssh/ssh-server.service';
import { startTestApp, TestApp, TestUser } from './helpers/test-app';

const API = '/api/v3';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a program (ssh, git) asynchronously: the server lives in this process. */
function run(cmd: string, args: string[], opts: { cwd?: string; env?: Record<string, string> } = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: opts.cwd, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LC_ALL: 'C', ...opts.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), 50_000);
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/**
 * Git over SSH against the built-in server, with the stock OpenSSH client: a real key per user, a
 * `known_hosts` made from the server's host key and `StrictHostKeyChecking=yes`.
 */
describe('git over SSH (stock OpenSSH client)', () => {
  let t: TestApp;
  let dir: string;
  let port: number;
  let knownHosts: string;
  let alice: TestUser;
  let bob: TestUser;
  let project: { id: number; path_with_namespace: string; ssh_url_to_repo: string };

  const keyFor = async (name: string, type = 'ed25519', bits?: number): Promise<{ file: string; pub: string }> => {
    const file = join(dir, `id_${name}`);
    const r = await run('ssh-keygen', ['-q', '-t', type, ...(bits ? ['-b', String(bits)] : []), '-N', '', '-C', name, '-f', file]);
    if (r.code !== 0) throw new Error(r.stderr);
    return { file, pub: readFileSync(`${file}.pub`, 'utf8').trim() };
  };
  const sshArgs = (keyFile: string) => [
    '-F', '/dev/null',
    '-i', keyFile,
    '-o', 'IdentitiesOnly=yes',
    '-o', 'IdentityAgent=none',
    '-o', 'BatchMode=yes',
    '-o', `UserKnownHostsFile=${knownHosts}`,
    '-o', 'StrictHostKeyChecking=yes',
    '-o', 'ConnectTimeout=20',
    '-p', String(port),
  ];
  const ssh = (keyFile: string, args: string[]) => run('ssh', [...sshArgs(keyFile), ...args]);
  const git = (keyFile: string, args: string[], cwd = dir) =>
    run('git', ['-c', 'user.name=T', '-c', 'user.email=t@example.com', '-c', 'init.defaultBranch=master', ...args], {
      cwd,
      env: {
        HOME: dir,
        GIT_CONFIG_NOSYSTEM: '1',
        GIT_SSH_COMMAND: ['ssh', ...sshArgs(keyFile)].map((a) => `'${a}'`).join(' '),
      },
    });
  const url = (path: string) => `ssh://git@127.0.0.1:${port}/${path}.git`;
  let aliceKey: { file: string; pub: string };
  let bobKey: { file: string; pub: string };

  beforeAll(async () => {
    t = await startTestApp({ SSH_ENABLED: 'true', SSH_PORT: '0', SSH_LISTEN: '127.0.0.1', GIT_AUTH_BAN_IP_WHITELIST: '' });
    dir = mkdtempSync(join(tmpdir(), 'glv3-ssh-'));
    const server = t.app.app.get(SshServerService);
    port = server.port!;
    knownHosts = join(dir, 'known_hosts');
    writeFileSync(knownHosts, server.fingerprints.map((k) => `[127.0.0.1]:${port} ${k.publicKey}`).join('\n') + '\n');
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
    await t.http.put(`${API}/projects/${project.id}/repository/branches/master/protect`).set('PRIVATE-TOKEN', alice.token).expect(200);
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
    const pw = await run('ssh', [...sshArgs(stranger.file), '-o', 'PubkeyAuthentication=no', '-o', 'PreferredAuthentications=password,keyboard-interactive', '-T', 'git@127.0.0.1']);
    expect(pw.code).toBe(255);
    expect(pw.stderr).toContain('Permission denied (publickey)');
  });

  it('the API refuses keys the server would never accept (DSA, RSA under 2048 bits)', async () => {
    const rsa1024 = await keyFor('small', 'rsa', 1024);
    const small = await t.http.post(`${API}/user/keys`).set('PRIVATE-TOKEN', alice.token).send({ title: 'small', key: rsa1024.pub });
    expect(small.status).toBe(400);
    const dsa = 'ssh-dss AAAAB3NzaC1kc3MAAACBAP1/U4EddRIpUt9KnC7s5Of2EbdSPO9EAMMeP4C2USZpRV1AIlH7WT2NWPq/xfW6MPbLm1Vs14E7gB00b/JmYLdrmVClpJ+f6AR7ECLCT7up1/63xhv4O1fnxqimFQ8E+4P208UewwI1VBNaFpEy9nXzrith1yrv8iIDGZ3RSAHHAAAAFQCXYFCPFSMLzLKSuYKi64QL8Fgc9QAAAIEA9+GghdabPd7LvKtcNrhXuXmUr7v6OuqC+VdMCz0HgmdRWVeOutRZT+ZxBxCBgLRJFnEj6EwoFhO3zwkyjMim4TwWeotUfI0o4KOuHiuzpnWRbqN/C/ohNWLx+2J6ASQ7zKTxvqhRkImog9/hWuWfBpKLZl6Ae1UlZAFMO/7PSSoAAACBAPPTc5vH9VlNvAAdWcPxN4xa3P3NWwQf1k/gvsQ6Yj0tdJf3vYwcL9bcQDzQn8z6n7KoIuqaNsj3bULIsW9tAXBMmBAOsu0xPvnw2nc4WSKiDTWhQ4xgOqMGmwnDkH3SXzS0WP7nkBAq1vq9l5n7jMBKNzD7IlYiAUddgVRdwdbV dsa';
    const refused = await t.http.post(`${API}/user/keys`).set('PRIVATE-TOKEN', alice.token).send({ title: 'dsa', key: dsa });
    expect(refused.status).toBe(400);
    expect(JSON.stringify(refused.body)).toMatch(/key/);
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
