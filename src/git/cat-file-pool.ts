import { tracked } from './git-runner';
import { ChildProcessWithoutNullStreams, spawn } from 'node:child_process';

export interface GitObject {
  sha: string;
  type: 'commit' | 'tree' | 'blob' | 'tag';
  size: number;
  data: Buffer;
}

interface Pending {
  spec: string;
  resolve: (o: GitObject | null) => void;
  reject: (e: Error) => void;
}

const MAX_OBJECT_BYTES = 256 * 1024 * 1024;

/**
 * One long-lived `git cat-file --batch` process for one repository: requests are written in order
 * and answers parsed from the stream in the same order.
 */
class CatFileProcess {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly queue: Pending[] = [];
  private buf: Buffer = Buffer.alloc(0);
  private header: { sha: string; type: GitObject['type']; size: number } | null = null;
  /** Chunks of the current object's body not yet joined (joined once it is complete, not per chunk). */
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  dead = false;
  lastUsed = Date.now();

  constructor(gitDir: string, env: Record<string, string>, onExit: () => void) {
    this.child = tracked(spawn('git', ['cat-file', '--batch'], { env: { ...env, GIT_DIR: gitDir }, stdio: ['pipe', 'pipe', 'pipe'] }), ['cat-file']);
    this.child.stdout.on('data', (d: Buffer) => this.onData(d));
    this.child.stderr.on('data', () => undefined);
    this.child.stdin.on('error', () => undefined);
    const fail = (e: Error) => {
      this.dead = true;
      for (const p of this.queue.splice(0)) p.reject(e);
      onExit();
    };
    this.child.on('error', (e) => fail(e));
    this.child.on('exit', () => fail(new Error('git cat-file exited')));
  }

  read(spec: string): Promise<GitObject | null> {
    this.lastUsed = Date.now();
    return new Promise((resolve, reject) => {
      if (this.dead) return reject(new Error('git cat-file is not running'));
      this.queue.push({ spec, resolve, reject });
      this.child.stdin.write(spec + '\n');
    });
  }

  private onData(d: Buffer): void {
    if (this.header && this.buf.length + this.pendingBytes + d.length < this.header.size + 1) {
      this.pending.push(d);
      this.pendingBytes += d.length;
      return;
    }
    if (this.pending.length) {
      this.buf = Buffer.concat([this.buf, ...this.pending, d]);
      this.pending = [];
      this.pendingBytes = 0;
    } else {
      this.buf = this.buf.length ? Buffer.concat([this.buf, d]) : d;
    }
    for (;;) {
      if (!this.header) {
        const nl = this.buf.indexOf(10);
        if (nl === -1) return;
        const line = this.buf.subarray(0, nl).toString('utf8');
        this.buf = this.buf.subarray(nl + 1);
        const p = this.queue[0];
        if (/ (missing|ambiguous)$/.test(line)) {
          this.queue.shift();
          p?.resolve(null);
          continue;
        }
        const m = /^([0-9a-f]{40,64}) (commit|tree|blob|tag) (\d+)$/.exec(line);
        if (!m) {
          this.queue.shift();
          p?.reject(new Error(`unexpected cat-file output: ${line.slice(0, 100)}`));
          continue;
        }
        this.header = { sha: m[1], type: m[2] as GitObject['type'], size: Number(m[3]) };
        if (this.header.size > MAX_OBJECT_BYTES) {
          this.child.kill('SIGKILL');
          return;
        }
      }
      const h = this.header;
      if (this.buf.length < h.size + 1) return;
      const data = Buffer.from(this.buf.subarray(0, h.size));
      this.buf = this.buf.subarray(h.size + 1);
      this.header = null;
      this.queue.shift()?.resolve({ ...h, data });
    }
  }

  close(): void {
    this.dead = true;
    this.child.stdin.end();
    this.child.kill();
  }
}

/**
 * A bounded pool of cat-file processes keyed by repository, closed after an idle period, so that
 * object reads cost a pipe round trip instead of a process start.
 */
export class CatFilePool {
  private readonly procs = new Map<string, CatFileProcess>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly env: Record<string, string>,
    private readonly max = 32,
    private readonly idleMs = 60_000,
  ) {
    this.timer = setInterval(() => this.reap(), Math.min(idleMs, 10_000));
    this.timer.unref();
  }

  /** Reads an object by any name `git rev-parse` accepts (validated by the caller); null when missing. */
  read(gitDir: string, spec: string): Promise<GitObject | null> {
    if (/[\n\r\0]/.test(spec)) return Promise.resolve(null);
    let proc = this.procs.get(gitDir);
    if (!proc || proc.dead) {
      if (this.procs.size >= this.max) this.evictOldest();
      proc = new CatFileProcess(gitDir, this.env, () => {
        if (this.procs.get(gitDir) === proc) this.procs.delete(gitDir);
      });
      this.procs.set(gitDir, proc);
    }
    return proc.read(spec);
  }

  /** Drops the process of a repository (after it was removed or rewritten on disk). */
  forget(gitDir: string): void {
    this.procs.get(gitDir)?.close();
    this.procs.delete(gitDir);
  }

  private evictOldest(): void {
    let oldest: [string, CatFileProcess] | undefined;
    for (const e of this.procs) if (!oldest || e[1].lastUsed < oldest[1].lastUsed) oldest = e;
    if (oldest) this.forget(oldest[0]);
  }

  private reap(): void {
    const now = Date.now();
    for (const [k, p] of this.procs) if (now - p.lastUsed > this.idleMs) this.forget(k);
  }

  closeAll(): void {
    clearInterval(this.timer);
    for (const k of [...this.procs.keys()]) this.forget(k);
  }
}
