import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import type TestAgent from 'supertest/lib/agent';
import { App, createApp } from '../src/app.factory';
import { GitService } from '../src/git/git.service';
import { registry } from '../src/metrics/registry';
import { GitCli } from './helpers/git-cli';
import { startTestApp, TestApp } from './helpers/test-app';

const API = '/api/v3';

/**
 * Branch and tag reads are served from a snapshot of the refs checked against the disk on every
 * use (src/git/ref-snapshots.ts): after any change — through the API, a push, `git pack-refs`,
 * `git gc`, this instance or another — the next answer is the fresh one, and while nothing changes
 * no git process is started for them.
 */
describe('branch and tag reads from ref snapshots', () => {
  let t: TestApp;
  let cli: GitCli;
  let tmp: string;
  let project: number;
  let gitDir: string;
  let work: string;

  const token = () => t.root.token;
  /** What git itself says, read on disk: `name → commit id` of branches and of tags (peeled). */
  const truth = (prefix: 'refs/heads/' | 'refs/tags/'): Record<string, string> => {
    const out = execFileSync('git', ['for-each-ref', '--format=%(refname)%00%(objectname)%00%(*objectname)', prefix], {
      env: { PATH: process.env.PATH, GIT_DIR: gitDir },
      encoding: 'utf8',
    });
    return Object.fromEntries(
      out
        .split('\n')
        .filter(Boolean)
        .map((l) => l.split('\0'))
        .map(([ref, sha, peeled]) => [ref.slice(prefix.length), peeled || sha]),
    );
  };
  const listed = async (http: TestAgent, what: 'branches' | 'tags'): Promise<Record<string, string>> => {
    const res = await http.get(`${API}/projects/${project}/repository/${what}?per_page=100`).set('PRIVATE-TOKEN', token()).expect(200);
    return Object.fromEntries((res.body as { name: string; commit: { id: string } }[]).map((b) => [b.name, b.commit.id]));
  };
  /** Lists and single reads through `http` answer exactly what is on disk. */
  const expectFresh = async (http: TestAgent) => {
    const heads = truth('refs/heads/');
    const tags = truth('refs/tags/');
    expect(await listed(http, 'branches')).toEqual(heads);
    expect(await listed(http, 'tags')).toEqual(tags);
    for (const [name, id] of Object.entries(heads)) {
      const b = await http.get(`${API}/projects/${project}/repository/branches/${name}`).set('PRIVATE-TOKEN', token()).expect(200);
      expect(b.body.commit.id).toBe(id);
    }
    for (const [name, id] of Object.entries(tags)) {
      const b = await http.get(`${API}/projects/${project}/repository/tags/${name}`).set('PRIVATE-TOKEN', token()).expect(200);
      expect(b.body.commit.id).toBe(id);
    }
  };
  const gone = async (http: TestAgent, what: 'branches' | 'tags', name: string) => {
    await http.get(`${API}/projects/${project}/repository/${what}/${name}`).set('PRIVATE-TOKEN', token()).expect(404);
  };
  /** Moves every timestamp the snapshots look at 10 s back, so the next snapshot taken is trusted (not racy). */
  const settle = () => {
    const past = new Date(Date.now() - 10_000);
    const walk = (d: string) => {
      utimesSync(d, past, past);
      for (const e of readdirSync(d, { withFileTypes: true })) if (e.isDirectory()) walk(join(d, e.name));
    };
    walk(join(gitDir, 'refs'));
    if (existsSync(join(gitDir, 'packed-refs'))) utimesSync(join(gitDir, 'packed-refs'), past, past);
  };
  /** git processes started so far, by subcommand. */
  const spawned = async (): Promise<Record<string, number>> => {
    const metric = await registry.getSingleMetric('git_processes_spawned_total')!.get();
    return Object.fromEntries(metric.values.map((v) => [String(v.labels.command), v.value]));
  };
  const api = (method: 'post' | 'put' | 'delete', path: string, body: Record<string, unknown> = {}, status = 201, http: TestAgent = t.http) =>
    http[method](`${API}/projects/${project}/repository/${path}`).set('PRIVATE-TOKEN', token()).send(body).expect(status);
  const push = (...args: string[]) => cli.ok(['push', '-q', 'origin', ...args], work);
  const commit = async (file: string) => {
    writeFileSync(join(work, file), `${file} ${Date.now()}\n`);
    await cli.ok(['add', '.'], work);
    await cli.ok(['commit', '-qm', `change ${file}`], work);
  };

  beforeAll(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'glv3-ref-snapshots-'));
    t = await startTestApp();
    cli = await GitCli.listen(t, tmp);
    const res = await t.http.post(`${API}/projects`).set('PRIVATE-TOKEN', token()).send({ name: 'refs' }).expect(201);
    project = res.body.id;
    gitDir = t.app.app.get(GitService).repositoryPath(project);
    await api('post', 'files', { file_path: 'a.txt', branch_name: 'master', content: 'a\n', commit_message: 'first' });
    work = join(tmp, 'work');
    await cli.ok(['clone', '-q', cli.url(res.body.path_with_namespace, 'root', token()), work]);
  });
  afterAll(async () => {
    await t.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  it('while nothing changes, branch and tag lists and single reads start no git process at all', async () => {
    await api('post', 'tags', { tag_name: 'v0', ref: 'master', message: 'annotated' });
    settle();
    await expectFresh(t.http);
    const before = await spawned();
    await expectFresh(t.http);
    await t.http.get(`${API}/projects/${project}/repository/tree`).set('PRIVATE-TOKEN', token()).expect(200);
    expect(await spawned()).toEqual(before);
  });

  it('branches and tags created, moved and deleted through the API are seen by the next read', async () => {
    const steps: [() => Promise<unknown>, () => Promise<void>][] = [
      [() => api('post', 'branches', { branch_name: 'feature/a', ref: 'master' }), async () => undefined],
      [() => api('post', 'files', { file_path: 'b.txt', branch_name: 'feature/a', content: 'b\n', commit_message: 'b' }), async () => undefined],
      [() => api('post', 'tags', { tag_name: 'v1', ref: 'feature/a', message: 'one' }), async () => undefined],
      [() => api('post', 'tags', { tag_name: 'rel/v2', ref: 'master' }), async () => undefined],
      [() => api('delete', 'branches/feature%2Fa', {}, 200), () => gone(t.http, 'branches', 'feature%2Fa')],
      [() => api('delete', 'tags/v1', {}, 200), () => gone(t.http, 'tags', 'v1')],
    ];
    for (const [change, check] of steps) {
      settle();
      await expectFresh(t.http); // snapshot taken and trusted
      await change();
      await expectFresh(t.http);
      await check();
    }
  });

  it('pushed branches and tags (new, moved, deleted) are seen by the next read', async () => {
    await cli.ok(['pull', '-q', 'origin', 'master'], work);
    const steps: (() => Promise<unknown>)[] = [
      async () => {
        await cli.ok(['checkout', '-q', '-b', 'pushed/one'], work);
        await commit('p1.txt');
        await push('pushed/one');
      },
      async () => {
        await commit('p2.txt');
        await push('pushed/one');
      },
      async () => {
        await cli.ok(['tag', '-a', '-m', 'pushed tag', 'pv1'], work);
        await cli.ok(['tag', 'deep/pv2'], work);
        await push('pv1', 'deep/pv2');
      },
      () => push('HEAD:master'),
      () => push(':pushed/one'),
      () => push(':refs/tags/deep/pv2'),
    ];
    for (const change of steps) {
      settle();
      await expectFresh(t.http);
      await change();
      await expectFresh(t.http);
    }
    await gone(t.http, 'branches', 'pushed%2Fone');
    await gone(t.http, 'tags', 'deep%2Fpv2');
  });

  it('the same answers after git pack-refs --all and git gc, and after changes to packed refs', async () => {
    await api('post', 'branches', { branch_name: 'nested/x/y', ref: 'master' });
    const runner = t.app.app.get(GitService).runner;
    const heads = truth('refs/heads/');
    const tags = truth('refs/tags/');
    for (const args of [
      ['pack-refs', '--all'],
      ['gc', '--quiet'],
    ]) {
      settle();
      await expectFresh(t.http);
      await runner.run(args, { gitDir });
      expect(truth('refs/heads/')).toEqual(heads);
      expect(truth('refs/tags/')).toEqual(tags);
      await expectFresh(t.http);
    }
    // now only in packed-refs: moved and deleted there
    settle();
    await expectFresh(t.http);
    await api('post', 'files', { file_path: 'n.txt', branch_name: 'nested/x/y', content: 'n\n', commit_message: 'n' });
    await expectFresh(t.http);
    settle();
    await expectFresh(t.http);
    await api('delete', 'branches/nested%2Fx%2Fy', {}, 200);
    await expectFresh(t.http);
    await gone(t.http, 'branches', 'nested%2Fx%2Fy');
  });

  const pg = !!process.env.DATABASE_URL;
  (pg ? describe : describe.skip)('two instances on one database and data dir (PostgreSQL only)', () => {
    let bApp: App;
    let b: TestAgent;
    beforeAll(async () => {
      bApp = await createApp(t.config);
      b = request(bApp.app.getHttpServer());
    });
    afterAll(() => bApp.close());

    it('a change made through one is seen through the other at once, both ways', async () => {
      const steps: [TestAgent, () => Promise<unknown>][] = [
        [b, () => api('post', 'branches', { branch_name: 'two/a', ref: 'master' })],
        [t.http, () => api('post', 'branches', { branch_name: 'two/b', ref: 'master' }, 201, b)],
        [b, () => api('post', 'files', { file_path: 't.txt', branch_name: 'two/a', content: 't\n', commit_message: 't' })],
        [t.http, () => api('post', 'tags', { tag_name: 'two-v1', ref: 'two/a', message: 'm' }, 201, b)],
        [b, () => api('delete', 'branches/two%2Fa', {}, 200)],
        [t.http, () => api('delete', 'tags/two-v1', {}, 200, b)],
        [b, () => push('HEAD:refs/heads/two/pushed')],
      ];
      for (const [reader, change] of steps) {
        settle();
        await expectFresh(t.http);
        await expectFresh(b);
        await change();
        await expectFresh(reader);
      }
      await gone(b, 'branches', 'two%2Fa');
      await gone(t.http, 'tags', 'two-v1');
    });
  });
});
