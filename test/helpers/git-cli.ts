import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import type { TestApp } from './test-app';

export interface GitRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * The stock git CLI for tests, run asynchronously: the server under test lives in the same process,
 * so a synchronous child (execFileSync) talking to it would block its event loop.
 * The environment is fixed: no system or user config (HOME is the test's folder), no prompts.
 */
export class GitCli {
  constructor(
    readonly home: string,
    readonly port: number,
  ) {}

  /** Makes the app listen on a free loopback port and returns a CLI bound to it. */
  static async listen(t: TestApp, home: string): Promise<GitCli> {
    await t.app.app.listen(0, '127.0.0.1');
    return new GitCli(home, (t.app.app.getHttpServer().address() as AddressInfo).port);
  }

  run(args: string[], cwd: string = this.home, extraEnv: Record<string, string> = {}): Promise<GitRun> {
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: this.home,
      XDG_CONFIG_HOME: join(this.home, '.config'),
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_TERMINAL_PROMPT: '0',
      GIT_ASKPASS: '/bin/false',
      LC_ALL: 'C',
      ...extraEnv,
    };
    const argv = [
      '-c',
      'user.name=Git Tester',
      '-c',
      'user.email=git-tester@example.com',
      '-c',
      'init.defaultBranch=master',
      '-c',
      'credential.helper=',
      ...args,
    ];
    return new Promise((resolve, reject) => {
      const child = spawn('git', argv, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      const timer = setTimeout(() => child.kill('SIGKILL'), 50_000);
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
      child.on('error', reject);
      child.on('close', (code) => {
        clearTimeout(timer);
        resolve({ code, stdout, stderr });
      });
    });
  }

  /** Runs git and fails with its stderr unless it exits 0; returns stdout. */
  async ok(args: string[], cwd?: string, env?: Record<string, string>): Promise<string> {
    const r = await this.run(args, cwd, env);
    if (r.code !== 0) throw new Error(`git ${args.join(' ')} failed (${r.code}):\n${r.stderr}`);
    return r.stdout;
  }

  /** The clone URL of `namespace/project`, with `login:secret` credentials when given. */
  url(path: string, login?: string, secret?: string): string {
    const auth = login ? `${encodeURIComponent(login)}:${encodeURIComponent(secret ?? '')}@` : '';
    return `http://${auth}127.0.0.1:${this.port}/${path}.git`;
  }

  /** Writes `files` into the work tree and commits them; returns the new HEAD sha. */
  async commit(dir: string, files: Record<string, string | Buffer>, message: string, env: Record<string, string> = {}): Promise<string> {
    for (const [name, content] of Object.entries(files)) {
      mkdirSync(dirname(join(dir, name)), { recursive: true });
      writeFileSync(join(dir, name), content);
    }
    await this.ok(['add', '-A'], dir);
    await this.ok(['commit', '-q', '-m', message], dir, env);
    return (await this.ok(['rev-parse', 'HEAD'], dir)).trim();
  }
}

/** A supertest parser that keeps the body as raw bytes. */
export function binaryParser(res: any, cb: (err: Error | null, body: any) => void): void {
  const chunks: Buffer[] = [];
  res.on('data', (c: Buffer) => chunks.push(c));
  res.on('end', () => cb(null, Buffer.concat(chunks)));
}
