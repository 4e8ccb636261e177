import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SshServerService } from '../../src/ssh/ssh-server.service';
import { GitCli } from '../helpers/git-cli';
import { HeldCommand, Multiplexed, SshCli } from '../helpers/ssh-cli';
import { startTestApp, TestApp, TestUser } from '../helpers/test-app';

const API = '/api/v3';

const pkt = (line: string) => `${(line.length + 4).toString(16).padStart(4, '0')}${line}`;

/**
 * Idle SSH clients cannot hold the git transfer slots (issue 36, item 3, SSH half). Driven with the stock
 * OpenSSH client multiplexing one connection (`ControlMaster`): every `ssh` or `git` command with the
 * same control path is one more session channel on it, which is how the probe opened its idle
 * `git-upload-pack` channels. The held commands are `ssh … git-upload-pack 'ns/p.git'` processes whose
 * stdin the test keeps: git advertises its refs and waits for the client, as a clone does before it
 * sends its wants.
 */
describe('SSH: idle channels hold no transfer slot, and one connection has at most 10', () => {
  let t: TestApp;
  let dir: string;
  let cli: SshCli;
  let http: GitCli;
  let owner: TestUser;
  let ownerKey: { file: string; pub: string };
  let reader: TestUser;
  let project: { id: number; path_with_namespace: string };
  const masters: Multiplexed[] = [];
  const held: HeldCommand[] = [];
  let seq = 0;

  const mux = () => {
    const m = new Multiplexed(cli, ownerKey.file, `idle${++seq}`);
    masters.push(m);
    return m;
  };
  const hold = (m: Multiplexed, service = 'git-upload-pack') => {
    const h = m.hold(`${service} '${project.path_with_namespace}.git'`);
    held.push(h);
    return h;
  };
  const metric = async (name: string) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec((await t.http.get('/-/metrics').expect(200)).text)?.[1] ?? 0);
  const cloneOverHttp = (by: TestUser) => http.run(['clone', '-q', http.url(project.path_with_namespace, by.username, by.token), join(dir, `clone-${++seq}`)]);

  beforeAll(async () => {
    t = await startTestApp({
      SSH_ENABLED: 'true',
      SSH_PORT: '0',
      SSH_LISTEN: '127.0.0.1',
      GIT_AUTH_BAN_IP_WHITELIST: '',
      // two slots, shared with no one in particular: the slot rules alone decide
      GIT_MAX_TRANSFERS: '2',
      GIT_MAX_TRANSFERS_PER_CLIENT: '2',
      GIT_QUEUE_TIMEOUT: '3',
      SSH_REQUEST_TIMEOUT: '60',
    });
    dir = mkdtempSync(join(tmpdir(), 'glv3-ssh-idle-'));
    cli = SshCli.of(t.app.app.get(SshServerService), dir);
    http = await GitCli.listen(t, dir);
    owner = await t.createUser();
    reader = await t.createUser();
    ownerKey = await cli.keygen('owner');
    await t.http.post(`${API}/user/keys`).set('PRIVATE-TOKEN', owner.token).send({ title: 'k', key: ownerKey.pub }).expect(201);
    project = (await t.http.post(`${API}/projects`).set('PRIVATE-TOKEN', owner.token).send({ name: 'idle', visibility_level: 20 }).expect(201)).body;
    const work = join(dir, 'work');
    await http.ok(['init', '-q', work]);
    await http.commit(work, { 'README.md': '# idle\n' }, 'first');
    await http.ok(['push', '-q', http.url(project.path_with_namespace, owner.username, owner.token), 'master'], work);
  });

  afterEach(async () => {
    for (const h of held.splice(0)) h.kill();
    for (const m of masters.splice(0)) await m.exit();
  });

  afterAll(async () => {
    await t?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("6 idle git-upload-pack channels on one connection take no slot: another user's HTTP clone succeeds at once", async () => {
    const m = mux();
    expect((await m.ssh(['-T', 'git@127.0.0.1'])).code).toBe(0); // the master is up: the channels below share it
    const idle = Array.from({ length: 6 }, () => hold(m));
    for (const h of idle) expect(await h.advertised()).toBe(true);
    expect(await metric('git_transfers_running')).toBe(0);
    expect(await metric('git_transfers_queued')).toBe(0);

    const started = Date.now();
    const clone = await cloneOverHttp(reader);
    expect(clone.stderr).toBe('');
    expect(clone.code).toBe(0);
    expect(Date.now() - started).toBeLessThan(3000); // never waited for a slot (GIT_QUEUE_TIMEOUT is 3 s)

    // the idle channels were there all along, and end normally once their client is done
    expect(idle.every((h) => !h.ended())).toBe(true);
    for (const h of idle) h.send('0000'); // no wants: upload-pack ends, without taking a slot
    for (const h of idle) expect(await h.endsWithin(10_000)).toEqual({ ended: true, code: 0 });
  });

  it('an idle git-receive-pack holds neither a slot nor the repository lock: an API write to the repository goes through', async () => {
    const m = mux();
    const push = hold(m, 'git-receive-pack');
    expect(await push.advertised()).toBe(true);
    const started = Date.now();
    await t.http
      .post(`${API}/projects/${project.id}/repository/branches`)
      .set('PRIVATE-TOKEN', owner.token)
      .send({ branch_name: `while-idle-${seq}`, ref: 'master' })
      .expect(201);
    expect(Date.now() - started).toBeLessThan(5000); // the lock waits up to 120 s for a holder
    expect(push.ended()).toBe(false);
    push.send('0000'); // nothing to push
    expect(await push.endsWithin(10_000)).toEqual({ ended: true, code: 0 });
  });

  it('the 11th session channel on one connection is refused (OpenSSH MaxSessions); a closed one frees its place', async () => {
    const m = mux();
    expect((await m.ssh(['-T', 'git@127.0.0.1'])).code).toBe(0);
    const ten = Array.from({ length: 10 }, () => hold(m));
    for (const h of ten) expect(await h.advertised()).toBe(true);

    // the master asks for an 11th session channel and is refused; the stock client then says so and falls back
    // to a connection of its own (as it does against OpenSSH's MaxSessions)
    const eleventh = await m.git(['ls-remote', cli.url(project.path_with_namespace)]);
    expect(eleventh.stderr).toContain('session request failed: Session open refused by peer');
    expect(await m.alive()).toBe(true); // refused the channel, not the connection
    expect(ten.every((h) => !h.ended())).toBe(true);

    ten[0].kill(); // its session channel closes
    let again = await m.git(['ls-remote', cli.url(project.path_with_namespace)]);
    for (let i = 0; i < 20 && again.stderr.includes('refused'); i++) {
      await new Promise((r) => setTimeout(r, 100));
      again = await m.git(['ls-remote', cli.url(project.path_with_namespace)]);
    }
    expect(again.stderr).toBe(''); // on the master this time
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/refs\/heads\/master/);
    // another connection of the same user is not concerned
    expect((await cli.git(ownerKey.file, ['ls-remote', cli.url(project.path_with_namespace)])).code).toBe(0);
  });
});

