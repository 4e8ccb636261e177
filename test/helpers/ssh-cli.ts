import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SshServerService } from '../../src/ssh/ssh-server.service';

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a program asynchronously (the server under test lives in this process). */
export function run(cmd: string, args: string[], opts: { cwd?: string; env?: Record<string, string> } = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, {
      cwd: opts.cwd,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LC_ALL: 'C', ...opts.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
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

/**
 * The stock OpenSSH client and git over SSH against the app's built-in server: keys made by
 * ssh-keygen, a `known_hosts` made from the server's host keys, `StrictHostKeyChecking=yes`, no agent,
 * no user or system configuration.
 */
export class SshCli {
  readonly knownHosts: string;

  constructor(
    readonly home: string,
    readonly port: number,
    server: SshServerService,
  ) {
    this.knownHosts = join(home, `known_hosts_${port}`);
    writeFileSync(this.knownHosts, server.fingerprints.map((k) => `[127.0.0.1]:${port} ${k.publicKey}`).join('\n') + '\n');
  }

  static of(server: SshServerService, home: string): SshCli {
    return new SshCli(home, server.port!, server);
  }

  async keygen(name: string, type = 'ed25519', bits?: number): Promise<{ file: string; pub: string }> {
    const file = join(this.home, `id_${name}`);
    const r = await run('ssh-keygen', ['-q', '-t', type, ...(bits ? ['-b', String(bits)] : []), '-N', '', '-C', name, '-f', file]);
    if (r.code !== 0) throw new Error(r.stderr);
    return { file, pub: readFileSync(`${file}.pub`, 'utf8').trim() };
  }

  args(keyFile: string): string[] {
    return sshArgs(keyFile, this.knownHosts, this.port);
  }

  ssh(keyFile: string, args: string[]): Promise<Run> {
    return run('ssh', [...this.args(keyFile), ...args]);
  }

  git(keyFile: string, args: string[], cwd = this.home): Promise<Run> {
    return run('git', ['-c', 'user.name=T', '-c', 'user.email=t@example.com', '-c', 'init.defaultBranch=master', ...args], {
      cwd,
      env: {
        HOME: this.home,
        GIT_CONFIG_NOSYSTEM: '1',
        GIT_SSH_COMMAND: ['ssh', ...this.args(keyFile)].map((a) => `'${a}'`).join(' '),
      },
    });
  }

  url(path: string): string {
    return `ssh://git@127.0.0.1:${this.port}/${path}.git`;
  }
}

/** The stock OpenSSH client's arguments: this key only, no agent or config, the server's host key checked. */
export function sshArgs(keyFile: string, knownHosts: string, port: number): string[] {
  return [
    '-F',
    '/dev/null',
    '-i',
    keyFile,
    '-o',
    'IdentitiesOnly=yes',
    '-o',
    'IdentityAgent=none',
    '-o',
    'BatchMode=yes',
    '-o',
    `UserKnownHostsFile=${knownHosts}`,
    '-o',
    'StrictHostKeyChecking=yes',
    '-o',
    'ConnectTimeout=20',
    '-p',
    String(port),
  ];
}
