import { existsSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { GitRunner } from './git-runner';

/**
 * Repository backup and restore for the admin CLI. A bundle of every ref is a consistent snapshot
 * of the repository (git takes the refs once, then packs what they reach), so it can be taken while
 * pushes go on. A repository with no refs yet has no bundle: it is re-created empty.
 */
export async function bundleRepository(runner: GitRunner, gitDir: string, bundleFile: string): Promise<'bundled' | 'empty'> {
  const refs = await runner.run(['for-each-ref', '--count=1', '--format=%(refname)'], { gitDir });
  if (refs.stdout.toString().trim() === '') return 'empty';
  await runner.run(['bundle', 'create', '--quiet', bundleFile, '--all'], { gitDir, timeoutMs: 60 * 60_000 });
  return 'bundled';
}

/** Re-creates a bare repository from its bundle (or empty), HEAD as it was. */
export async function restoreRepository(runner: GitRunner, gitDir: string, bundleFile: string | null, head: string): Promise<void> {
  await rm(gitDir, { recursive: true, force: true });
  await mkdir(dirname(gitDir), { recursive: true });
  await runner.run(['init', '--bare', '--quiet', '--initial-branch=master', gitDir]);
  if (bundleFile && existsSync(bundleFile)) {
    await runner.run(['fetch', '--quiet', '--no-write-fetch-head', bundleFile, '+refs/*:refs/*'], { gitDir, timeoutMs: 60 * 60_000 });
  }
  if (/^refs\/heads\/[^\0\s]+$/.test(head)) await runner.run(['symbolic-ref', 'HEAD', head], { gitDir });
}

/** The symbolic ref HEAD points at (`refs/heads/master`). */
export async function headRef(runner: GitRunner, gitDir: string): Promise<string> {
  const r = await runner.run(['symbolic-ref', '-q', 'HEAD'], { gitDir, okCodes: [1] });
  return r.stdout.toString().trim() || 'refs/heads/master';
}
