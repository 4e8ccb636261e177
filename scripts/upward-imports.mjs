#!/usr/bin/env node
// Counts the imports of src/ that point up the stack (LAYERS in eslint.boundaries.mjs; the rule
// boundaries/stack-order refuses each of them in `npm run lint`), and the folders the stack does not
// place. Unit specs and migrations are left out, as the rule leaves them out.
// Usage: node scripts/upward-imports.mjs [--list]
import fs from 'node:fs';
import path from 'node:path';
import { stackNode, upwardImport, LAYERS } from '../eslint.boundaries.mjs';

const SRC = path.join(import.meta.dirname, '..', 'src');
const placed = new Set(LAYERS.flatMap((l) => l.nodes));
const files = [];
(function walk(d) {
  for (const e of fs.readdirSync(d, { withFileTypes: true })) {
    const p = path.join(d, e.name);
    if (e.isDirectory()) {
      if (p !== path.join(SRC, 'database', 'migrations')) walk(p);
    } else if (/\.ts$/.test(e.name) && !/\.spec\.ts$/.test(e.name)) files.push(p);
  }
})(SRC);

const upward = [];
const unplaced = new Set();
for (const f of files) {
  const from = stackNode(f);
  const text = fs.readFileSync(f, 'utf8');
  for (const m of text.matchAll(/(?:\bfrom\s+|\bimport\s*\(\s*)['"](\.{1,2}\/[^'"]+)['"]/g)) {
    const to = stackNode(path.resolve(path.dirname(f), m[1]));
    if (!to || to === from) continue;
    for (const n of [from, to]) if (!placed.has(n)) unplaced.add(n);
    const why = upwardImport(from, to);
    if (why) upward.push(`${path.relative(SRC, f)} -> ${m[1]}: ${why}`);
  }
}
if (process.argv.includes('--list')) for (const u of upward) console.log(u);
console.log(
  `${upward.length} upward imports in ${files.length} files; ${unplaced.size} folders without a place${unplaced.size ? ': ' + [...unplaced].join(', ') : ''}`,
);
process.exitCode = upward.length || unplaced.size ? 1 : 0;
