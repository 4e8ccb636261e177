import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GitError, GitRunner } from './git-runner';

/** git started through the spawn broker: real processes, the same answers as a child of our own. */
describe('spawn broker (GitRunner with spawnBroker)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'glv3-broker-spec-'));
  const brokered = new GitRunner(join(dir, 'home'), { spawnBroker: true });
  const direct = new GitRunner(join(dir, 'home'));
  const gitDir = join(dir, 'repo.git');
  execFileSync('git', ['init', '-q', '--bare', gitDir]);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const parentOf = (pid: number) => Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')[1]);

  it('runs git in another process than the server, with the same output, input and exit codes as a direct spawn', async () => {
    const child = brokered.spawn(['cat-file', '--batch-check'], { gitDir });
    const pid = await new Promise<number>((resolve) => {
      const poll = () => (child.pid === undefined ? setTimeout(poll, 5) : resolve(child.pid));
      poll();
    });
    const parent = parentOf(pid);
    expect(parent).not.toBe(process.pid);
    expect(parentOf(parent)).toBe(process.pid); // git's parent is the broker, the broker's is us
    child.stdin.end();
    await new Promise((r) => child.on('close', r));

    for (const r of [brokered, direct]) {
      expect((await r.run(['--version'])).stdout.toString()).toMatch(/^git version \d/);
      expect((await r.run(['hash-object', '--stdin'], { input: 'hello\n' })).stdout.toString()).toBe('ce013625030ba8dba906f756967f9e9ca394464a\n');
      const failed = await r.run(['rev-parse', '--verify', 'nope'], { gitDir }).catch((e: unknown) => e);
      expect(failed).toBeInstanceOf(GitError);
      expect((failed as GitError).exitCode).toBe(128);
      expect((await r.run(['rev-parse', '--verify', 'nope'], { gitDir, okCodes: [128] })).exitCode).toBe(128);
    }
  });

  it('streams large output in both directions with backpressure, whole and in order', async () => {
    // 1.3 MB through git's stdin and back out of its stdout (cat-file --batch echoes missing names)
    const names = Array.from({ length: 30_000 }, (_, i) => `missing-object-name-${String(i).padStart(12, '0')}`);
    const input = names.join('\n') + '\n';
    const r = await brokered.run(['cat-file', '--batch-check'], { gitDir, input, maxOutputBytes: 64 << 20 });
    const lines = r.stdout.toString().trimEnd().split('\n');
    expect(lines).toHaveLength(names.length);
    expect(lines[0]).toBe(`${names[0]} missing`);
    expect(lines[lines.length - 1]).toBe(`${names[names.length - 1]} missing`);
  });

  it('kills the process group: a waiting git ends with SIGKILL, also when killed before it started', async () => {
    const waiting = brokered.spawn(['cat-file', '--batch'], { gitDir });
    const early = brokered.spawn(['cat-file', '--batch'], { gitDir });
    early.kill('SIGKILL'); // before the broker reported a pid
    setTimeout(() => waiting.kill('SIGKILL'), 50);
    const ends = await Promise.all(
      [waiting, early].map(
        (c) => new Promise<[number | null, string | null]>((r) => c.on('close', (code: number | null, signal: string | null) => r([code, signal]))),
      ),
    );
    expect(ends).toEqual([
      [null, 'SIGKILL'],
      [null, 'SIGKILL'],
    ]);
  });

  it('emits close when the caller never reads stdout or stderr (as a child of our own does)', async () => {
    for (const r of [brokered, direct]) {
      const child = r.spawn(['--version']);
      child.stdin.end();
      const code = await new Promise((resolve) => child.on('close', resolve));
      expect(code).toBe(0);
    }
  });

  it('runs many at once', async () => {
    const outs = await Promise.all(Array.from({ length: 40 }, (_, i) => brokered.run(['hash-object', '--stdin'], { input: `n${i}\n` })));
    expect(new Set(outs.map((o) => o.stdout.toString())).size).toBe(40);
  });
});
