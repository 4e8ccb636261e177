import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GitService } from '../src/git/git.service';
import { SshServerService } from '../src/ssh/ssh-server.service';
import { GitCli } from './helpers/git-cli';
import { SshCli } from './helpers/ssh-cli';
import { startTestApp, TestApp } from './helpers/test-app';

const API = '/api/v3';

/**
 * The pack-objects cache (uploadpack.packObjectsHook → <DATA_DIR>/git-hooks/pack-objects-cache):
 * an identical fetch of the same repository is answered with the first one's pack; a new tip, another
 * repository or another transport's request is a new entry; pruning removes old packs. Stock git
 * over smart HTTP and OpenSSH.
 */
describe('git pack-objects cache', () => {
  let t: TestApp;
  let dir: string;
  let http: GitCli;
  let ssh: SshCli;
  let key: { file: string; pub: string };
  let seq = 0;
  const cacheDir = () => join(t.config.dataDir, 'pack-objects-cache');
  const packs = () =>
    readdirSync(cacheDir())
      .filter((f) => f.endsWith('.pack'))
      .sort();
  const url = (path: string) => http.url(path, 'root', t.root.token);

  async function project(name: string): Promise<string> {
    const res = await t.http.post(`${API}/projects`).set('PRIVATE-TOKEN', t.root.token).send({ name, visibility_level: 0 }).expect(201);
    return res.body.path_with_namespace as string;
  }

  async function cloneHttp(path: string): Promise<string> {
    const target = join(dir, `clone-${++seq}`);
    const r = await http.run(['clone', '-q', url(path), target]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    return target;
  }

  beforeAll(async () => {
    t = await startTestApp({ SSH_ENABLED: 'true', SSH_PORT: '0', SSH_LISTEN: '127.0.0.1' });
    dir = mkdtempSync(join(tmpdir(), 'glv3-pack-cache-'));
    http = await GitCli.listen(t, dir);
    ssh = SshCli.of(t.app.app.get(SshServerService), dir);
    key = await ssh.keygen('root');
    await t.http.post(`${API}/user/keys`).set('PRIVATE-TOKEN', t.root.token).send({ title: 'laptop', key: key.pub }).expect(201);
  });

  afterAll(async () => {
    await t?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('answers an identical clone with the first pack, and a new tip with a new one', async () => {
    const path = await project('cached');
    const work = join(dir, 'work');
    await http.ok(['init', '-q', work]);
    await http.commit(work, { 'README.md': '# one\n' }, 'first');
    await http.ok(['push', '-q', url(path), 'master'], work);
    await t.app.app.get(GitService).prunePackCache(0);
    expect(packs()).toEqual([]);

    const first = await cloneHttp(path);
    expect(readFileSync(join(first, 'README.md'), 'utf8')).toBe('# one\n');
    const made = packs();
    expect(made).toHaveLength(1);
    const before = statSync(join(cacheDir(), made[0]));

    const second = await cloneHttp(path);
    expect(readFileSync(join(second, 'README.md'), 'utf8')).toBe('# one\n');
    expect(packs()).toEqual(made);
    // served from the file, not made again (a new pack would have been moved into place: a new inode)
    const after = statSync(join(cacheDir(), made[0]));
    expect([after.ino, after.mtimeMs]).toEqual([before.ino, before.mtimeMs]);

    await http.commit(work, { 'README.md': '# two\n' }, 'second');
    await http.ok(['push', '-q', url(path), 'master'], work);
    const third = await cloneHttp(path);
    expect(readFileSync(join(third, 'README.md'), 'utf8')).toBe('# two\n');
    expect(packs()).toHaveLength(2);
    // a fetch into the first clone: its haves make another request, and it gets the new commit
    await http.ok(['pull', '-q', url(path), 'master'], first);
    expect(readFileSync(join(first, 'README.md'), 'utf8')).toBe('# two\n');
  });

  it('never answers one repository with another one’s pack, even for the same commits', async () => {
    const a = await project('same-a');
    const b = await project('same-b');
    const work = join(dir, 'same');
    await http.ok(['init', '-q', work]);
    await http.commit(work, { 'a.txt': 'same\n' }, 'same');
    await http.ok(['push', '-q', url(a), 'master'], work);
    await http.ok(['push', '-q', url(b), 'master'], work);
    const n = packs().length;
    await cloneHttp(a);
    await cloneHttp(b);
    expect(packs()).toHaveLength(n + 2);
  });

  it('serves SSH clones through the same cache, and pruning removes old packs', async () => {
    const path = await project('over-ssh');
    const work = join(dir, 'ssh-work');
    await http.ok(['init', '-q', work]);
    await http.commit(work, { 'b.txt': 'ssh\n' }, 'ssh');
    await http.ok(['push', '-q', url(path), 'master'], work);
    const n = packs().length;
    for (let i = 0; i < 2; i++) {
      const target = join(dir, `ssh-clone-${i}`);
      const r = await ssh.git(key.file, ['clone', '-q', ssh.url(path), target]);
      expect(r.code).toBe(0);
      expect(readFileSync(join(target, 'b.txt'), 'utf8')).toBe('ssh\n');
    }
    expect(packs()).toHaveLength(n + 1); // the second SSH clone was the first one's hit

    const git = t.app.app.get(GitService);
    expect(await git.prunePackCache(60_000)).toBe(0); // all younger than a minute
    expect(await git.prunePackCache(0)).toBe(n + 1);
    expect(packs()).toEqual([]);
    await cloneHttp(path); // and the cache fills again
    expect(packs()).toHaveLength(1);
  });
});
