#!/usr/bin/env node
'use strict';
/**
 * `npm run lint`: ESLint (type-checked rules, zero warnings allowed) and Prettier's check, side by side —
 * ESLint is single-threaded and most of the time of the two, so on two cores the check costs no extra
 * time. Fails when either fails. Both keep a cache in node_modules/.cache (a re-run looks only at changed
 * files; a fresh checkout, as in CI, checks everything).
 */
const { spawn } = require('node:child_process');

function run(cmd, args) {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { stdio: 'inherit' });
    child.on('error', (e) => {
      process.stderr.write(`${cmd}: ${e.message}\n`);
      resolve(1);
    });
    child.on('close', (code) => resolve(code ?? 1));
  });
}

Promise.all([
  run('eslint', ['.', '--max-warnings', '0', '--cache', '--cache-location', 'node_modules/.cache/eslint/']),
  run('prettier', ['--check', '.', '--cache', '--log-level', 'warn']),
]).then((codes) => process.exit(codes.every((c) => c === 0) ? 0 : 1));
