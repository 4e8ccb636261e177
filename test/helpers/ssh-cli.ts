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

  /** A git command over a connection of its own, its stdin held by the test (`holdCommand`). */
  hold(keyFile: string, command: string): HeldCommand {
    return holdCommand(this.args(keyFile), command, this.home);
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

/**
 * One git command over SSH whose stdin the test holds: `advertised()` waits for git's ref advertisement
 * (ended by its flush-pkt), `send` writes the client's side, `endsWithin` tells whether the session
 * ends by itself in time (else it is killed).
 */
export interface HeldCommand {
  readonly stdout: () => string;
  readonly stderr: () => string;
  /** Whether the session has ended (the ssh process exited). */
  ended(): boolean;
  advertised(ms?: number): Promise<boolean>;
  send(data: string | Buffer): void;
  endsWithin(ms: number): Promise<{ ended: boolean; code: number | null }>;
  kill(): void;
}

/** Runs `ssh <args> git@127.0.0.1 <command>` with its stdin left open. */
export function holdCommand(sshArgsList: string[], command: string, home: string): HeldCommand {
  const child = spawn('ssh', [...sshArgsList, 'git@127.0.0.1', command], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LC_ALL: 'C', HOME: home },
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString('latin1')));
  child.stderr.on('data', (d: Buffer) => (err += d.toString('utf8')));
  child.stdin.on('error', () => undefined);
  let code: number | null | undefined;
  const exited = new Promise<number | null>((r) =>
    child.on('close', (c) => {
      code = c;
      r(c);
    }),
  );
  return {
    stdout: () => out,
    stderr: () => err,
    ended: () => code !== undefined,
    async advertised(ms = 10_000) {
      for (let waited = 0; waited < ms && !out.endsWith('0000') && code === undefined; waited += 50) await new Promise((r) => setTimeout(r, 50));
      return out.endsWith('0000');
    },
    send: (data) => child.stdin.write(data),
    async endsWithin(ms) {
      let timer: NodeJS.Timeout | undefined;
      const ended = await Promise.race([exited.then(() => true), new Promise<boolean>((r) => (timer = setTimeout(() => r(false), ms)))]);
      clearTimeout(timer);
      if (!ended) child.kill('SIGKILL');
      return { ended, code: code ?? null };
    },
    kill: () => child.kill('SIGKILL'),
  };
}

/**
 * One OpenSSH `ControlMaster` connection, as a developer's `~/.ssh/config` with `ControlMaster auto`
 * and `ControlPersist` makes it: the first command opens the master, every later `ssh`/`git` command
 * with the same `ControlPath` runs as a new session (channel) on that one authenticated connection.
 */
export class Multiplexed {
  readonly controlPath: string;

  constructor(
    private readonly cli: SshCli,
    private readonly keyFile: string,
    name: string,
  ) {
    this.controlPath = join(cli.home, `cm-${name}`);
  }

  args(): string[] {
    return [...this.cli.args(this.keyFile), '-o', 'ControlMaster=auto', '-o', `ControlPath=${this.controlPath}`, '-o', 'ControlPersist=60'];
  }

  git(args: string[], cwd = this.cli.home): Promise<Run> {
    return run('git', ['-c', 'user.name=T', '-c', 'user.email=t@example.com', '-c', 'init.defaultBranch=master', ...args], {
      cwd,
      env: { HOME: this.cli.home, GIT_CONFIG_NOSYSTEM: '1', GIT_SSH_COMMAND: ['ssh', ...this.args()].map((a) => `'${a}'`).join(' ') },
    });
  }

  ssh(args: string[]): Promise<Run> {
    return run('ssh', [...this.args(), ...args]);
  }

  /** A git command as a new session on the master (opening it if needed), its stdin held by the test. */
  hold(command: string): HeldCommand {
    return holdCommand(this.args(), command, this.cli.home);
  }

  /** Whether the master connection is up (`ssh -O check`: asks the master, never connects). */
  async alive(): Promise<boolean> {
    return (await run('ssh', ['-F', '/dev/null', '-o', `ControlPath=${this.controlPath}`, '-O', 'check', 'git@127.0.0.1'])).code === 0;
  }

  /** Waits until the master is gone (true) or `ms` passed (false). */
  async closedWithin(ms: number): Promise<boolean> {
    const deadline = Date.now() + ms;
    while (Date.now() < deadline) {
      if (!(await this.alive())) return true;
      await new Promise((r) => setTimeout(r, 100));
    }
    return !(await this.alive());
  }

  /** Stops the master (`ssh -O exit`), if it still runs. */
  async exit(): Promise<void> {
    await run('ssh', ['-F', '/dev/null', '-o', `ControlPath=${this.controlPath}`, '-O', 'exit', 'git@127.0.0.1']);
  }
}
