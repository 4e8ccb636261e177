#!/usr/bin/env node
/**
 * Prints the README walkthrough as one bash script: every ```sh block between
 * `<!-- walkthrough:start -->` and `<!-- walkthrough:end -->`, in order and unchanged, each preceded by
 * an `echo` naming the block, its README line (so a failure in CI points at the README line) and the
 * seconds since the start.
 * Used by .ci/readme-walkthrough.sh. Usage: node test/readme/extract.js [README.md]
 * Exits 1 when the markers are missing or the section holds no ```sh block.
 */
'use strict';
const { readFileSync } = require('node:fs');

function extract(markdown) {
  const lines = markdown.split('\n');
  const start = lines.findIndex((l) => l.trim() === '<!-- walkthrough:start -->');
  const end = lines.findIndex((l) => l.trim() === '<!-- walkthrough:end -->');
  if (start < 0 || end < start) throw new Error('README: <!-- walkthrough:start --> ... <!-- walkthrough:end --> not found');
  const blocks = [];
  let current = null;
  for (let i = start + 1; i < end; i++) {
    const line = lines[i];
    if (current === null) {
      if (/^```sh\s*$/.test(line)) current = { line: i + 2, body: [] };
      else if (/^```/.test(line)) current = { line: i + 2, body: null }; // another language: not run
    } else if (/^```\s*$/.test(line)) {
      if (current.body) blocks.push({ line: current.line, text: current.body.join('\n') });
      current = null;
    } else if (current.body) {
      current.body.push(line);
    }
  }
  if (current !== null) throw new Error(`README: the block at line ${current.line - 1} is not closed`);
  if (!blocks.length) throw new Error('README: no ```sh block in the walkthrough section');
  return blocks;
}

function toScript(blocks) {
  return blocks
    .map((b, i) => `echo "--- README walkthrough block ${i + 1}/${blocks.length} (README.md line ${b.line}), at \${SECONDS} s"\n${b.text}\n`)
    .join('\n');
}

module.exports = { extract, toScript };

if (require.main === module) {
  try {
    process.stdout.write(toScript(extract(readFileSync(process.argv[2] ?? 'README.md', 'utf8'))));
  } catch (e) {
    process.stderr.write(`${e.message}\n`);
    process.exit(1);
  }
}
