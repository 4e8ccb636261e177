#!/usr/bin/env node
'use strict';
/**
 * `npm start` (prestart) and `npm ci` (prepare) build only when the build is stale: the sources
 * (src/**, tsconfig*.json, package.json, package-lock.json) hash differently from the stamp the last
 * `npm run build` wrote (dist/.build-stamp), or dist/main.js is missing. A restart then costs the
 * server's own start time, not a compilation (70-100 s on a loaded machine).
 *
 *   node scripts/build-if-stale.js           build when stale (prestart, prepare)
 *   node scripts/build-if-stale.js --begin   note the inputs' hash as the build starts (prebuild)
 *   node scripts/build-if-stale.js --stamp   the build succeeded: that hash becomes the stamp (postbuild)
 * (hashed at the start: a source edited during the build leaves the stamp stale, and the next start builds)
 *
 * A production install (`npm ci --omit=dev`: no TypeScript) or one without the sources (the
 * Dockerfile's dependency layer) has nothing to build from: prepare then does nothing.
 */
const { createHash } = require('node:crypto');
const { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');
const { spawnSync } = require('node:child_process');

const ROOT = join(__dirname, '..');
const STAMP = join(ROOT, 'dist', '.build-stamp');
const PENDING = `${STAMP}.pending`;
const INPUTS = ['tsconfig.json', 'tsconfig.build.json', 'package.json', 'package-lock.json'];

function sources(dir, found = []) {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) sources(p, found);
    else found.push(p);
  }
  return found;
}

/** One hash over the names and contents of every build input. */
function inputsHash() {
  const h = createHash('sha256');
  const files = [...sources(join(ROOT, 'src')), ...INPUTS.map((f) => join(ROOT, f)).filter(existsSync)].sort();
  for (const f of files) {
    h.update(f.slice(ROOT.length) + '\0');
    h.update(readFileSync(f));
    h.update('\0');
  }
  return h.digest('hex');
}

function main() {
  if (process.argv[2] === '--begin') {
    mkdirSync(join(ROOT, 'dist'), { recursive: true });
    rmSync(STAMP, { force: true }); // a failed build leaves no stamp
    writeFileSync(PENDING, inputsHash() + '\n');
    return 0;
  }
  if (process.argv[2] === '--stamp') {
    if (existsSync(PENDING)) renameSync(PENDING, STAMP);
    else writeFileSync(STAMP, inputsHash() + '\n');
    return 0;
  }
  if (!existsSync(join(ROOT, 'src'))) return 0; // no sources here (a dependency layer): nothing to build
  const fresh = existsSync(join(ROOT, 'dist', 'main.js')) && existsSync(STAMP) && readFileSync(STAMP, 'utf8').trim() === inputsHash();
  if (fresh) return 0;
  try {
    require.resolve('typescript', { paths: [ROOT] });
  } catch {
    // production dependencies only: dist/ comes from elsewhere (the Dockerfile's build stage)
    process.stderr.write('build-if-stale: TypeScript is not installed (production install); not building\n');
    return 0;
  }
  process.stdout.write('build-if-stale: sources changed since the last build (or none yet): npm run build\n');
  const r = spawnSync(process.platform === 'win32' ? 'npm.cmd' : 'npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit' });
  return r.status ?? 1;
}

process.exit(main());
