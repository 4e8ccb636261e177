import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PROTECTED_BRANCH_CASES } from './protected-branch-cases';
import {
  branchProtection,
  installHooks,
  mayMergeIntoBranch,
  mayWriteBranch,
  PushLog,
  PushRules,
  SERVER_MANAGED_REF_PREFIXES,
  shellQuote,
} from './receive-hooks';

const ZERO = '0'.repeat(40);

/**
 * The receive hooks as git runs them: the scripts installHooks writes, run by /bin/sh (dash) with the
 * environment PushLog gives them, against a real bare repository; and real pushes through git's
 * receive-pack with those hooks.
 */
describe('receive hooks', () => {
  const dir = mkdtempSync(join(tmpdir(), 'glv3-hooks-spec-'));
  const hooks = installHooks(join(dir, 'data'));
  const bare = join(dir, 'repo.git');
  const work = join(dir, 'work');
  const git = (cwd: string, ...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=T', '-c', 'user.email=t@example.com', ...args], { cwd, encoding: 'utf8' }).trim();
  let c1: string; // first commit
  let c2: string; // its child
  let side: string; // a child of c1 that is not c2's ancestor nor descendant

  const rules = (protectedBranches: PushRules['protected'], canPush = true, canPushProtected = false, canChangeTags = canPushProtected): PushRules => ({
    canPush,
    canPushProtected,
    canChangeTags,
    protected: protectedBranches,
  });

  /**
   * Runs the update hook with `/bin/sh` for each of `input`'s lines (git's `<old> <new> <ref>`) under `r`,
   * as receive-pack does (once a ref): the first refusal, or success when every ref passed.
   */
  async function preReceive(r: PushRules | Record<string, string>, input: string): Promise<{ code: number | null; stderr: string }> {
    const log = 'canPush' in r ? await PushLog.open(r as PushRules) : undefined;
    try {
      const env = log ? log.env : (r as Record<string, string>);
      for (const line of input.split('\n').filter(Boolean)) {
        const [oldSha, newSha] = line.split(' ', 2);
        const ref = line.slice(oldSha.length + newSha.length + 2);
        const p = spawnSync('/bin/sh', [join(hooks, 'update'), ref, oldSha, newSha], {
          cwd: bare,
          env: { PATH: process.env.PATH, GIT_DIR: bare, ...env },
          encoding: 'utf8',
        });
        if (p.status !== 0 || p.stderr) return { code: p.status, stderr: p.stderr };
      }
      return { code: 0, stderr: '' };
    } finally {
      await log?.close(false);
    }
  }
  const allowed = async (r: PushRules, input: string) => expect(await preReceive(r, input)).toEqual({ code: 0, stderr: '' });
  const denied = async (r: PushRules, input: string, message: string) =>
    expect(await preReceive(r, input)).toEqual({ code: 1, stderr: `GitLab: ${message}\n` });
  const update = (branch: string, oldSha = c1, newSha = c2) => `${oldSha} ${newSha} refs/heads/${branch}\n`;

  const NOT_PROTECTED = 'You are not allowed to push code to protected branches on this project.';

  beforeAll(() => {
    execFileSync('git', ['init', '-q', '--bare', bare]);
    execFileSync('git', ['init', '-q', '-b', 'master', work]);
    writeFileSync(join(work, 'f'), 'one\n');
    git(work, 'add', 'f');
    git(work, 'commit', '-qm', 'one');
    c1 = git(work, 'rev-parse', 'HEAD');
    writeFileSync(join(work, 'f'), 'two\n');
    git(work, 'commit', '-qam', 'two');
    c2 = git(work, 'rev-parse', 'HEAD');
    git(work, 'checkout', '-q', '-b', 'side', c1);
    writeFileSync(join(work, 'f'), 'side\n');
    git(work, 'commit', '-qam', 'side');
    side = git(work, 'rev-parse', 'HEAD');
    git(work, 'push', '-q', bare, `${c1}:refs/heads/master`, `${c2}:refs/heads/next`, 'side');
    git(bare, 'symbolic-ref', 'HEAD', 'refs/heads/side'); // git itself refuses to delete the current branch
    git(bare, 'config', 'core.hooksPath', hooks); // as GitService's transfer configuration does
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('installs sh scripts only (no Node scripts, stale ones and the per-push pre-receive removed)', () => {
    writeFileSync(join(hooks, 'pre-receive.js'), 'stale');
    writeFileSync(join(hooks, 'pre-receive'), 'stale');
    installHooks(join(dir, 'data'));
    expect(readdirSync(hooks).sort()).toEqual(['pack-objects-cache', 'post-receive', 'update']);
    for (const name of ['update', 'post-receive']) expect(execFileSync('head', ['-1', join(hooks, name)], { encoding: 'utf8' })).toBe('#!/bin/sh\n');
  });

  it('denies without rules, and a caller who may not push (branches and tags)', async () => {
    expect(await preReceive({}, update('master'))).toEqual({ code: 1, stderr: 'GitLab: push rules missing\n' });
    await denied(rules([], false), update('topic'), 'You are not allowed to push code to this project.');
    await denied(rules([], false), `${ZERO} ${c1} refs/tags/v1\n`, 'You are not allowed to push code to this project.');
    await allowed(rules([]), `${ZERO} ${c1} refs/tags/v1\n`);
    await allowed(rules([]), update('topic', c2, side)); // unprotected: force push is fine
    await allowed(rules([]), update('topic', c1, ZERO)); // and deletion
  });

  it('an existing tag is moved or deleted by masters only; a new tag by anyone who may push', async () => {
    const CHANGE_TAGS = 'You are not allowed to change existing tags on this project.';
    const developer = rules([], true, false, false);
    await denied(developer, `${c1} ${c2} refs/tags/v1\n`, CHANGE_TAGS);
    await denied(developer, `${c1} ${ZERO} refs/tags/v1\n`, CHANGE_TAGS);
    await denied(developer, update('topic') + `${c1} ${ZERO} refs/tags/v1\n`, CHANGE_TAGS);
    await allowed(developer, `${ZERO} ${c1} refs/tags/v2\n`);
    const master = rules([], true, true, true);
    await allowed(master, `${c1} ${c2} refs/tags/v1\n`);
    await allowed(master, `${c1} ${ZERO} refs/tags/v1\n`);
    // the flag is required like the others: a hook run without it refuses everything
    const env = { GLV3_CAN_PUSH: '1', GLV3_CAN_PUSH_PROTECTED: '1', GLV3_PROTECTED_BRANCHES: '' };
    expect(await preReceive(env, `${ZERO} ${c1} refs/tags/v2\n`)).toEqual({ code: 1, stderr: 'GitLab: push rules missing\n' });
  });

  it('refuses refs outside refs/heads and refs/tags', async () => {
    await denied(rules([], true, true), `${ZERO} ${c1} refs/custom/thing\n`, 'You are not allowed to push to refs/custom/thing');
    await denied(rules([], true, true), `${ZERO} ${c1} refs/merge-requests/1/head\n`, 'You are not allowed to push to refs/merge-requests/1/head');
  });

  it('a protected branch: no deletion, no force push (even for masters), pushes by masters or when developers may', async () => {
    const master = [{ name: 'master', developersCanPush: false }];
    await denied(rules(master, true, true), update('master', c2, ZERO), 'You are not allowed to delete protected branch master.');
    await denied(rules(master, true, true), update('master', c2, side), 'You are not allowed to force push code to a protected branch on this project.');
    await denied(rules(master), update('master'), NOT_PROTECTED);
    await allowed(rules(master, true, true), update('master'));
    await allowed(rules(master, true, true), update('master', ZERO, c1)); // creating it
    await allowed(rules([{ name: 'master', developersCanPush: true }]), update('master'));
    await allowed(rules(master), update('mast'));
    await allowed(rules(master), update('master2'));
  });

  it('any matching pattern protects; any matching pattern that lets developers push lets them (8.17), whatever the order', async () => {
    const pb = [
      { name: 'release-1', developersCanPush: true },
      { name: 'release-*', developersCanPush: false },
    ];
    await allowed(rules(pb), update('release-1'));
    await denied(rules(pb), update('release-2'), NOT_PROTECTED);
    const reversed = [
      { name: 'a*', developersCanPush: false },
      { name: 'ab', developersCanPush: true },
    ];
    await allowed(rules(reversed), update('ab'));
    await denied(rules(reversed), update('ac'), NOT_PROTECTED);
    for (const b of ['release-1', 'release-2', 'ab', 'ac', 'zz']) {
      const p = branchProtection([...pb, ...reversed], b);
      const hook = await preReceive(rules([...pb, ...reversed]), update(b));
      expect(hook.code === 0).toBe(mayWriteBranch(p, { canPush: true, canPushProtected: false }));
    }
  });

  it('developers_can_merge: a developer may create a branch a pattern protects, not update it', async () => {
    const pb = [{ name: 'release-*', developersCanPush: false, developersCanMerge: true }];
    await allowed(rules(pb), update('release-3', ZERO, c1));
    await denied(rules(pb), update('release-3'), NOT_PROTECTED);
    await denied(rules([{ name: 'release-*', developersCanPush: false }]), update('release-3', ZERO, c1), NOT_PROTECTED);
    // the same rule for the API's writes
    const p = branchProtection(pb, 'release-3');
    expect(mayWriteBranch(p, { canPush: true, canPushProtected: false }, true)).toBe(true);
    expect(mayWriteBranch(p, { canPush: true, canPushProtected: false })).toBe(false);
    expect(mayMergeIntoBranch(p, { canPush: true, canPushProtected: false })).toBe(true);
    expect(mayMergeIntoBranch(p, { canPush: false, canPushProtected: false })).toBe(false);
    expect(
      mayMergeIntoBranch(branchProtection([{ name: 'release-*', developersCanPush: false }], 'release-3'), { canPush: true, canPushProtected: false }),
    ).toBe(false);
  });

  it.each(PROTECTED_BRANCH_CASES)('pattern %j: literal apart from *', async (name, matching, other) => {
    const pb = rules([{ name, developersCanPush: false }]);
    for (const b of matching) await denied(pb, update(b), NOT_PROTECTED);
    for (const b of other) await allowed(pb, update(b));
    expect(existsSync(join(bare, 'pwned'))).toBe(false);
  });

  it('a pattern naming $HOME is not expanded by the hook', async () => {
    const pb = rules([{ name: '${HOME}*', developersCanPush: false }]);
    const home = process.env.HOME ?? '/root';
    for (const b of [home, `${home}x`]) await allowed(pb, update(b));
    await denied(pb, update('${HOME}'), NOT_PROTECTED);
  });

  it('a pattern that cannot be written on a line (newline, NUL) protects every branch it reaches, strictly', async () => {
    const pb = [
      { name: 'open-*', developersCanPush: true },
      { name: 'a\nb', developersCanPush: true },
      { name: 'c\0d', developersCanPush: true },
    ];
    await allowed(rules(pb), update('open-1'));
    await denied(rules(pb), update('anything'), NOT_PROTECTED);
    await denied(rules(pb, true, true), update('anything', c2, ZERO), 'You are not allowed to delete protected branch anything.');
    await allowed(rules(pb, true, true), update('anything'));
  });

  it('each ref of a push is judged alone', async () => {
    const pb = [{ name: 'master', developersCanPush: false }];
    await allowed(rules(pb), update('topic'));
    await denied(rules(pb), update('master'), NOT_PROTECTED);
    await denied(rules(pb), `${ZERO} ${c1} refs/custom/x\n`, 'You are not allowed to push to refs/custom/x');
  });

  it('names the four server-managed namespaces', () => {
    expect(SERVER_MANAGED_REF_PREFIXES).toEqual(['refs/merge-requests/', 'refs/keep-around/', 'refs/environments/', 'refs/pipelines/']);
  });

  it.each(SERVER_MANAGED_REF_PREFIXES.map((prefix) => `${prefix}1/head`))('the server-managed ref %s is refused, even to a master', async (ref) => {
    await denied(rules([], true, true, true), `${ZERO} ${c1} ${ref}\n`, `You are not allowed to push to ${ref}`);
    await denied(rules([], true, true, true), `${c1} ${ZERO} ${ref}\n`, `You are not allowed to push to ${ref}`);
  });

  describe('through git receive-pack', () => {
    /** Pushes from the work tree to the bare repository with the hooks and `r`; the exit code, stderr and post-receive's log. */
    async function push(r: PushRules, ...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string; updates: unknown[] }> {
      const log = (await PushLog.open(r))!;
      const p = spawnSync('git', ['push', '--porcelain', bare, ...args], {
        cwd: work,
        env: { ...process.env, ...log.env },
        encoding: 'utf8',
      });
      return { code: p.status, stdout: p.stdout, stderr: p.stderr, updates: await log.close(true) };
    }

    it("a mixed push: the refused ref alone is rejected (git's per-ref status), the allowed one lands and is logged", async () => {
      const pb = rules([{ name: 'rel*se', developersCanPush: false }]);
      const r = await push(pb, `${c2}:refs/heads/topic`, `${c2}:refs/heads/release`, `${c1}:refs/merge-requests/7/head`);
      expect(r.code).not.toBe(0); // git push fails when any ref is rejected
      expect(r.stderr).toContain(`GitLab: ${NOT_PROTECTED}`);
      expect(r.stderr).toContain('GitLab: You are not allowed to push to refs/merge-requests/7/head');
      expect(r.stdout).toContain(`*\t${c2}:refs/heads/topic\t[new branch]`);
      expect(r.stdout).toContain(`!\t${c2}:refs/heads/release\t[remote rejected] (hook declined)`);
      expect(r.stdout).toContain(`!\t${c1}:refs/merge-requests/7/head\t[remote rejected] (hook declined)`);
      expect(r.updates).toEqual([{ oldSha: ZERO, newSha: c2, ref: 'refs/heads/topic' }]);
      expect(git(bare, 'rev-parse', 'topic')).toBe(c2);
      expect(() => git(bare, 'rev-parse', '--verify', '-q', 'refs/heads/release')).toThrow();
      expect(() => git(bare, 'rev-parse', '--verify', '-q', 'refs/merge-requests/7/head')).toThrow();
    });

    it('deleting or force-pushing a protected branch is refused, even for a master; a fast-forward lands', async () => {
      const pb = rules([{ name: 'm*r', developersCanPush: false }], true, true);
      let r = await push(pb, ':master');
      expect(r.stderr).toContain('GitLab: You are not allowed to delete protected branch master.');
      expect(r.code).not.toBe(0);
      r = await push(pb, `${c2}:master`);
      expect(r.code).toBe(0);
      expect(r.updates).toEqual([{ oldSha: c1, newSha: c2, ref: 'refs/heads/master' }]);
      r = await push(pb, '--force', `${side}:master`);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain('GitLab: You are not allowed to force push code to a protected branch on this project.');
      expect(r.updates).toEqual([]);
      expect(git(bare, 'rev-parse', 'master')).toBe(c2);
    });

    it('a developer creates a tag but cannot force-move or delete it; a master can', async () => {
      const developer = rules([], true, false, false);
      let r = await push(developer, `${c1}:refs/tags/rel`);
      expect(r.code).toBe(0);
      r = await push(developer, '--force', `${c2}:refs/tags/rel`);
      expect(r.stderr).toContain('GitLab: You are not allowed to change existing tags on this project.');
      expect(r.code).not.toBe(0);
      r = await push(developer, ':refs/tags/rel');
      expect(r.code).not.toBe(0);
      expect(git(bare, 'rev-parse', 'refs/tags/rel')).toBe(c1);
      const master = rules([], true, true, true);
      r = await push(master, '--force', `${c2}:refs/tags/rel`);
      expect(r.code).toBe(0);
      r = await push(master, ':refs/tags/rel');
      expect(r.code).toBe(0);
      expect(r.updates).toEqual([{ oldSha: c2, newSha: ZERO, ref: 'refs/tags/rel' }]);
    });
  });
});

/**
 * The pack-objects cache hook as upload-pack runs it (`hook <pack-objects command…>`, the fetch's
 * input on stdin), by /bin/sh, with a stand-in for pack-objects that counts its runs.
 */
describe('pack-objects cache hook', () => {
  const dir = mkdtempSync(join(tmpdir(), 'glv3-pack-hook-spec-'));
  const data = join(dir, 'data');
  const hook = join(installHooks(data), 'pack-objects-cache');
  const cache = join(data, 'pack-objects-cache');
  const runs = join(dir, 'runs');
  // the stand-in: slow enough that identical fetches overlap; fails when FAIL_ONCE's file is there
  const maker = join(dir, 'maker.sh');
  writeFileSync(
    maker,
    `#!/bin/sh
echo run >>${shellQuote(runs)}
cat >/dev/null
sleep 0.5
if [ -f ${shellQuote(join(dir, 'fail-once'))} ]; then rm -f ${shellQuote(join(dir, 'fail-once'))}; exit 3; fi
printf 'PACK for %s\\n' "$1"
`,
    { mode: 0o755 },
  );
  const fetch = (arg: string, input = 'want 1\n') =>
    new Promise<{ code: number | null; out: string }>((resolve) => {
      const child = spawn('/bin/sh', [hook, maker, arg], { cwd: dir });
      let out = '';
      child.stdout.on('data', (c: Buffer) => (out += c.toString()));
      child.on('close', (code) => resolve({ code, out }));
      child.stdin.end(input);
    });
  const runCount = () => (existsSync(runs) ? readFileSync(runs, 'utf8').split('\n').filter(Boolean).length : 0);

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('identical fetches at once make the pack once and all get it; a different fetch makes its own', async () => {
    const results = await Promise.all([...Array.from({ length: 6 }, () => fetch('a')), fetch('b')]);
    expect(results.map((r) => r.code)).toEqual([0, 0, 0, 0, 0, 0, 0]);
    expect(results.slice(0, 6).map((r) => r.out)).toEqual(Array(6).fill('PACK for a\n'));
    expect(results[6].out).toBe('PACK for b\n');
    expect(runCount()).toBe(2);
    expect(readdirSync(cache).filter((f) => f.startsWith('.'))).toEqual([]); // no lock, no partial pack left
    await fetch('a'); // a hit
    expect(runCount()).toBe(2);
  });

  it('a lock whose maker is gone is taken over; a maker that fails leaves the waiters to make their own', async () => {
    // a maker killed before it finished: its lock stays, with a pid no process has
    const dead = spawnSync('/bin/sh', ['-c', 'echo $$']).stdout.toString().trim();
    const input = 'want stale\n';
    await fetch('c', input); // to learn the key's name from the pack it leaves
    const packs = readdirSync(cache).filter((f) => f.endsWith('.pack'));
    const made = packs.find((f) => readFileSync(join(cache, f), 'utf8') === 'PACK for c\n')!;
    rmSync(join(cache, made));
    const lock = join(cache, `.${made.replace(/\.pack$/, '')}.lock`);
    mkdirSync(lock);
    writeFileSync(join(lock, 'pid'), `${dead}\n`);
    const before = runCount();
    const again = await fetch('c', input);
    expect(again).toEqual({ code: 0, out: 'PACK for c\n' });
    expect(runCount()).toBe(before + 1);
    expect(existsSync(lock)).toBe(false);

    // the first maker fails: nothing is cached, and the fetches that waited for it make the pack themselves
    writeFileSync(join(dir, 'fail-once'), '');
    const results = await Promise.all(Array.from({ length: 3 }, () => fetch('d')));
    expect(results.map((r) => r.code).sort()).toEqual([0, 0, 3]);
    expect(results.filter((r) => r.code === 0).map((r) => r.out)).toEqual(['PACK for d\n', 'PACK for d\n']);
    expect(readdirSync(cache).filter((f) => f.startsWith('.'))).toEqual([]);
  });
});
