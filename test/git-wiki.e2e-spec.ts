import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
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
 * A project's wiki over git (issue 39 item 4), as GitLab 8.17: `<namespace>/<project>.wiki.git` over
 * smart HTTP and SSH with the stock clients; an empty repository before the first push; written by
 * developers and above (GitAccessWiki: "You are not allowed to write to this project's wiki.");
 * a wiki push fires no pipeline, no event; removed with its project.
 */
describe('wikis over git', () => {
  let t: TestApp;
  let cli: GitCli;
  let ssh: SshCli;
  let tmp: string;
  let alice: TestUser; // owner
  let bob: TestUser; // developer
  let carol: TestUser; // reporter
  let aliceKey: { file: string; pub: string };
  let carolKey: { file: string; pub: string };
  let p: Json;

  const as = (u: TestUser, req: Test) => req.set('PRIVATE-TOKEN', u.token);
  let dirSeq = 0;
  const newDir = (name: string) => {
    const d = join(tmp, `${++dirSeq}-${name}`);
    mkdirSync(d, { recursive: true });
    return d;
  };
  const ok = (args: string[], cwd?: string) => cli.ok(args, cwd);
  const url = (path: string, u?: TestUser) => (u ? cli.url(path, u.username, u.token) : cli.url(path));

  beforeAll(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'glv3-wiki-'));
    t = await startTestApp({ SSH_ENABLED: 'true', SSH_PORT: '0', SSH_LISTEN: '127.0.0.1', GIT_AUTH_BAN_IP_WHITELIST: '' });
    cli = await GitCli.listen(t, tmp);
    ssh = SshCli.of(t.app.app.get(SshServerService), tmp);
    alice = await t.createUser({ username: 'alice', name: 'Alice', projects_limit: 100 });
    bob = await t.createUser({ username: 'bob', name: 'Bob' });
    carol = await t.createUser({ username: 'carol', name: 'Carol' });
    aliceKey = await ssh.keygen('alice');
    carolKey = await ssh.keygen('carol');
    await as(alice, t.http.post(`${API}/user/keys`))
      .send({ title: 'laptop', key: aliceKey.pub })
      .expect(201);
    await as(carol, t.http.post(`${API}/user/keys`))
      .send({ title: 'laptop', key: carolKey.pub })
      .expect(201);
    p = (
      await as(alice, t.http.post(`${API}/projects`))
        .send({ name: 'handbook', visibility_level: 0 })
        .expect(201)
    ).body;
    expect(p.wiki_enabled).toBe(true);
    for (const [u, level] of [
      [bob, 30],
      [carol, 20],
    ] as const) {
      await as(alice, t.http.post(`${API}/projects/${p.id}/members`))
        .send({ user_id: u.id, access_level: level })
        .expect(201);
    }
  });
  afterAll(async () => {
    await t.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  it('over HTTP: a wiki nobody pushed to clones empty; a developer pushes pages, a reporter reads them, neither event nor pipeline', async () => {
    const git = t.app.app.get(GitService);
    expect(git.wikiExists(p.id)).toBe(false);
    const empty = join(newDir('empty'), 'wiki');
    const r = await cli.run(['clone', url('alice/handbook.wiki', carol), empty]);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('You appear to have cloned an empty repository.');
    expect(git.wikiExists(p.id)).toBe(true);

    const work = newDir('wiki-work');
    await ok(['init', '-q', work]);
    // a .gitlab-ci.yml in a wiki is only a page: no pipeline
    const sha = await cli.commit(work, { 'home.md': '# Handbook\n', '.gitlab-ci.yml': 'job:\n  script: echo hi\n' }, 'Create home page');
    await ok(['push', '-q', url('alice/handbook.wiki', bob), 'master'], work);

    const read = join(newDir('read'), 'wiki');
    await ok(['clone', '-q', url('alice/handbook.wiki', carol), read]);
    expect(readFileSync(join(read, 'home.md'), 'utf8')).toBe('# Handbook\n');
    expect((await ok(['rev-parse', 'HEAD'], read)).trim()).toBe(sha);

    // the project's own repository is untouched: no branch, no default branch, no push event, no pipeline
    const proj = (await as(alice, t.http.get(`${API}/projects/${p.id}`)).expect(200)).body;
    expect(proj.default_branch ?? null).toBeNull();
    expect((await as(alice, t.http.get(`${API}/projects/${p.id}/repository/branches`)).expect(200)).body).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 300)); // the durable push handlers would have run by now
    expect((await as(alice, t.http.get(`${API}/projects/${p.id}/pipelines`)).expect(200)).body).toEqual([]);
    const events = (await as(alice, t.http.get(`${API}/projects/${p.id}/events`)).expect(200)).body as Json[];
    expect(events.filter((e) => e.action_name === 'pushed new' || e.action_name === 'pushed to')).toEqual([]);
  });

  it('over HTTP: a reporter may not write: refused with 8.17 GitAccessWiki words, nothing lands', async () => {
    const work = join(newDir('carol'), 'wiki');
    await ok(['clone', '-q', url('alice/handbook.wiki', carol), work]);
    await cli.commit(work, { 'carol.md': 'mine\n' }, 'by carol');
    const r = await cli.run(['push', 'origin', 'master'], work);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('The requested URL returned error: 403');
    // the answer git got says why, in 8.17's words
    const basic = `Basic ${Buffer.from(`carol:${carol.token}`).toString('base64')}`;
    const res = await t.http.get('/alice/handbook.wiki.git/info/refs?service=git-receive-pack').set('Authorization', basic).expect(403);
    expect(res.body).toEqual({ message: "403 You are not allowed to write to this project's wiki." });
    const refs = await ok(['ls-remote', url('alice/handbook.wiki', alice)]);
    expect(refs).not.toContain((await ok(['rev-parse', 'HEAD'], work)).trim());
  });

  it('over SSH: the owner clones and pushes; a reporter reads but may not push', async () => {
    const wikiUrl = ssh.url('alice/handbook.wiki');
    const mine = join(newDir('ssh-alice'), 'wiki');
    expect((await ssh.git(aliceKey.file, ['clone', '-q', wikiUrl, mine])).code).toBe(0);
    expect(readFileSync(join(mine, 'home.md'), 'utf8')).toBe('# Handbook\n');
    await cli.commit(mine, { 'ssh.md': 'over ssh\n' }, 'Page over SSH');
    const pushed = await ssh.git(aliceKey.file, ['push', '-q', 'origin', 'master'], mine);
    expect(pushed.code).toBe(0);
    const tip = (await ok(['rev-parse', 'HEAD'], mine)).trim();

    const theirs = join(newDir('ssh-carol'), 'wiki');
    expect((await ssh.git(carolKey.file, ['clone', '-q', wikiUrl, theirs])).code).toBe(0);
    expect(readFileSync(join(theirs, 'ssh.md'), 'utf8')).toBe('over ssh\n');
    await cli.commit(theirs, { 'no.md': 'no\n' }, 'refused');
    const refused = await ssh.git(carolKey.file, ['push', 'origin', 'master'], theirs);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain("GitLab: You are not allowed to write to this project's wiki.");
    expect((await ok(['ls-remote', url('alice/handbook.wiki', alice), 'refs/heads/master'])).split('\t')[0]).toBe(tip);
  });

  it('a disabled wiki is not served; a wiki of a project one cannot see is not found', async () => {
    await as(alice, t.http.put(`${API}/projects/${p.id}`))
      .send({ wiki_enabled: false })
      .expect(200);
    const r = await cli.run(['ls-remote', url('alice/handbook.wiki', carol)]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('403');
    const s = await ssh.git(aliceKey.file, ['ls-remote', ssh.url('alice/handbook.wiki')]);
    expect(s.code).not.toBe(0);
    expect(s.stderr).toContain('GitLab: You are not allowed to download code from this project.');
    await as(alice, t.http.put(`${API}/projects/${p.id}`))
      .send({ wiki_enabled: true })
      .expect(200);
    const dave = await t.createUser({ username: 'dave', name: 'Dave' });
    const hidden = await cli.run(['ls-remote', url('alice/handbook.wiki', dave)]);
    const missing = await cli.run(['ls-remote', url('alice/nothing.wiki', dave)]);
    expect(hidden.code).not.toBe(0);
    expect(hidden.stderr.replace(/handbook/g, 'nothing')).toBe(missing.stderr);
  });

  it('a renamed or transferred project keeps its wiki; a deleted one takes it along', async () => {
    await as(alice, t.http.put(`${API}/projects/${p.id}`))
      .send({ name: 'manual', path: 'manual' })
      .expect(200);
    const refs = await ok(['ls-remote', url('alice/manual.wiki', alice)]);
    expect(refs).toMatch(/\trefs\/heads\/master\n/);
    const git = t.app.app.get(GitService);
    const dir = git.wikiPath(p.id);
    expect(existsSync(dir)).toBe(true);
    await as(alice, t.http.delete(`${API}/projects/${p.id}`)).expect(200);
    expect(existsSync(dir)).toBe(false);
    expect(existsSync(git.repositoryPath(p.id))).toBe(false);
  });
});
