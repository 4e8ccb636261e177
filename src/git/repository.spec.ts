import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CatFilePool } from './cat-file-pool';
import { GitRunner } from './git-runner';
import { mergeRequestHeadRef, RefName, Sha } from './names';
import { MergeConflict, RefUpdateRejected, Repository } from './repository';

/** Repository against a real repository on disk. */
describe('Repository', () => {
  const dir = mkdtempSync(join(tmpdir(), 'glv3-repo-spec-'));
  const work = join(dir, 'work');
  const runner = new GitRunner(join(dir, 'home'));
  const pool = new CatFilePool(runner.environment);
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=T', '-c', 'user.email=t@example.com', ...args], { cwd: work, encoding: 'utf8' }).trim();

  beforeAll(() => {
    execFileSync('git', ['init', '-q', '-b', 'master', work]);
    writeFileSync(join(work, 'f'), 'f\n');
    writeFileSync(join(work, 'g'), 'g\n');
    writeFileSync(join(work, 'h'), 'h\n');
    git('add', '.');
    git('commit', '-qm', 'one');
    unlinkSync(join(work, 'g'));
    symlinkSync('f', join(work, 'g'));
    writeFileSync(join(work, 'h'), 'h changed\n');
    git('add', '-A');
    git('commit', '-qm', 'two');
  });
  afterAll(() => {
    pool.closeAll();
    rmSync(dir, { recursive: true, force: true });
  });

  it('keepAround writes refs/keep-around/<sha> for known commits only, once; setRef moves a server-managed ref', async () => {
    const repo = new Repository(join(work, '.git'), runner, pool);
    const [head, prev] = [git('rev-parse', 'HEAD') as Sha, git('rev-parse', 'HEAD~1') as Sha];
    const unknown = 'f'.repeat(40) as Sha;
    await repo.keepAround([head, head, unknown, prev]);
    expect(git('for-each-ref', '--format=%(refname) %(objectname)', 'refs/keep-around/')).toBe(
      `refs/keep-around/${prev} ${prev}\nrefs/keep-around/${head} ${head}`.split('\n').sort().join('\n'),
    );
    await repo.keepAround([head]); // already kept: nothing changes, no error
    expect(git('for-each-ref', 'refs/keep-around/').split('\n')).toHaveLength(2);
    await repo.setRef(mergeRequestHeadRef(1), prev);
    await repo.setRef(mergeRequestHeadRef(1), head);
    expect(git('rev-parse', 'refs/merge-requests/1/head')).toBe(head);
  });

  it('keeps each file with its own patch when a file becomes a symlink (two patch sections)', async () => {
    const repo = new Repository(join(work, '.git'), runner, pool);
    const { entries } = await repo.diff(git('rev-parse', 'HEAD~1') as Sha, git('rev-parse', 'HEAD') as Sha);
    expect(entries.map((e) => e.newPath)).toEqual(['g', 'h']);
    expect(entries[0].diff).toContain('-g');
    expect(entries[0].diff).toContain('+f');
    expect(entries[1].diff).toContain('-h');
    expect(entries[1].diff).toContain('+h changed');
    expect(entries[1].diff).not.toContain('+f');
  });

  it('log: the date window is exact to the second for any year 0001-9999 (git ignores its own dates from 2100)', async () => {
    const repo = new Repository(join(work, '.git'), runner, pool);
    const head = git('rev-parse', 'HEAD') as Sha;
    const when = Number(git('log', '-1', '--format=%ct'));
    const ids = async (since?: Date, until?: Date) => (await repo.log(head, { offset: 0, limit: 10, since, until })).commits.length;
    const at = (s: number) => new Date(s * 1000);
    expect(await ids()).toBe(2);
    expect(await ids(new Date('2100-01-01T00:00:00Z'))).toBe(0);
    expect(await ids(new Date('9999-12-31T23:59:59Z'))).toBe(0);
    expect(await ids(undefined, new Date('9999-12-31T23:59:59Z'))).toBe(2);
    expect(await ids(undefined, new Date('2100-01-01T00:00:00Z'))).toBe(2);
    const y1 = new Date(Date.UTC(2000, 0, 1));
    y1.setUTCFullYear(1);
    expect(await ids(y1)).toBe(2);
    expect(await ids(undefined, y1)).toBe(0);
    // inclusive at both ends, to the second
    expect(await ids(at(when), at(when))).toBeGreaterThan(0);
    expect(await ids(new Date(when * 1000 + 500))).toBe(0);
    // (the two commits may fall in different seconds on a busy machine: only the older ones are before HEAD's second)
    const times = git('log', '--format=%ct').split('\n').map(Number);
    expect(await ids(undefined, new Date(when * 1000 - 500))).toBe(times.filter((t) => t < when).length);
    expect((await repo.log(head, { offset: 0, limit: 10, since: new Date('2100-01-01T00:00:00Z') })).total).toBe(0);
  });
});

