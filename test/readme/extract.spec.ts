import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { AddressInfo } from 'node:net';
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
      // a port and a data folder of its own unless given (a server from `npm start` is on 8080 and ./data)
      'PORT="${PORT:-$(free_port)}" DATA_DIR="${DATA_DIR:-$(mktemp -d)}"',
      '/dist/main.js',
      'initial_root_password',
      // run again in the same shell: the project is found, not created again
      'api projects/root%2Fhello 2> /dev/null || api projects -d name=hello',
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

  it("the walkthrough's `api` and `json` print the API's message (or what is wrong with the input), never a stack trace", async () => {
    const readme = readFileSync(join(__dirname, '..', '..', 'README.md'), 'utf8');
    const first = extract(readme)[0].text;
    const helpers = first.slice(first.indexOf('json() {'));
    expect(helpers).toMatch(/^api\(\) \{/m);
    const api = createServer((req, res) => {
      res.setHeader('content-type', 'application/json');
      if (req.url === '/api/v3/projects' && req.method === 'POST') {
        res.statusCode = 409;
        res.end('{"message":"409 Name has already been taken"}');
      } else if (req.url === '/api/v3/projects' && req.method === 'PUT') {
        res.statusCode = 400;
        res.end('{"message":{"name":["can\'t be blank"]}}');
      } else {
        res.end(req.headers['private-token'] === 'secret' ? '{"id":7,"username":"root"}' : '{"message":"401 Unauthorized"}');
      }
    });
    await new Promise<void>((r) => api.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
    const bash = (script: string) =>
      new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
        const c = spawn('bash', ['-c', `${helpers}\n${script}`], { env: { PATH: process.env.PATH ?? '', URL: url }, stdio: ['ignore', 'pipe', 'pipe'] });
        let out = '';
        let err = '';
        c.stdout.on('data', (d: Buffer) => (out += d.toString()));
        c.stderr.on('data', (d: Buffer) => (err += d.toString()));
        c.on('close', (code) => resolve({ code, out, err }));
      });
    try {
      expect(await bash('TOKEN=secret api user | json .username')).toEqual({ code: 0, out: 'root\n', err: '' });
      expect(await bash('api projects -d name=hello')).toEqual({ code: 1, out: '', err: 'projects: 409 Name has already been taken\n' });
      expect(await bash('api projects -X PUT -d name=')).toEqual({ code: 1, out: '', err: 'projects: 400 {"name":["can\'t be blank"]}\n' });
      const html = await bash("echo '<html>' | json .id");
      expect(html.code).toBe(1);
      expect(html.err).toMatch(/^json: [^]*is not valid JSON\n$/);
      expect(await bash("echo '{}' | json .id")).toEqual({ code: 1, out: '', err: 'json: no .id\n' });
      expect(await bash("echo '[]' | json '.find(() => true).id'")).toEqual({
        code: 1,
        out: '',
        err: "json: Cannot read properties of undefined (reading 'id')\n",
      });
      const down = await bash('URL=http://127.0.0.1:1 api user');
      expect(down.code).toBe(1);
      expect(down.err).toMatch(/\nuser: no answer \n$/);
      for (const r of [html, down]) expect(r.err).not.toMatch(/^\s+at /m);
    } finally {
      await new Promise((r) => api.close(r));
    }
  });
});
