import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CatFilePool } from './cat-file-pool';
import { GitRunner } from './git-runner';
import { Repository } from './repository';

/** Repository against a real repository on disk. */
describe('Repository.diff', () => {
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

  it('keeps each file with its own patch when a file becomes a symlink (two patch sections)', async () => {
    const repo = new Repository(join(work, '.git'), runner, pool);
    const { entries } = await repo.diff(git('rev-parse', 'HEAD~1'), git('rev-parse', 'HEAD'));
    expect(entries.map((e) => e.newPath)).toEqual(['g', 'h']);
    expect(entries[0].diff).toContain('-g');
    expect(entries[0].diff).toContain('+f');
    expect(entries[1].diff).toContain('-h');
    expect(entries[1].diff).toContain('+h changed');
    expect(entries[1].diff).not.toContain('+f');
  });
});
