import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The extractor behind .ci/readme-walkthrough.sh (which runs the README walkthrough against a real
 * server in CI): what it takes from the README, and that the README's walkthrough is there and parses.
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports -- extract.js is plain JavaScript (run by .ci as well), without types to import
const { extract, toScript } = require('./extract.js') as {
  extract(md: string): { line: number; text: string }[];
  toScript(blocks: { line: number; text: string }[]): string;
};

const fence = '```';

describe('README walkthrough extractor', () => {
  it('takes the sh blocks between the markers, in order and unchanged, with their README lines', () => {
    const md = [
      `${fence}sh`,
      'echo before the section',
      fence,
      '<!-- walkthrough:start -->',
      'Text.',
      `${fence}sh`,
      'A=1',
      'echo "$A"',
      fence,
      `${fence}json`,
      '{"not": "run"}',
      fence,
      `${fence}sh`,
      'echo two',
      fence,
      '<!-- walkthrough:end -->',
      `${fence}sh`,
      'echo after the section',
      fence,
    ].join('\n');
    expect(extract(md)).toEqual([
      { line: 7, text: 'A=1\necho "$A"' },
      { line: 14, text: 'echo two' },
    ]);
    const script = toScript(extract(md));
    expect(script).toContain('echo "--- README walkthrough block 2/2 (README.md line 14), at ${SECONDS} s"\necho two\n');
    expect(script).not.toContain('not');
    expect(script).not.toContain('after the section');
  });

  it('refuses a README without the markers, without a sh block, or with an unclosed block', () => {
    expect(() => extract('# nothing')).toThrow(/walkthrough:start/);
    expect(() => extract('<!-- walkthrough:start -->\ntext\n<!-- walkthrough:end -->')).toThrow(/no ```sh block/);
    expect(() => extract(`<!-- walkthrough:start -->\n${fence}sh\necho\n<!-- walkthrough:end -->`)).toThrow(/not closed/);
  });

  it("finds the README's walkthrough: start the server, sign in, push, runner, trace, artifacts, webhook; valid bash", () => {
    const readme = readFileSync(join(__dirname, '..', '..', 'README.md'), 'utf8');
    const script = toScript(extract(readme));
    for (const step of [
      'node dist/main.js',
      'initial_root_password',
      '/api/v3/projects',
      'credential.helper=',
      'gitlab-ci-multi-runner register',
      'trace?follow=true',
      '/artifacts',
      'allow_local_requests_from_hooks_and_services=true',
    ]) {
      expect(script).toContain(step);
    }
    const syntax = spawnSync('bash', ['-n'], { input: script, encoding: 'utf8' });
    expect(syntax.stderr).toBe('');
    expect(syntax.status).toBe(0);
  });
});
