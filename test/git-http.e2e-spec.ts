import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { Test } from 'supertest';
import { DomainEvents, PushReceived } from '../src/domain-events/domain-events';
import { RepositoryLocks } from '../src/database/repository-locks';
import { GitService } from '../src/git/git.service';
import { PushService } from '../src/repo-api/push.service';
import { binaryParser, GitCli } from './helpers/git-cli';
import { startTestApp, TestApp, TestUser } from './helpers/test-app';

const API = '/api/v3';
const ZERO = '0'.repeat(40);
/** One pkt-line of git's protocol. */
const pkt = (s: string) => (s.length + 4).toString(16).padStart(4, '0') + s;

type Json = Record<string, any>;

/**
 * Git smart HTTP driven by the stock git CLI against the app listening on a real port. git runs
 * asynchronously (the server lives in this process: a synchronous child would block its event loop).
 */
describe('git over HTTP', () => {
  let t: TestApp;
  let cli: GitCli;
  let tmp: string;
  let alice: TestUser; // owns the projects (owner ⇒ master rights)
  let bob: TestUser; // developer
  let carol: TestUser; // reporter
  let gina: TestUser; // guest
  let dave: TestUser; // signed-in non-member
  let eve: TestUser; // external user, non-member
  const pushes: PushReceived[] = [];

  const as = (u: TestUser, req: Test) => req.set('PRIVATE-TOKEN', u.token);
  const root = (req: Test) => req.set('PRIVATE-TOKEN', t.root.token);
  const basic = (login: string, secret: string) => `Basic ${Buffer.from(`${login}:${secret}`).toString('base64')}`;

  let dirSeq = 0;
  const newDir = (name: string) => {
    const d = join(tmp, `${++dirSeq}-${name}`);
    mkdirSync(d, { recursive: true });
    return d;
  };

  const git = (args: string[], cwd: string = tmp, env: Record<string, string> = {}) => cli.run(args, cwd, env);
  const ok = (args: string[], cwd?: string, env?: Record<string, string>) => cli.ok(args, cwd, env);
  const url = (path: string, login?: string, secret?: string) => cli.url(path, login, secret);
  const commit = (dir: string, files: Record<string, string>, message: string) => cli.commit(dir, files, message);

  /** A fresh local repository with one commit, its `origin` set to `remote`. */
  async function localRepo(remote: string, files: Record<string, string> = { 'README.md': '# hello\n' }): Promise<{ dir: string; sha: string }> {
    const dir = newDir('work');
    await ok(['init', '-q', dir]);
    const sha = await commit(dir, files, 'initial commit');
    await ok(['remote', 'add', 'origin', remote], dir);
    return { dir, sha };
  }

  async function createProject(owner: TestUser, name: string, visibility: number, extra: Json = {}): Promise<Json> {
    const res = await as(owner, t.http.post(`${API}/projects`)).send({ name, visibility_level: visibility, ...extra });
    if (res.status !== 201) throw new Error(`create project: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  }

  async function addMember(project: Json, user: TestUser, level: number): Promise<void> {
    await as(alice, t.http.post(`${API}/projects/${project.id}/members`))
      .send({ user_id: user.id, access_level: level })
      .expect(201);
  }

  async function branchSha(project: Json, branch: string): Promise<string | null> {
    const res = await as(alice, t.http.get(`${API}/projects/${project.id}/repository/branches/${encodeURIComponent(branch)}`));
    return res.status === 200 ? res.body.commit.id : null;
  }

  /** The refs the server advertises, as `ref → sha`. */
  async function remoteRefs(path: string): Promise<Record<string, string>> {
    const out = await ok(['ls-remote', url(path, 'alice', alice.token)]);
    return Object.fromEntries(
      out
        .split('\n')
        .filter(Boolean)
        .map((l) => l.split('\t').reverse()),
    );
  }

  beforeAll(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'glv3-git-http-'));
    t = await startTestApp();
    cli = await GitCli.listen(t, tmp);
    void t.app.app.get(DomainEvents).subscribe('push.received', 'test.pushes', (e) => {
      pushes.push(e);
    });
    alice = await t.createUser({ username: 'alice', name: 'Alice Liddell', projects_limit: 100 });
    bob = await t.createUser({ username: 'bob', name: 'Bob Builder' });
    carol = await t.createUser({ username: 'carol', name: 'Carol Reporter' });
    gina = await t.createUser({ username: 'gina', name: 'Gina Guest' });
    dave = await t.createUser({ username: 'dave', name: 'Dave Outsider' });
    eve = await t.createUser({ username: 'eve', name: 'Eve External', external: true });
  });
  afterAll(async () => {
    await t.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  // ------------------------------------------------------------------ public project, first push

  describe('a public project', () => {
    let project: Json;
    let first: { dir: string; sha: string };

    beforeAll(async () => {
      project = await createProject(alice, 'pub', 20);
      expect(project.default_branch ?? null).toBeNull();
      await addMember(project, bob, 30);
      first = await localRepo(url('alice/pub', 'alice', alice.token), { 'README.md': '# public\n', 'src/main.c': 'int main(){}\n' });
      await ok(['push', '-q', 'origin', 'master'], first.dir);
    });

    it('the first push lands, sets the default branch and protects it (default_branch_protection 1)', async () => {
      expect(await branchSha(project, 'master')).toBe(first.sha);
      const p = await as(alice, t.http.get(`${API}/projects/${project.id}`)).expect(200);
      expect(p.body.default_branch).toBe('master');
      const b = await as(alice, t.http.get(`${API}/projects/${project.id}/repository/branches/master`)).expect(200);
      expect(b.body).toMatchObject({ name: 'master', protected: true, developers_can_push: true });
      expect(b.body.commit).toMatchObject({ id: first.sha, message: 'initial commit\n', author_email: 'git-tester@example.com' });
    });

    it('is cloned anonymously, with the pushed content', async () => {
      const dir = join(newDir('anon'), 'clone');
      await ok(['clone', '-q', url('alice/pub'), dir]);
      expect(readFileSync(join(dir, 'README.md'), 'utf8')).toBe('# public\n');
      expect(readFileSync(join(dir, 'src/main.c'), 'utf8')).toBe('int main(){}\n');
      expect((await ok(['rev-parse', 'HEAD'], dir)).trim()).toBe(first.sha);
      // the clone checked out the default branch the server advertised
      expect((await ok(['symbolic-ref', 'HEAD'], dir)).trim()).toBe('refs/heads/master');
    });

    it('advertises refs to anonymous callers (200, smart HTTP content type, no cache)', async () => {
      const res = await t.http.get('/alice/pub.git/info/refs').query({ service: 'git-upload-pack' }).buffer(true).parse(binaryParser);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('application/x-git-upload-pack-advertisement');
      expect(res.headers['cache-control']).toMatch(/no-cache/);
      const body = (res.body as Buffer).toString('latin1');
      expect(body.startsWith('001e# service=git-upload-pack\n0000')).toBe(true);
      expect(body).toContain(`${first.sha} refs/heads/master`);
    });

    it('refuses an anonymous push with 401 and a Basic challenge', async () => {
      const res = await t.http.get('/alice/pub.git/info/refs').query({ service: 'git-receive-pack' });
      expect(res.status).toBe(401);
      expect(res.headers['www-authenticate']).toMatch(/^Basic /);
      const dir = join(newDir('anon-push'), 'c');
      await ok(['clone', '-q', url('alice/pub'), dir]);
      await commit(dir, { 'x.txt': 'x\n' }, 'anonymous change');
      const r = await git(['push', 'origin', 'master'], dir);
      expect(r.code).not.toBe(0);
      expect(await branchSha(project, 'master')).toBe(first.sha);
    });

    it('refuses the dumb protocol and unknown services', async () => {
      await t.http.get('/alice/pub.git/info/refs').expect(403);
      await t.http.get('/alice/pub.git/info/refs').query({ service: 'git-shell' }).expect(403);
    });

    it('a developer pushes a new branch; a "pushed new" event and a push domain event are recorded', async () => {
      const dir = join(newDir('bob'), 'c');
      await ok(['clone', '-q', url('alice/pub', 'bob', bob.token), dir]);
      await ok(['checkout', '-q', '-b', 'feature/one'], dir);
      const c1 = await commit(dir, { 'feature.txt': 'one\n' }, 'feature: one');
      const c2 = await commit(dir, { 'feature.txt': 'one\ntwo\n', 'README.md': '# public!\n' }, 'feature: two');
      const before = pushes.length;
      await ok(['push', '-q', 'origin', 'feature/one'], dir);
      expect(await branchSha(project, 'feature/one')).toBe(c2);
      // not protected: only the default branch was
      const b = await as(bob, t.http.get(`${API}/projects/${project.id}/repository/branches/feature%2Fone`)).expect(200);
      expect(b.body.protected).toBe(false);

      const events = (await as(alice, t.http.get(`${API}/projects/${project.id}/events`)).expect(200)).body as Json[];
      const ev = events.find((e) => e.data?.ref === 'refs/heads/feature/one');
      expect(ev).toBeDefined();
      expect(ev).toMatchObject({ action_name: 'pushed new', author_id: bob.id, author_username: 'bob', project_id: project.id });
      expect(ev!.data).toMatchObject({
        object_kind: 'push',
        before: ZERO,
        after: c2,
        ref: 'refs/heads/feature/one',
        user_id: bob.id,
        user_name: 'Bob Builder',
        total_commits_count: 2,
        repository: expect.objectContaining({ name: 'pub', visibility_level: 20 }),
      });
      const ids = (ev!.data.commits as Json[]).map((c) => c.id).sort();
      expect(ids).toEqual([c1, c2].sort());
      const two = (ev!.data.commits as Json[]).find((c) => c.id === c2)!;
      expect(two).toMatchObject({
        message: 'feature: two\n',
        author: { name: 'Git Tester', email: 'git-tester@example.com' },
        modified: expect.arrayContaining(['README.md', 'feature.txt']),
      });
      const one = (ev!.data.commits as Json[]).find((c) => c.id === c1)!;
      expect(one.added).toEqual(['feature.txt']);

      // the domain event for CI and hooks
      await new Promise((r) => setImmediate(r));
      const pushed = pushes.slice(before).find((p) => p.projectId === project.id);
      expect(pushed).toMatchObject({ userId: bob.id, updates: [{ oldSha: ZERO, newSha: c2, ref: 'refs/heads/feature/one' }] });
    });

    it("the repository write lock covers a push's git run only: not its ref advertisement, nor its reactions", async () => {
      const locks = t.app.app.get(RepositoryLocks);
      const dir = join(newDir('bob-lock'), 'c');
      await ok(['clone', '-q', url('alice/pub', 'bob', bob.token), dir]);
      await ok(['checkout', '-q', '-b', 'lock-scope'], dir);
      const sha = await commit(dir, { 'lock.txt': 'lock\n' }, 'lock scope');

      await as(alice, t.http.post(`${API}/projects/${project.id}/repository/branches`))
        .send({ branch_name: 'lock-scratch', ref: 'master' })
        .expect(201);

      // while an API write holds the lock, a push's advertisement (info/refs) still answers
      const release = await locks.hold(project.id);
      try {
        const adv = await t.http
          .get('/alice/pub.git/info/refs?service=git-receive-pack')
          .set('Authorization', basic('bob', bob.token))
          .buffer(true)
          .parse(binaryParser)
          .timeout(10_000)
          .expect(200);
        expect(adv.headers['content-type']).toBe('application/x-git-receive-pack-advertisement');
        expect((adv.body as Buffer).toString('latin1')).toContain('# service=git-receive-pack');
        expect((adv.body as Buffer).toString('latin1')).toContain('refs/heads/master');
      } finally {
        await release();
      }

      // the push's reactions run after its lock is given back: a files-API write (whose own reactions
      // are not held) lands while they wait
      const original = PushService.prototype.afterPush;
      let open!: () => void;
      const gate = new Promise<void>((r) => (open = r));
      let reacting!: () => void;
      const reached = new Promise<void>((r) => (reacting = r));
      const spy = jest.spyOn(PushService.prototype, 'afterPush').mockImplementationOnce(async function (this: PushService, ...args) {
        reacting();
        await gate;
        return original.apply(this, args);
      });
      try {
        const pushing = ok(['push', '-q', 'origin', 'lock-scope'], dir);
        await reached;
        expect(await branchSha(project, 'lock-scope')).toBe(sha); // the refs moved, the reactions wait
        await as(alice, t.http.post(`${API}/projects/${project.id}/repository/files`))
          .send({ file_path: 'during-reactions.txt', branch_name: 'lock-scratch', content: 'x', commit_message: 'while a push reacts' })
          .expect(201);
        let done = false;
        void pushing.then(() => (done = true));
        await new Promise((r) => setTimeout(r, 50));
        expect(done).toBe(false); // git push returns only once its reactions ran
        open();
        await pushing;
      } finally {
        open();
        spy.mockRestore();
      }
      const events = (await as(alice, t.http.get(`${API}/projects/${project.id}/events`)).expect(200)).body as Json[];
      expect(events.find((e) => e.data?.ref === 'refs/heads/lock-scope')).toMatchObject({ action_name: 'pushed new', author_id: bob.id });
    });

    it('the first push event is "pushed new" with all commits; a later one is "pushed to"', async () => {
      const events = (await as(alice, t.http.get(`${API}/projects/${project.id}/events`)).expect(200)).body as Json[];
      const firstPush = events.find((e) => e.data?.ref === 'refs/heads/master' && e.data.before === ZERO);
      expect(firstPush).toMatchObject({ action_name: 'pushed new', author_id: alice.id });
      expect(firstPush!.data.total_commits_count).toBe(1);
      expect(firstPush!.data.commits).toHaveLength(1);
      expect(firstPush!.data.commits[0]).toMatchObject({ id: first.sha, added: expect.arrayContaining(['README.md', 'src/main.c']) });

      // a developer's fast-forward push to the protected default branch (developers may push at level 1)
      const dir = join(newDir('ff'), 'c');
      await ok(['clone', '-q', url('alice/pub', 'bob', bob.token), dir]);
      const next = await commit(dir, { 'CHANGELOG.md': 'v1\n' }, 'changelog');
      await ok(['push', '-q', 'origin', 'master'], dir);
      expect(await branchSha(project, 'master')).toBe(next);
      const after = (await as(alice, t.http.get(`${API}/projects/${project.id}/events`)).expect(200)).body as Json[];
      expect(after[0]).toMatchObject({ action_name: 'pushed to', author_id: bob.id });
      expect(after[0].data).toMatchObject({ before: first.sha, after: next, ref: 'refs/heads/master', total_commits_count: 1 });
      expect(after[0].data.commits.map((c: Json) => c.id)).toEqual([next]);
      // last_activity_at moved
      const p = (await as(alice, t.http.get(`${API}/projects/${project.id}`)).expect(200)).body;
      expect(new Date(p.last_activity_at).getTime()).toBeGreaterThanOrEqual(new Date(after[0].created_at).getTime() - 1000);
    });

    it('a developer cannot force-push the protected default branch: refused, nothing changes', async () => {
      const tip = (await branchSha(project, 'master'))!;
      const dir = join(newDir('force'), 'c');
      await ok(['clone', '-q', url('alice/pub', 'bob', bob.token), dir]);
      await ok(['reset', '-q', '--hard', 'HEAD~1'], dir);
      await commit(dir, { 'rewrite.txt': 'rewritten\n' }, 'rewritten history');
      const r = await git(['push', '--force', 'origin', 'master'], dir);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toMatch(/force push/i);
      expect(await branchSha(project, 'master')).toBe(tip);
      // each ref is judged alone (the update hook): the new branch sent with it lands, master does not move
      const both = await git(['push', '--force', '--porcelain', 'origin', 'master', 'master:sneaky-new'], dir);
      expect(both.code).not.toBe(0);
      expect(both.stdout).toContain('refs/heads/master:refs/heads/master\t[remote rejected] (hook declined)');
      expect(await branchSha(project, 'sneaky-new')).toBe((await ok(['rev-parse', 'HEAD'], dir)).trim());
      expect(await branchSha(project, 'master')).toBe(tip);
    });

    it('a master cannot force-push a protected branch either', async () => {
      const tip = (await branchSha(project, 'master'))!;
      const dir = join(newDir('force-master'), 'c');
      await ok(['clone', '-q', url('alice/pub', 'alice', alice.token), dir]);
      await ok(['reset', '-q', '--hard', 'HEAD~1'], dir);
      await commit(dir, { 'rewrite.txt': 'by the owner\n' }, 'owner rewrite');
      const r = await git(['push', '--force', 'origin', 'master'], dir);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toMatch(/not allowed to force push/i);
      expect(await branchSha(project, 'master')).toBe(tip);
    });

    it('an unprotected branch may be force-pushed and deleted by a developer', async () => {
      const dir = join(newDir('topic'), 'c');
      await ok(['clone', '-q', url('alice/pub', 'bob', bob.token), dir]);
      await ok(['checkout', '-q', '-b', 'topic'], dir);
      await commit(dir, { 'a.txt': 'a\n' }, 'topic a');
      await ok(['push', '-q', 'origin', 'topic'], dir);
      await ok(['reset', '-q', '--hard', 'HEAD~1'], dir);
      const rewritten = await commit(dir, { 'b.txt': 'b\n' }, 'topic b');
      await ok(['push', '-q', '--force', 'origin', 'topic'], dir);
      expect(await branchSha(project, 'topic')).toBe(rewritten);
      await ok(['push', '-q', 'origin', ':topic'], dir);
      expect(await branchSha(project, 'topic')).toBeNull();
      const events = (await as(alice, t.http.get(`${API}/projects/${project.id}/events`)).expect(200)).body as Json[];
      expect(events[0]).toMatchObject({ action_name: 'deleted', author_id: bob.id });
      expect(events[0].data).toMatchObject({ ref: 'refs/heads/topic', before: rewritten, after: ZERO });
    });

    it('deleting a protected branch by push is refused, even for a master', async () => {
      const dir = join(newDir('del'), 'c');
      await ok(['clone', '-q', url('alice/pub', 'alice', alice.token), dir]);
      await ok(['push', '-q', 'origin', 'master:release'], dir);
      await as(alice, t.http.put(`${API}/projects/${project.id}/repository/branches/release/protect`)).expect(200);
      const tip = await branchSha(project, 'release');
      expect(tip).not.toBeNull();
      let r = await git(['push', 'origin', ':release'], dir);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toMatch(/not allowed to delete protected branch/i);
      expect(await branchSha(project, 'release')).toBe(tip);
      r = await git(['push', 'origin', ':master'], dir);
      expect(r.code).not.toBe(0);
      expect(await branchSha(project, 'master')).not.toBeNull();
    });

    it('tags are pushed by developers and recorded as tag pushes', async () => {
      const dir = join(newDir('tag'), 'c');
      await ok(['clone', '-q', url('alice/pub', 'bob', bob.token), dir]);
      await ok(['tag', '-a', 'v1.0', '-m', 'release 1.0'], dir);
      await ok(['push', '-q', 'origin', 'v1.0'], dir);
      const tag = await as(bob, t.http.get(`${API}/projects/${project.id}/repository/tags/v1.0`)).expect(200);
      expect(tag.body).toMatchObject({ name: 'v1.0', message: 'release 1.0', release: null });
      const events = (await as(alice, t.http.get(`${API}/projects/${project.id}/events`)).expect(200)).body as Json[];
      expect(events[0]).toMatchObject({ action_name: 'pushed new', author_id: bob.id });
      expect(events[0].data).toMatchObject({ object_kind: 'tag_push', ref: 'refs/tags/v1.0' });
    });

    it('protocol v2 and v0 both work (ls-remote, clone, fetch)', async () => {
      const trace = join(tmp, 'trace-v2.txt');
      const v2 = await ok(['-c', 'protocol.version=2', 'ls-remote', url('alice/pub')], tmp, { GIT_TRACE_PACKET: trace });
      expect(v2).toContain('\trefs/heads/master');
      expect(v2).toContain('\trefs/tags/v1.0');
      expect(readFileSync(trace, 'utf8')).toMatch(/version 2/);
      const v0 = await ok(['-c', 'protocol.version=0', 'ls-remote', url('alice/pub')]);
      const sorted = (out: string) => out.split('\n').filter(Boolean).sort();
      expect(sorted(v0)).toEqual(sorted(v2));
      for (const version of ['0', '2']) {
        const dir = join(newDir(`v${version}`), 'c');
        await ok(['-c', `protocol.version=${version}`, 'clone', '-q', url('alice/pub'), dir]);
        expect((await ok(['rev-parse', 'HEAD'], dir)).trim()).toBe(await branchSha(project, 'master'));
        await ok(['-c', `protocol.version=${version}`, 'fetch', '-q', 'origin', 'feature/one'], dir);
        expect((await ok(['rev-parse', 'FETCH_HEAD'], dir)).trim()).toBe(await branchSha(project, 'feature/one'));
      }
      // the advertisement itself for a v2 client
      const res = await t.http
        .get('/alice/pub.git/info/refs')
        .query({ service: 'git-upload-pack' })
        .set('Git-Protocol', 'version=2')
        .buffer(true)
        .parse(binaryParser);
      expect(res.status).toBe(200);
      expect((res.body as Buffer).toString('latin1')).toContain('version 2');
    });

    it('a push whose client goes away mid-body leaves no git process behind (none spins on the missing body)', async () => {
      // git 2.39's http-backend loops forever on read() = 0 when its stdin ends before CONTENT_LENGTH;
      // and killing the `git` wrapper alone left its http-backend child running
      const { connect } = await import('node:net');
      const sock = connect(cli.port, '127.0.0.1');
      await new Promise((r) => sock.once('connect', r));
      const auth = Buffer.from(`alice:${alice.token}`).toString('base64');
      // the list of ref updates whole (git starts only once it has come: smart-http-request.ts), the pack never
      sock.write(
        `POST /alice/pub.git/git-receive-pack HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Basic ${auth}\r\n` +
          'Content-Type: application/x-git-receive-pack-request\r\nContent-Length: 1000\r\n\r\n' +
          pkt(`${ZERO} ${'1'.repeat(40)} refs/heads/gone\0report-status\n`) +
          '0000',
      );
      const root = t.config.dataDir;
      const gitsUnderRoot = () =>
        readdirSync('/proc')
          .filter((pid) => /^\d+$/.test(pid))
          .filter((pid) => {
            try {
              return /http-backend|receive-pack/.test(readFileSync(`/proc/${pid}/cmdline`, 'utf8')) && readlinkSync(`/proc/${pid}/cwd`).startsWith(root);
            } catch {
              return false; // gone meanwhile
            }
          });
      // the request reached git: its receive-pack is running, waiting for the rest of the body
      for (let i = 0; i < 100 && gitsUnderRoot().length === 0; i++) await new Promise((r) => setTimeout(r, 50));
      expect(gitsUnderRoot().length).toBeGreaterThan(0);
      sock.destroy();
      for (let i = 0; i < 100 && gitsUnderRoot().length > 0; i++) await new Promise((r) => setTimeout(r, 50));
      expect(gitsUnderRoot()).toEqual([]);
      expect(await branchSha(project, 'gone')).toBeNull();
    });

    it("a pack that lacks objects its commit names is refused by receive-pack's connectivity check (with our settings for it); no ref moves", async () => {
      // a commit on master whose new tree and blob stay on the client: the pack holds the commit alone
      const local = await localRepo(url('alice/pub', 'alice', alice.token));
      await ok(['fetch', '-q', 'origin', 'master'], local.dir);
      await ok(['reset', '-q', '--hard', 'FETCH_HEAD'], local.dir);
      const sha = await commit(local.dir, { 'torn/only-here.txt': `never sent ${Date.now()}\n` }, 'a commit without its tree');
      const pack = execFileSync('git', ['pack-objects', '--stdout', '-q'], { cwd: local.dir, input: `${sha}\n` });
      // one new branch `torn` at `sha`, with the given pack, as alice
      const receivePack = async (pack: Buffer) => {
        const res = await t.http
          .post('/alice/pub.git/git-receive-pack')
          .set('Authorization', basic('alice', alice.token))
          .set('Content-Type', 'application/x-git-receive-pack-request')
          .send(Buffer.concat([Buffer.from(pkt(`${ZERO} ${sha} refs/heads/torn\0report-status\n`) + '0000'), pack]))
          .buffer(true)
          .parse(binaryParser);
        expect(res.status).toBe(200);
        return (res.body as Buffer).toString('latin1');
      };
      const report = await receivePack(pack);
      expect(report).toContain('unpack ok');
      expect(report).toContain('ng refs/heads/torn missing necessary objects');
      expect(await branchSha(project, 'torn')).toBeNull();
      // the same commit with its objects lands
      const whole = execFileSync('git', ['pack-objects', '--stdout', '-q', '--revs'], { cwd: local.dir, input: `${sha}\n^FETCH_HEAD\n` });
      expect(await receivePack(whole)).toContain('ok refs/heads/torn');
      expect(await branchSha(project, 'torn')).toBe(sha);
    });

    it('a gzip-encoded upload-pack request is decoded (explicitly, and as git sends it for large negotiations)', async () => {
      // explicit: a v0 "want" request compressed with gzip
      const tip = (await branchSha(project, 'master'))!;
      const body = gzipSync(Buffer.from(pkt(`want ${tip} no-progress\n`) + '0000' + pkt('done\n')));
      const res = await t.http
        .post('/alice/pub.git/git-upload-pack')
        .set('Content-Type', 'application/x-git-upload-pack-request')
        .set('Content-Encoding', 'gzip')
        .send(body)
        .buffer(true)
        .parse(binaryParser);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('application/x-git-upload-pack-result');
      const out = res.body as Buffer;
      expect(out.subarray(0, 8).toString('latin1')).toBe('0008NAK\n');
      expect(out.indexOf('PACK')).toBeGreaterThan(0);

      // implicit: a clone with more than 1 KiB of "want" lines makes git gzip its request
      const dir = join(newDir('many'), 'c');
      await ok(['clone', '-q', url('alice/pub', 'alice', alice.token), dir]);
      for (let i = 0; i < 30; i++) {
        const c = (await ok(['commit-tree', 'HEAD^{tree}', '-p', 'HEAD', '-m', `many ${i}`], dir)).trim();
        await ok(['branch', `many-${i}`, c], dir);
      }
      await ok(['push', '-q', 'origin', '--all'], dir);
      const trace = join(tmp, 'trace-curl.txt');
      const target = join(newDir('many-clone'), 'c');
      await ok(['-c', 'protocol.version=0', 'clone', '-q', '--mirror', url('alice/pub'), target], tmp, { GIT_TRACE_CURL: trace, GIT_TRACE_CURL_NO_DATA: '1' });
      expect(readFileSync(trace, 'utf8')).toMatch(/Content-Encoding: gzip/i);
      const refs = await ok(['for-each-ref', '--format=%(refname)', 'refs/heads/many-*'], target);
      expect(refs.split('\n').filter(Boolean)).toHaveLength(30);
    });
  });

  // ------------------------------------------------------------------ private project and credentials

  describe('a private project', () => {
    let project: Json;
    let sha: string;

    beforeAll(async () => {
      project = await createProject(alice, 'secret', 0);
      await addMember(project, bob, 30);
      await addMember(project, carol, 20);
      await addMember(project, gina, 10);
      const first = await localRepo(url('alice/secret', 'alice', alice.token), { 'SECRET.md': 'classified\n' });
      await ok(['push', '-q', 'origin', 'master'], first.dir);
      sha = first.sha;
    });

    it('anonymous: ls-remote fails, info/refs answers 401 with a Basic challenge', async () => {
      const r = await git(['ls-remote', url('alice/secret')]);
      expect(r.code).not.toBe(0);
      expect(r.stdout).not.toContain(sha);
      const res = await t.http.get('/alice/secret.git/info/refs').query({ service: 'git-upload-pack' });
      expect(res.status).toBe(401);
      expect(res.headers['www-authenticate']).toMatch(/^Basic realm=/);
      // a project that does not exist looks the same to an anonymous caller
      const missing = await t.http.get('/alice/no-such-project.git/info/refs').query({ service: 'git-upload-pack' });
      expect(missing.status).toBe(401);
      expect(missing.headers['www-authenticate']).toMatch(/^Basic /);
    });

    it('is cloned with username + private token', async () => {
      const dir = join(newDir('token'), 'c');
      await ok(['clone', '-q', url('alice/secret', 'alice', alice.token), dir]);
      expect(readFileSync(join(dir, 'SECRET.md'), 'utf8')).toBe('classified\n');
    });

    it('is cloned with username + password (any case of the username), and by a reporter', async () => {
      const dir = join(newDir('password'), 'c');
      await ok(['clone', '-q', url('alice/secret', 'ALICE', alice.password), dir]);
      expect((await ok(['rev-parse', 'HEAD'], dir)).trim()).toBe(sha);
      const dir2 = join(newDir('reporter'), 'c');
      await ok(['clone', '-q', url('alice/secret', 'carol', carol.password), dir2]);
      expect(readFileSync(join(dir2, 'SECRET.md'), 'utf8')).toBe('classified\n');
    });

    it('is cloned with oauth2 + an OAuth access token from the password grant', async () => {
      const tok = await t.http.post('/oauth/token').type('form').send({ grant_type: 'password', username: 'bob', password: bob.password }).expect(200);
      const dir = join(newDir('oauth'), 'c');
      await ok(['clone', '-q', url('alice/secret', 'oauth2', tok.body.access_token), dir]);
      expect((await ok(['rev-parse', 'HEAD'], dir)).trim()).toBe(sha);
      // the OAuth identity may push like the user (developer)
      await ok(['checkout', '-q', '-b', 'oauth-branch'], dir);
      const c = await commit(dir, { 'o.txt': 'oauth\n' }, 'via oauth');
      await ok(['push', '-q', 'origin', 'oauth-branch'], dir);
      expect(await branchSha(project, 'oauth-branch')).toBe(c);
    });

    it('wrong or mismatched credentials answer 401', async () => {
      for (const auth of [
        basic('alice', 'wrong-password'),
        basic('bob', alice.token), // another user's private token
        basic('oauth2', 'not-a-token'),
        basic('gitlab-ci-token', 'not-a-build-token'),
        basic('alice', ''),
        'Bearer something',
      ]) {
        const res = await t.http.get('/alice/secret.git/info/refs').query({ service: 'git-upload-pack' }).set('Authorization', auth);
        expect([auth, res.status]).toEqual([auth, 401]);
        expect(res.headers['www-authenticate']).toMatch(/^Basic /);
      }
      const r = await git(['ls-remote', url('alice/secret', 'alice', 'wrong-password')]);
      expect(r.code).not.toBe(0);
    });

    it('a signed-in non-member gets 404 (also for a project that does not exist)', async () => {
      const res = await t.http.get('/alice/secret.git/info/refs').query({ service: 'git-upload-pack' }).set('Authorization', basic('dave', dave.token));
      expect(res.status).toBe(404);
      const missing = await t.http.get('/alice/nope.git/info/refs').query({ service: 'git-upload-pack' }).set('Authorization', basic('dave', dave.token));
      expect(missing.status).toBe(404);
      const r = await git(['ls-remote', url('alice/secret', 'dave', dave.password)]);
      expect(r.code).not.toBe(0);
      expect(r.stdout).not.toContain(sha);
    });

    it('a guest may not download code (403)', async () => {
      const res = await t.http.get('/alice/secret.git/info/refs').query({ service: 'git-upload-pack' }).set('Authorization', basic('gina', gina.token));
      expect(res.status).toBe(403);
      const r = await git(['ls-remote', url('alice/secret', 'gina', gina.token)]);
      expect(r.code).not.toBe(0);
    });

    it('a reporter may not push: 403, nothing changes', async () => {
      const res = await t.http.get('/alice/secret.git/info/refs').query({ service: 'git-receive-pack' }).set('Authorization', basic('carol', carol.token));
      expect(res.status).toBe(403);
      const dir = join(newDir('reporter-push'), 'c');
      await ok(['clone', '-q', url('alice/secret', 'carol', carol.token), dir]);
      await ok(['checkout', '-q', '-b', 'reporter-branch'], dir);
      await commit(dir, { 'r.txt': 'r\n' }, 'reporter change');
      const r = await git(['push', 'origin', 'reporter-branch'], dir);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toMatch(/403/);
      expect(await branchSha(project, 'reporter-branch')).toBeNull();
    });

    it('refs outside branches and tags are refused', async () => {
      const dir = join(newDir('custom-ref'), 'c');
      await ok(['clone', '-q', url('alice/secret', 'alice', alice.token), dir]);
      const r = await git(['push', 'origin', 'HEAD:refs/custom/thing'], dir);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toMatch(/not allowed to push to refs\/custom\/thing/);
      expect(await remoteRefs('alice/secret')).not.toHaveProperty('refs/custom/thing');
    });

    it('a blocked user is refused with their token and their password (401)', async () => {
      const blocky = await t.createUser({ username: 'blocky', name: 'Blocked Member' });
      await addMember(project, blocky, 30);
      await ok(['ls-remote', url('alice/secret', 'blocky', blocky.token)]);
      await root(t.http.put(`${API}/users/${blocky.id}/block`)).expect(200);
      for (const secret of [blocky.token, blocky.password]) {
        const res = await t.http.get('/alice/secret.git/info/refs').query({ service: 'git-upload-pack' }).set('Authorization', basic('blocky', secret));
        expect(res.status).toBe(401);
      }
      expect((await git(['ls-remote', url('alice/secret', 'blocky', blocky.token)])).code).not.toBe(0);
    });

    it('a build token (gitlab-ci-token) clones its own project only, and never pushes', async () => {
      const other = await createProject(alice, 'other-secret', 0);
      // the CI area's resolver (RunnerApiService.resolveBuildToken): GitLab 8.x's build token, the project's runners token
      const buildToken = (await as(alice, t.http.get(`${API}/projects/${project.id}`)).expect(200)).body.runners_token as string;
      const dir = join(newDir('ci'), 'c');
      await ok(['clone', '-q', url('alice/secret', 'gitlab-ci-token', buildToken), dir]);
      expect((await ok(['rev-parse', 'HEAD'], dir)).trim()).toBe(sha);
      const push = await t.http
        .get('/alice/secret.git/info/refs')
        .query({ service: 'git-receive-pack' })
        .set('Authorization', basic('gitlab-ci-token', buildToken));
      expect(push.status).toBe(403);
      const foreign = await t.http
        .get(`/alice/${other.path}.git/info/refs`)
        .query({ service: 'git-upload-pack' })
        .set('Authorization', basic('gitlab-ci-token', buildToken));
      expect(foreign.status).toBe(404);
      const bad = await t.http
        .get('/alice/secret.git/info/refs')
        .query({ service: 'git-upload-pack' })
        .set('Authorization', basic('gitlab-ci-token', 'build-token-999'));
      expect(bad.status).toBe(401);
    });
  });

  // ------------------------------------------------------------------ internal project

  describe('an internal project', () => {
    let sha: string;
    beforeAll(async () => {
      await createProject(alice, 'inside', 10);
      const first = await localRepo(url('alice/inside', 'alice', alice.token), { 'INTERNAL.md': 'for staff\n' });
      await ok(['push', '-q', 'origin', 'master'], first.dir);
      sha = first.sha;
    });

    it('is cloned by any signed-in non-external user', async () => {
      const dir = join(newDir('internal'), 'c');
      await ok(['clone', '-q', url('alice/inside', 'dave', dave.token), dir]);
      expect((await ok(['rev-parse', 'HEAD'], dir)).trim()).toBe(sha);
      expect(readFileSync(join(dir, 'INTERNAL.md'), 'utf8')).toBe('for staff\n');
    });

    it('is not readable by an external user (404) nor anonymously (401)', async () => {
      const ext = await t.http.get('/alice/inside.git/info/refs').query({ service: 'git-upload-pack' }).set('Authorization', basic('eve', eve.token));
      expect(ext.status).toBe(404);
      const anon = await t.http.get('/alice/inside.git/info/refs').query({ service: 'git-upload-pack' });
      expect(anon.status).toBe(401);
      expect((await git(['ls-remote', url('alice/inside')])).code).not.toBe(0);
    });

    it('a non-member may not push (403)', async () => {
      const res = await t.http.get('/alice/inside.git/info/refs').query({ service: 'git-receive-pack' }).set('Authorization', basic('dave', dave.token));
      expect(res.status).toBe(403);
    });
  });

  describe('an empty project', () => {
    it('is cloned (empty) and its first push works', async () => {
      const project = await createProject(alice, 'empty-one', 0);
      const dir = join(newDir('empty'), 'c');
      const r = await git(['clone', url('alice/empty-one', 'alice', alice.token), dir]);
      expect(r.code).toBe(0);
      expect(r.stderr).toMatch(/empty repository/);
      expect((await ok(['ls-remote', url('alice/empty-one', 'alice', alice.token)])).trim()).toBe('');
      const sha = await commit(dir, { 'first.txt': 'first\n' }, 'first');
      await ok(['push', '-q', 'origin', 'master'], dir);
      expect(await branchSha(project, 'master')).toBe(sha);
    });
  });

  describe('a first push without master', () => {
    it('makes the pushed branch the default branch, protected', async () => {
      const project = await createProject(alice, 'no-master', 0);
      const first = await localRepo(url('alice/no-master', 'alice', alice.token));
      await ok(['branch', '-m', 'master', 'develop'], first.dir);
      await ok(['push', '-q', 'origin', 'develop'], first.dir);
      const p = await as(alice, t.http.get(`${API}/projects/${project.id}`)).expect(200);
      expect(p.body.default_branch).toBe('develop');
      const b = await as(alice, t.http.get(`${API}/projects/${project.id}/repository/branches/develop`)).expect(200);
      expect(b.body).toMatchObject({ protected: true, commit: { id: first.sha } });
      // a clone checks out that branch
      const dir = join(newDir('no-master-clone'), 'c');
      await ok(['clone', '-q', url('alice/no-master', 'alice', alice.token), dir]);
      expect((await ok(['symbolic-ref', 'HEAD'], dir)).trim()).toBe('refs/heads/develop');
      // a later master does not take over
      await ok(['push', '-q', 'origin', 'develop:master'], first.dir);
      expect((await as(alice, t.http.get(`${API}/projects/${project.id}`)).expect(200)).body.default_branch).toBe('develop');
      expect((await as(alice, t.http.get(`${API}/projects/${project.id}/repository/branches/master`)).expect(200)).body.protected).toBe(false);
    });
  });

  // ------------------------------------------------------------------ default_branch_protection = 2

  describe('default_branch_protection = 2 (full)', () => {
    let project: Json;
    let first: { dir: string; sha: string };

    beforeAll(async () => {
      await root(t.http.put(`${API}/application/settings`))
        .send({ default_branch_protection: 2 })
        .expect(200);
      try {
        project = await createProject(alice, 'guarded', 0);
        await addMember(project, bob, 30);
        first = await localRepo(url('alice/guarded', 'alice', alice.token));
        await ok(['push', '-q', 'origin', 'master'], first.dir);
      } finally {
        await root(t.http.put(`${API}/application/settings`))
          .send({ default_branch_protection: 1 })
          .expect(200);
      }
    });

    it('protects the default branch without developer pushes', async () => {
      const b = await as(alice, t.http.get(`${API}/projects/${project.id}/repository/branches/master`)).expect(200);
      expect(b.body).toMatchObject({ protected: true, developers_can_push: false });
    });

    it("refuses a developer's push to master and changes nothing; other branches are fine", async () => {
      const before = await branchSha(project, 'master');
      expect(before).toBe(first.sha);
      const dir = join(newDir('guarded-dev'), 'c');
      await ok(['clone', '-q', url('alice/guarded', 'bob', bob.token), dir]);
      const c = await commit(dir, { 'dev.txt': 'dev\n' }, 'developer change');
      const r = await git(['push', 'origin', 'master'], dir);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toMatch(/not allowed to push code to protected branches/i);
      expect(await branchSha(project, 'master')).toBe(before);
      const refs = await remoteRefs('alice/guarded');
      expect(refs['refs/heads/master']).toBe(before);
      // the same commit is accepted on an unprotected branch
      await ok(['push', '-q', 'origin', 'master:dev-branch'], dir);
      expect(await branchSha(project, 'dev-branch')).toBe(c);
    });

    it('a master may push to it', async () => {
      const next = await commit(first.dir, { 'owner.txt': 'owner\n' }, 'owner change');
      await ok(['push', '-q', 'origin', 'master'], first.dir);
      expect(await branchSha(project, 'master')).toBe(next);
    });
  });

  // ------------------------------------------------------------------ how pushed objects are stored

  describe('storage of pushed objects', () => {
    it('a push is kept as the pack git sent (no loose objects); housekeeping packs what the app writes itself', async () => {
      const project = await createProject(alice, 'packs', 0);
      const gitService = t.app.app.get(GitService);
      const gitDir = gitService.repositoryPath(project.id);
      const counts = async () => {
        const out = (await gitService.runner.run(['count-objects', '-v'], { gitDir })).stdout.toString();
        return { loose: Number(/^count: (\d+)$/m.exec(out)![1]), packed: Number(/^in-pack: (\d+)$/m.exec(out)![1]) };
      };
      // 3 objects (commit, tree, blob): git's default unpackLimit (100) would have left them loose, and every
      // clone would deflate them again
      const first = await localRepo(url('alice/packs', 'alice', alice.token), { 'data.bin': 'x'.repeat(100_000) });
      await ok(['push', '-q', 'origin', 'master'], first.dir);
      expect(await counts()).toEqual({ loose: 0, packed: 3 });
      // a commit through the files API is written loose by the app; housekeeping packs it (a run already
      // under way for this repository makes the call return at once: call again until it is done)
      await as(alice, t.http.post(`${API}/projects/${project.id}/repository/files`))
        .send({ file_path: 'docs/packed.txt', branch_name: 'master', content: 'packed\n', commit_message: 'to be packed' })
        .expect(201);
      for (let i = 0; i < 100 && (await counts()).loose > 0; i++) {
        await gitService.housekeeping(project.id);
        await new Promise((r) => setTimeout(r, 50));
      }
      expect((await counts()).loose).toBe(0);
      expect((await gitService.runner.run(['cat-file', '-p', 'master:docs/packed.txt'], { gitDir })).stdout.toString()).toBe('packed\n');
      const dir = join(newDir('packs-clone'), 'c');
      await ok(['clone', '-q', url('alice/packs', 'alice', alice.token), dir]);
      expect(readFileSync(join(dir, 'docs/packed.txt'), 'utf8')).toBe('packed\n');
    });
  });

  describe('protected-branch patterns (only `*` is a wildcard)', () => {
    let project: Json;
    let dir: string;
    const push = (...refspecs: string[]) => git(['push', 'origin', ...refspecs], dir);
    const NOT_PROTECTED = /GitLab: You are not allowed to push code to protected branches on this project\./;

    beforeAll(async () => {
      project = await createProject(alice, 'patterns', 0);
      await addMember(project, bob, 30);
      const first = await localRepo(url('alice/patterns', 'alice', alice.token));
      await ok(['push', '-q', 'origin', 'master'], first.dir);
      // rows as an import could leave them (the API protects existing branches only, whose names have no `*`);
      // the first match in name order decides: `*-stable` before `release-*`
      for (const [name, developersCanPush] of [
        ['release-*', false],
        ['*-stable', true],
        ['a?c*', false],
        ['[x] $HOME `touch pwned` *', false],
        ['$(touch${IFS}pwned)*', false],
      ] as const) {
        await t.sql('INSERT INTO protected_branches (project_id, name, developers_can_push) VALUES ($1, $2, $3)', [project.id, name, developersCanPush]);
      }
      dir = join(newDir('patterns'), 'c');
      await ok(['clone', '-q', url('alice/patterns', 'bob', bob.token), dir]);
    });

    it('a developer: `release-*` refuses, `*-stable` (developers can push) matches first; `?`, `[`, `$(…)` are literal', async () => {
      let r = await push('HEAD:release-1');
      expect(r.code).not.toBe(0);
      expect(r.stderr).toMatch(NOT_PROTECTED);
      expect(await branchSha(project, 'release-1')).toBeNull();
      await ok(['push', '-q', 'origin', 'HEAD:8-stable', 'HEAD:release-stable', 'HEAD:abc', 'HEAD:a-c'], dir);
      for (const b of ['8-stable', 'release-stable', 'abc', 'a-c']) expect(await branchSha(project, b)).not.toBeNull();
      r = await push('HEAD:$(touch${IFS}pwned)x');
      expect(r.stderr).toMatch(NOT_PROTECTED);
      r = await push('HEAD:refs/heads/ok-topic', 'HEAD:refs/heads/release-2');
      expect(r.code).not.toBe(0);
      expect(r.stderr).toMatch(NOT_PROTECTED);
      expect(await branchSha(project, 'ok-topic')).not.toBeNull(); // refused ref by ref: the unprotected one lands
      expect(await branchSha(project, 'release-2')).toBeNull();
      expect(execFileSync('find', [t.config.dataDir, '-name', 'pwned'], { encoding: 'utf8' })).toBe('');
    });

    it('a master pushes to `release-*` but neither deletes nor force-pushes it (that ref refused, the others land)', async () => {
      const mine = join(newDir('patterns-master'), 'c');
      await ok(['clone', '-q', url('alice/patterns', 'alice', alice.token), mine]);
      await commit(mine, { 'next.txt': 'next\n' }, 'next');
      await ok(['push', '-q', 'origin', 'HEAD:release-1'], mine); // a fast-forward of the developer's attempt: none landed
      const tip = await ok(['rev-parse', 'HEAD'], mine);
      expect(await branchSha(project, 'release-1')).toBe(tip.trim());
      await ok(['reset', '-q', '--hard', 'HEAD~1'], mine);
      await commit(mine, { 'rewritten.txt': 'x\n' }, 'rewritten');
      let r = await git(['push', '--force', 'origin', 'HEAD:refs/heads/fresh', 'HEAD:release-1'], mine);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toMatch(/GitLab: You are not allowed to force push code to a protected branch on this project\./);
      r = await git(['push', 'origin', ':release-1'], mine);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toMatch(/GitLab: You are not allowed to delete protected branch release-1\./);
      expect(await branchSha(project, 'release-1')).toBe(tip.trim());
      expect(await branchSha(project, 'fresh')).toBe((await ok(['rev-parse', 'HEAD'], mine)).trim());
    });
  });

  // ------------------------------------------------------------------ archived project

  describe('an archived project', () => {
    it('refuses pushes (even by its owner) but still serves clones', async () => {
      const project = await createProject(alice, 'old-stuff', 0);
      await addMember(project, bob, 30);
      const first = await localRepo(url('alice/old-stuff', 'alice', alice.token));
      await ok(['push', '-q', 'origin', 'master'], first.dir);
      await as(alice, t.http.post(`${API}/projects/${project.id}/archive`)).expect(201);

      const next = await commit(first.dir, { 'late.txt': 'too late\n' }, 'after archiving');
      const r = await git(['push', 'origin', 'master'], first.dir);
      expect(r.code).not.toBe(0);
      expect(await branchSha(project, 'master')).toBe(first.sha);
      expect(next).not.toBe(first.sha);
      for (const u of [alice, bob]) {
        const res = await t.http.get('/alice/old-stuff.git/info/refs').query({ service: 'git-receive-pack' }).set('Authorization', basic(u.username, u.token));
        expect(res.status).toBe(403);
      }
      const dir = join(newDir('archived-clone'), 'c');
      await ok(['clone', '-q', url('alice/old-stuff', 'bob', bob.token), dir]);
      expect((await ok(['rev-parse', 'HEAD'], dir)).trim()).toBe(first.sha);
    });
  });
});
