import { ChildProcess, ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { Socket } from 'node:net';
import { PassThrough } from 'node:stream';

/**
 * Starting a process from the server's own process costs its event loop dearly: libuv forks the
 * whole server (copying the page tables of a few hundred MB, then copy-on-write faults) and the main
 * thread then blocks until the child has exec'd — on a busy machine, until the scheduler runs the
 * child. Measured (2 cores, a 250 MB heap, 60 `git --version`/s): the event loop 72 % busy with
 * spawning alone, 92–98 % with two other busy processes, so every request queued behind spawns
 * while the CPU was not saturated (the reference load's mix, issue 27).
 *
 * The broker is a small Node process that does the spawning instead: the server sends it
 * `{ args, cwd, env }` over an IPC channel; it spawns git (its own fork is cheap, and its event loop
 * is the one that waits for exec) and hands the child's stdin, stdout and stderr back as handles
 * (file descriptors passed over the channel: the data then flows between git and the server
 * directly, never through the broker), then the exit status. The server sees a `ChildProcess`-like
 * object: the same streams, `exit` and `close` events, `kill` (sent to git's process group from
 * here, as before), `pid`, `exitCode`, `signalCode`.
 *
 * The broker holds nothing the server needs: if it dies, jobs in flight are killed and end with
 * SIGKILL, and the next spawn starts a new broker.
 */
const BROKER_JS = String.raw`'use strict';
const { spawn } = require('node:child_process');
process.on('message', (m) => {
  if (!m || m.t !== 'spawn') return;
  let c;
  try {
    c = spawn(m.cmd, m.args, { cwd: m.cwd, env: m.env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
  } catch (e) {
    process.send({ t: 'error', id: m.id, message: String(e && e.message) });
    return;
  }
  if (c.pid === undefined) {
    c.once('error', (e) => process.send({ t: 'error', id: m.id, message: String(e && e.message) }));
    return;
  }
  // not a byte is read here: the handles go to the server unread
  c.stdout._handle.readStop();
  c.stderr._handle.readStop();
  c.on('error', () => undefined);
  c.stdin.on('error', () => undefined);
  // stdin is closed by Node when the child exits: then it goes without a handle
  process.send({ t: 'stdin', id: m.id, pid: c.pid }, c.stdin.destroyed ? undefined : c.stdin);
  process.send({ t: 'stdout', id: m.id }, c.stdout);
  process.send({ t: 'stderr', id: m.id }, c.stderr);
  c.on('exit', (code, signal) => process.send({ t: 'exit', id: m.id, code, signal }));
});
process.on('disconnect', () => process.exit(0));
`;

type BrokerMessage =
  | { t: 'stdin'; id: number; pid: number }
  | { t: 'stdout' | 'stderr'; id: number }
  | { t: 'exit'; id: number; code: number | null; signal: NodeJS.Signals | null }
  | { t: 'error'; id: number; message: string };

/**
 * A git process started by the broker, shaped as the `ChildProcess` its callers use. As with a
 * child of our own, `close` follows the exit and the end of stdout and stderr at the pipe (whether
 * or not the caller read them: a caller that never reads stderr still sees `close`), one turn of the
 * event loop after the last output reached the streams, so a reader has had all of it.
 */
class BrokeredChild extends EventEmitter {
  pid: number | undefined;
  exitCode: number | null = null;
  signalCode: NodeJS.Signals | null = null;
  readonly stdin = new PassThrough();
  readonly stdout = new PassThrough();
  readonly stderr = new PassThrough();
  private pendingKill: NodeJS.Signals | number | undefined;
  private exited = false;
  private closed = false;
  private openPipes = 2;
  private readonly attached = { stdout: false, stderr: false };

  kill(signal: NodeJS.Signals | number = 'SIGTERM'): boolean {
    if (this.exited) return false;
    if (this.pid === undefined) {
      this.pendingKill = signal;
      return true;
    }
    try {
      process.kill(-this.pid, signal); // git's process group (spawned detached)
      return true;
    } catch {
      return false;
    }
  }

  /** @internal the broker's messages, in order */
  onStdin(pid: number, socket: Socket | undefined): void {
    this.pid = pid;
    if (socket) {
      socket.on('error', () => this.stdin.unpipe(socket));
      this.stdin.pipe(socket);
    } else {
      this.stdin.resume(); // git is gone: what is written goes nowhere, as to a closed pipe
    }
    if (this.pendingKill !== undefined) this.kill(this.pendingKill);
  }

  /** @internal */
  onOutput(which: 'stdout' | 'stderr', socket: Socket | undefined): void {
    const target = this[which];
    this.attached[which] = true;
    if (!socket) {
      target.end();
      return this.pipeClosed();
    }
    // as a child's own pipe: read while the reader keeps up, paused while it does not
    socket.on('data', (chunk: Buffer) => {
      if (!target.write(chunk)) socket.pause();
    });
    target.on('drain', () => socket.resume());
    socket.once('end', () => target.end());
    socket.on('error', () => target.end());
    socket.once('close', () => this.pipeClosed());
  }

  /** @internal */
  onExit(code: number | null, signal: NodeJS.Signals | null): void {
    if (this.exited) return;
    this.exited = true;
    this.exitCode = code;
    this.signalCode = signal;
    this.emit('exit', code, signal);
    this.maybeClose();
  }

  /** @internal the spawn failed (no process) */
  onError(message: string): void {
    if (this.exited) return;
    this.exited = true;
    this.exitCode = -2;
    this.emit('error', new Error(message));
    this.stdout.end();
    this.stderr.end();
    this.stdin.resume();
    this.openPipes = 0;
    this.maybeClose();
  }

  /** @internal the broker died: the process is killed, and what it never handed over is closed */
  abandon(): void {
    this.kill('SIGKILL');
    if (this.pid === undefined) return this.onError('the spawn broker exited');
    for (const which of ['stdout', 'stderr'] as const) if (!this.attached[which]) this.onOutput(which, undefined);
    this.onExit(null, 'SIGKILL');
  }

  private pipeClosed(): void {
    this.openPipes--;
    this.maybeClose();
  }

  private maybeClose(): void {
    if (this.closed || !this.exited || this.openPipes > 0) return;
    this.closed = true;
    setImmediate(() => this.emit('close', this.exitCode, this.signalCode));
  }
}

/** One broker per server process, started on first use. */
class SpawnBroker {
  private child?: ChildProcess;
  private nextId = 1;
  private readonly jobs = new Map<number, BrokeredChild>();

  spawn(cmd: string, args: string[], cwd: string | undefined, env: Record<string, string>): ChildProcessWithoutNullStreams {
    const broker = this.start();
    const id = this.nextId++;
    const job = new BrokeredChild();
    this.jobs.set(id, job);
    if (this.jobs.size === 1) broker.channel?.ref();
    // 'close' ends the job; its streams are drained by then
    job.once('close', () => this.forget(id));
    broker.send({ t: 'spawn', id, cmd, args, cwd, env }, (e) => {
      if (e) job.onError(`the spawn broker is gone: ${e.message}`);
    });
    // the subset of ChildProcess that src/git uses: streams, events, kill, pid and exit status
    return job as unknown as ChildProcessWithoutNullStreams;
  }

  private forget(id: number): void {
    this.jobs.delete(id);
    if (this.jobs.size === 0) this.child?.channel?.unref();
  }

  private start(): ChildProcess {
    if (this.child && this.child.connected) return this.child;
    const env = { ...process.env };
    delete env.NODE_OPTIONS; // the server's own flags (heap sizes, preloads) are not the broker's
    const child = spawn(process.execPath, ['--max-old-space-size=32', '-e', BROKER_JS], { env, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    child.unref();
    child.channel?.unref();
    child.on('message', (m: BrokerMessage, handle?: Socket) => this.onMessage(m, handle));
    child.on('error', () => undefined);
    child.once('exit', () => {
      if (this.child === child) this.child = undefined;
      // jobs it had not finished: their processes are killed and the jobs end as killed
      for (const [id, job] of this.jobs) {
        job.abandon();
        this.jobs.delete(id);
      }
    });
    this.child = child;
    return child;
  }

  private onMessage(m: BrokerMessage, handle?: Socket): void {
    const job = this.jobs.get(m.id);
    if (!job) {
      handle?.destroy();
      return;
    }
    switch (m.t) {
      case 'stdin':
        return job.onStdin(m.pid, handle);
      case 'stdout':
      case 'stderr':
        return job.onOutput(m.t, handle);
      case 'exit':
        return job.onExit(m.code, m.signal);
      case 'error':
        return job.onError(m.message);
    }
  }
}

let broker: SpawnBroker | undefined;

/** Spawns `cmd` through the process's spawn broker (detached: in a process group of its own). */
export function brokeredSpawn(cmd: string, args: string[], cwd: string | undefined, env: Record<string, string>): ChildProcessWithoutNullStreams {
  broker ??= new SpawnBroker();
  return broker.spawn(cmd, args, cwd, env);
}
