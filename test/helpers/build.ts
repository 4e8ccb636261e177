import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { alive } from './test-db';

const REPO = join(__dirname, '..', '..');
const LOCK = join(REPO, '.cache', 'test-build.lock');

/**
 * Builds dist/ when stale (scripts/build-if-stale.js, as `npm start` does) for the specs that run the
 * built server or CLI as real processes. One jest worker at a time (a lock directory; one a killed run
 * left is taken over): two builds writing dist/ at once could hand a half-written file to a server
 * the other worker starts.
 */
export async function buildIfStale(): Promise<void> {
  await lock();
  try {
    const build = await new Promise<{ code: number | null; out: string }>((resolve) => {
      const c = spawn(process.execPath, ['scripts/build-if-stale.js'], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      c.stdout.on('data', (d: Buffer) => (out += d.toString()));
      c.stderr.on('data', (d: Buffer) => (out += d.toString()));
      c.on('close', (code) => resolve({ code, out }));
    });
    if (build.code !== 0) throw new Error(`build failed: ${build.out}`);
  } finally {
    rmSync(LOCK, { recursive: true, force: true });
  }
}

async function lock(): Promise<void> {
  mkdirSync(join(REPO, '.cache'), { recursive: true });
  for (;;) {
    try {
      mkdirSync(LOCK);
      writeFileSync(join(LOCK, 'pid'), String(process.pid));
      return;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    let holder = NaN;
    try {
      holder = Number(readFileSync(join(LOCK, 'pid'), 'utf8'));
    } catch {
      // being written, or just released
    }
    if (holder && !alive(holder)) rmSync(LOCK, { recursive: true, force: true });
    else await new Promise((r) => setTimeout(r, 500));
  }
}
