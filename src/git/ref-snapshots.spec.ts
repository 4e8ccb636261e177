import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RefSnapshots, signatureHolds, takeSignature } from './ref-snapshots';

/** The signature of a real repository's refs on disk, and the snapshots served while it holds. */
describe('ref snapshots', () => {
  const dir = mkdtempSync(join(tmpdir(), 'glv3-refsnap-spec-'));
  const gitDir = join(dir, 'repo.git');
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=T', '-c', 'user.email=t@example.com', ...args], {
      env: { ...process.env, GIT_DIR: gitDir },
      encoding: 'utf8',
    }).trim();
  let c1: string;
  let c2: string;

  /** Moves every timestamp the signature covers 10 s back: the signature taken next is not racy. */
  const settle = () => {
    const past = new Date(Date.now() - 10_000);
    const walk = (d: string) => {
      utimesSync(d, past, past);
      for (const e of readdirSync(d, { withFileTypes: true })) if (e.isDirectory()) walk(join(d, e.name));
    };
    walk(join(gitDir, 'refs'));
    if (existsSync(join(gitDir, 'packed-refs'))) utimesSync(join(gitDir, 'packed-refs'), past, past);
  };
  const settledSignature = async (prefix = 'refs/heads/') => {
    settle();
    const sig = await takeSignature(gitDir, prefix);
    expect(sig).not.toBeNull();
    expect(sig!.racy).toBe(false);
    expect(signatureHolds(gitDir, sig!)).toBe(true);
    return sig!;
  };

  beforeAll(() => {
    execFileSync('git', ['init', '-q', '--bare', '-b', 'master', gitDir]);
    const tree = git('mktree');
    c1 = git('commit-tree', tree, '-m', 'one');
    c2 = git('commit-tree', tree, '-p', c1, '-m', 'two');
    git('update-ref', 'refs/heads/master', c1);
    git('update-ref', 'refs/heads/feature/x', c1);
    git('update-ref', 'refs/tags/v1', c1);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('covers packed-refs and every directory under the prefix, nested ones included', async () => {
    const sig = await settledSignature();
    expect(sig.dirs.map((d) => d.path)).toEqual([join(gitDir, 'refs/heads/'), join(gitDir, 'refs/heads/feature')]);
    expect(sig.packed).toBe('-');
  });

  it('a change just made is racy: a later one could carry the same timestamp', async () => {
    git('update-ref', 'refs/heads/racy', c1);
    expect((await takeSignature(gitDir, 'refs/heads/'))!.racy).toBe(true);
    git('update-ref', '-d', 'refs/heads/racy');
  });

  it('no longer holds once a loose ref in a nested directory is updated', async () => {
    const sig = await settledSignature();
    git('update-ref', 'refs/heads/feature/x', c2);
    expect(signatureHolds(gitDir, sig)).toBe(false);
  });

  it('no longer holds once a ref is added in a new directory, or deleted', async () => {
    let sig = await settledSignature();
    git('update-ref', 'refs/heads/new/deep/y', c1);
    expect(signatureHolds(gitDir, sig)).toBe(false);
    sig = await settledSignature();
    git('update-ref', '-d', 'refs/heads/new/deep/y');
    expect(signatureHolds(gitDir, sig)).toBe(false);
  });

  it('no longer holds once packed-refs is written or rewritten, and when a packed ref is deleted', async () => {
    let sig = await settledSignature();
    git('pack-refs', '--all');
    expect(signatureHolds(gitDir, sig)).toBe(false);
    sig = await settledSignature();
    expect(sig.packed).not.toBe('-');
    git('update-ref', 'refs/heads/feature/x', c1); // loose again, shadowing the packed one
    expect(signatureHolds(gitDir, sig)).toBe(false);
    git('pack-refs', '--all');
    sig = await settledSignature();
    git('update-ref', '-d', 'refs/heads/feature/x'); // packed only: packed-refs is rewritten
    expect(signatureHolds(gitDir, sig)).toBe(false);
    git('update-ref', 'refs/heads/feature/x', c1);
  });

  it('covers a prefix with no directory yet', async () => {
    const sig = await settledSignature('refs/notes/');
    git('update-ref', 'refs/notes/n', c1);
    expect(signatureHolds(gitDir, sig)).toBe(false);
  });

  it('serves the snapshot while the refs are unchanged, and reads again at once after any change', async () => {
    let reads = 0;
    const read = async () => {
      reads++;
      return git('for-each-ref', '--format=%(refname) %(objectname)', 'refs/heads/');
    };
    const snapshots = new RefSnapshots<string>((s) => s.length);
    const list = () => snapshots.get(gitDir, 'refs/heads/', read);
    settle();
    const first = await list();
    expect(await list()).toBe(first);
    expect(reads).toBe(1);

    const steps: (() => void)[] = [
      () => git('update-ref', 'refs/heads/feature/x', c2),
      () => git('update-ref', 'refs/heads/feature/z', c1),
      () => git('pack-refs', '--all'),
      () => git('update-ref', 'refs/heads/master', c2),
      () => git('update-ref', '-d', 'refs/heads/feature/z'),
      () => git('gc', '--quiet'),
      () => git('update-ref', '-d', 'refs/heads/feature/x'),
    ];
    for (const step of steps) {
      settle();
      await list();
      const before = reads;
      step();
      // racy right after the change: read every time, each answer fresh
      expect(await list()).toBe(git('for-each-ref', '--format=%(refname) %(objectname)', 'refs/heads/'));
      expect(reads).toBe(before + 1);
      settle();
      const settled = await list();
      expect(settled).toBe(git('for-each-ref', '--format=%(refname) %(objectname)', 'refs/heads/'));
      expect(await list()).toBe(settled);
      expect(reads).toBe(before + 2);
    }
  });

  it('shares one read between concurrent callers', async () => {
    let reads = 0;
    const snapshots = new RefSnapshots<number>(() => 1);
    settle();
    const values = await Promise.all(Array.from({ length: 10 }, () => snapshots.get(gitDir, 'refs/tags/', async () => ++reads)));
    expect(values).toEqual(Array(10).fill(1));
    expect(reads).toBe(1);
  });

  it('takes no snapshot of a prefix that is no directory (reftable)', async () => {
    expect(await takeSignature(gitDir, 'HEAD')).toBeNull();
  });
});