describe("SSH: the client's request is awaited for SSH_REQUEST_TIMEOUT, and its transfers count against its user's share", () => {
  let t: TestApp;
  let dir: string;
  let cli: SshCli;
  let http: GitCli;
  let owner: TestUser;
  let ownerKey: { file: string; pub: string };
  let reader: TestUser;
  let path: string;
  let head: string;
  const held: HeldCommand[] = [];

  const metric = async (name: string) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec((await t.http.get('/-/metrics').expect(200)).text)?.[1] ?? 0);
  const until = async (name: string, value: number) => {
    for (let i = 0; i < 100 && (await metric(name)) !== value; i++) await new Promise((r) => setTimeout(r, 50));
    expect(await metric(name)).toBe(value);
  };

  /** An upload-pack that has sent its wants and waits for the haves: it has work, so it takes (or waits for) a slot. */
  async function fetching(): Promise<HeldCommand> {
    const h = cli.hold(ownerKey.file, `git-upload-pack '${path}.git'`);
    held.push(h);
    expect(await h.advertised()).toBe(true);
    h.send(pkt(`want ${head} multi_ack_detailed side-band-64k\n`) + '0000');
    return h;
  }

  beforeAll(async () => {
    t = await startTestApp({
      SSH_ENABLED: 'true',
      SSH_PORT: '0',
      SSH_LISTEN: '127.0.0.1',
      GIT_AUTH_BAN_IP_WHITELIST: '',
      GIT_MAX_TRANSFERS: '2', // a client's share: 1 running
      GIT_QUEUE_TIMEOUT: '3',
      SSH_REQUEST_TIMEOUT: '3',
    });
    dir = mkdtempSync(join(tmpdir(), 'glv3-ssh-request-'));
    cli = SshCli.of(t.app.app.get(SshServerService), dir);
    http = await GitCli.listen(t, dir);
    owner = await t.createUser();
    reader = await t.createUser();
    ownerKey = await cli.keygen('owner');
    await t.http.post(`${API}/user/keys`).set('PRIVATE-TOKEN', owner.token).send({ title: 'k', key: ownerKey.pub }).expect(201);
    path = (await t.http.post(`${API}/projects`).set('PRIVATE-TOKEN', owner.token).send({ name: 'req', visibility_level: 20 }).expect(201)).body
      .path_with_namespace;
    const work = join(dir, 'work');
    await http.ok(['init', '-q', work]);
    head = (await http.commit(work, { 'README.md': '# req\n' }, 'first')).trim();
    await http.ok(['push', '-q', http.url(path, owner.username, owner.token), 'master'], work);
  });

  afterEach(() => {
    for (const h of held.splice(0)) h.kill();
  });

  afterAll(async () => {
    await t?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('a channel whose client sends no request is closed after SSH_REQUEST_TIMEOUT, with a line git shows', async () => {
    const h = cli.hold(ownerKey.file, `git-upload-pack '${path}.git'`);
    held.push(h);
    expect(await h.advertised()).toBe(true);
    const started = Date.now();
    const end = await h.endsWithin(15_000);
    expect(end.ended).toBe(true);
    expect(end.code).toBe(1);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(h.stderr()).toContain('fatal: timed out waiting for the git request (3 s)');
    // real clients, which send their request at once, are not concerned: a clone (protocol v0 and v2), an archive
    const clone = await cli.git(ownerKey.file, ['clone', '-q', cli.url(path), join(dir, 'clone-ssh')]);
    expect(clone.code).toBe(0);
    const v2 = await cli.git(ownerKey.file, ['-c', 'protocol.version=2', 'clone', '-q', cli.url(path), join(dir, 'clone-ssh-v2')]);
    expect(v2.stderr).toBe('');
    expect(v2.code).toBe(0);
    const archive = await cli.git(ownerKey.file, ['archive', '--format=tar', `--remote=${cli.url(path)}`, 'master', 'README.md']);
    expect(archive.code).toBe(0);
    expect(archive.stdout).toContain('# req');
  });

  it('a first request over 10 MiB is refused before git sees it (the cap of smart HTTP, GitLab Workhorse’s)', async () => {
    const h = cli.hold(ownerKey.file, `git-upload-pack '${path}.git'`);
    held.push(h);
    expect(await h.advertised()).toBe(true);
    const line = pkt(`want ${'a'.repeat(65_000)}\n`);
    for (let sent = 0; sent <= 10 * 1024 * 1024; sent += line.length) h.send(line); // no flush-pkt: the request never ends
    const end = await h.endsWithin(15_000);
    expect(end).toEqual({ ended: true, code: 1 });
    expect(h.stderr()).toContain('fatal: the git request is over 10 MiB');
    expect(await metric('git_transfers_running')).toBe(0);
  });

  it("an SSH user's transfers count against that user's share of the slots: another user's HTTP clone runs", async () => {
    await fetching(); // holds a slot: the user's share (1 of 2)
    await until('git_transfers_running', 1);
    await fetching(); // waits: the user has its share running
    await until('git_transfers_queued', 1);
    expect(await metric('git_transfers_running')).toBe(1);

    const started = Date.now();
    const clone = await http.run(['clone', '-q', http.url(path, reader.username, reader.token), join(dir, 'clone-http')]);
    expect(clone.stderr).toBe('');
    expect(clone.code).toBe(0);
    expect(Date.now() - started).toBeLessThan(3000);
  });
});