/** Merges without a work tree: merge-tree, commit-tree and a compare-and-swap ref update. */
describe('Repository.merge', () => {
  const dir = mkdtempSync(join(tmpdir(), 'glv3-merge-spec-'));
  const work = join(dir, 'work');
  const runner = new GitRunner(join(dir, 'home'));
  const pool = new CatFilePool(runner.environment);
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=T', '-c', 'user.email=t@example.com', ...args], { cwd: work, encoding: 'utf8' }).trim();
  let base: Sha, side: Sha, conflict: Sha, tip: Sha;
  const master = 'master' as RefName;

  beforeAll(() => {
    execFileSync('git', ['init', '-q', '-b', 'master', work]);
    writeFileSync(join(work, 'a'), '1\n2\n3\n');
    git('add', '.');
    git('commit', '-qm', 'base');
    base = git('rev-parse', 'HEAD') as Sha;
    git('checkout', '-qb', 'side');
    writeFileSync(join(work, 'b'), 'b\n');
    git('add', '.');
    git('commit', '-qm', 'side');
    side = git('rev-parse', 'HEAD') as Sha;
    git('checkout', '-qb', 'conflict', base);
    writeFileSync(join(work, 'a'), '1\nconflict\n3\n');
    git('commit', '-qam', 'conflict');
    conflict = git('rev-parse', 'HEAD') as Sha;
    git('checkout', '-q', 'master');
    writeFileSync(join(work, 'a'), '1\nmaster\n3\n');
    git('commit', '-qam', 'master');
    tip = git('rev-parse', 'HEAD') as Sha;
  });
  afterAll(() => {
    pool.closeAll();
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses to move a branch that moved since the caller looked (compare-and-swap)', async () => {
    const repo = new Repository(join(work, '.git'), runner, pool);
    await expect(repo.merge({ branch: master, ours: base, theirs: side, message: 'm', author: { name: 'A', email: 'a@x' } })).rejects.toBeInstanceOf(
      RefUpdateRejected,
    );
    expect(git('rev-parse', 'master')).toBe(tip);
  });

  it('reports conflicts and writes nothing; merges cleanly otherwise with two parents', async () => {
    const repo = new Repository(join(work, '.git'), runner, pool);
    expect(await repo.mergeTree(tip, conflict)).toBeNull();
    await expect(repo.merge({ branch: master, ours: tip, theirs: conflict, message: 'm', author: { name: 'A', email: 'a@x' } })).rejects.toBeInstanceOf(
      MergeConflict,
    );
    expect(git('rev-parse', 'master')).toBe(tip);
    const sha = await repo.merge({ branch: master, ours: tip, theirs: side, message: 'Merge side', author: { name: 'Ann', email: 'ann@x' } });
    expect(git('rev-parse', 'master')).toBe(sha);
    expect(git('log', '-1', '--format=%P|%an|%cn|%s', sha)).toBe(`${tip} ${side}|Ann|Ann|Merge side`);
  });
});
