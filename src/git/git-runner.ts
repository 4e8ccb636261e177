import { ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { gitProcessStarted } from '../metrics/registry';
import { brokeredSpawn } from './spawn-broker';

export class GitError extends Error {
  constructor(
    message: string,
    readonly exitCode: number | null,
    readonly stderr: string,
  ) {
    super(message);
  }
}

export interface GitResult {
  stdout: Buffer;
  stderr: string;
  exitCode: number;
}

export interface RunOptions {
  /** The repository (sets GIT_DIR) or working folder. */
  gitDir?: string;
  cwd?: string;
  timeoutMs?: number;
  input?: string | Buffer;
  /** Extra environment, e.g. GIT_AUTHOR_NAME for commits. Only fixed names are passed. */
  env?: Record<string, string>;
  /** Exit codes that are not errors (e.g. 1 for "not found" answers). */
  okCodes?: number[];
  maxOutputBytes?: number;
}

const DEFAULT_TIMEOUT_MS = 30_000;
const DEFAULT_MAX_OUTPUT = 64 * 1024 * 1024;

/**
 * The only place that spawns git: an argv array (never a shell), a fixed environment that ignores
 * the machine's and user's config, no prompts, a timeout on every call.
 */
export class GitRunner {
  private readonly baseEnv: Record<string, string>;

  /**
   * `spawnBroker`: start processes through the spawn broker (src/git/spawn-broker.ts), which keeps
   * fork and exec off the server's event loop; the server's own runner does, one-off tools need not.
   */
  constructor(
    homeDir: string,
    private readonly o: { spawnBroker?: boolean } = {},
  ) {
    mkdirSync(homeDir, { recursive: true, mode: 0o700 });
    this.baseEnv = {
      PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
      HOME: homeDir,
      XDG_CONFIG_HOME: join(homeDir, '.config'),
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_TERMINAL_PROMPT: '0',
      GIT_ASKPASS: '/bin/false',
      SSH_ASKPASS: '/bin/false',
      GIT_SSH_COMMAND: '/bin/false',
      LC_ALL: 'C',
      LANG: 'C',
      TZ: 'UTC',
    };
  }

  /** The fixed environment every git call gets (for long-lived helpers such as cat-file). */
  get environment(): Record<string, string> {
    return { ...this.baseEnv };
  }

  /**
   * Starts git with streamed stdin/stdout (archives, smart HTTP); killed after `timeoutMs`.
   * The caller consumes stdout and handles the exit.
   */
  spawn(args: string[], opts: Omit<RunOptions, 'input' | 'okCodes' | 'maxOutputBytes'> = {}): ChildProcessWithoutNullStreams {
    const env = { ...this.baseEnv, ...(opts.env ?? {}) };
    if (opts.gitDir) env.GIT_DIR = opts.gitDir;
    const child = spawnGit(args, opts.cwd, env, this.o.spawnBroker);
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    child.on('close', () => clearTimeout(timer));
    child.stdin.on('error', () => undefined);
    return child;
  }

  run(args: string[], opts: RunOptions = {}): Promise<GitResult> {
    const env = { ...this.baseEnv, ...(opts.env ?? {}) };
    if (opts.gitDir) env.GIT_DIR = opts.gitDir;
    const timeout = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const maxOut = opts.maxOutputBytes ?? DEFAULT_MAX_OUTPUT;
    return new Promise((resolve, reject) => {
      const child = spawnGit(args, opts.cwd, env, this.o.spawnBroker);
      const out: Buffer[] = [];
      let outBytes = 0;
      let err = '';
      let killedFor: string | undefined;
      const timer = setTimeout(() => {
        killedFor = `timed out after ${timeout} ms`;
        child.kill('SIGKILL');
      }, timeout);
      child.stdout.on('data', (d: Buffer) => {
        outBytes += d.length;
        if (outBytes > maxOut) {
          killedFor = 'output too large';
          child.kill('SIGKILL');
          return;
        }
        out.push(d);
      });
      child.stderr.on('data', (d: Buffer) => {
        if (err.length < 64 * 1024) err += d.toString('utf8');
      });
      child.on('error', (e) => {
        clearTimeout(timer);
        reject(new GitError(`git could not start: ${e.message}`, null, ''));
      });
      child.on('close', (code) => {
        clearTimeout(timer);
        if (killedFor) return reject(new GitError(`git ${args[0]} ${killedFor}`, code, err));
        const exitCode = code ?? -1;
        if (exitCode !== 0 && !(opts.okCodes ?? []).includes(exitCode)) {
          return reject(new GitError(`git ${args[0]} failed (${exitCode}): ${err.trim().slice(0, 500)}`, exitCode, err));
        }
        resolve({ stdout: Buffer.concat(out), stderr: err, exitCode });
      });
      child.stdin.on('error', () => undefined);
      if (opts.input !== undefined) child.stdin.end(opts.input);
      else child.stdin.end();
    });
  }
}

/**
 * Spawns git in a process group of its own, and makes `kill` signal the whole group: `git <cmd>`
 * runs most commands as a child process (`git http-backend` starts `git-http-backend`, which starts
 * `upload-pack`), and a signal to the wrapper alone would leave those running, orphaned.
 */
function spawnGit(args: string[], cwd: string | undefined, env: Record<string, string>, broker = false): ChildProcessWithoutNullStreams {
  if (broker) return tracked(brokeredSpawn('git', args, cwd, env), args); // its kill signals the group
  const child = tracked(spawn('git', args, { cwd, env, stdio: ['pipe', 'pipe', 'pipe'], detached: true }), args);
  const killWrapper = child.kill.bind(child);
  child.kill = (signal?: NodeJS.Signals | number) => {
    if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return killWrapper(signal);
    try {
      process.kill(-child.pid, signal ?? 'SIGTERM');
      return true;
    } catch {
      return killWrapper(signal);
    }
  };
  return child;
}

/** Counts the process in the metrics (spawned by git subcommand, running now) until it ends. */
export function tracked<T extends ChildProcessWithoutNullStreams>(child: T, args: string[]): T {
  const command = args.find((a) => !a.startsWith('-') && !a.includes('=')) ?? 'git';
  const done = gitProcessStarted(command);
  child.once('close', done);
  child.once('error', done);
  return child;
}
