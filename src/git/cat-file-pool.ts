import { tracked } from './git-runner';
import { ChildProcessWithoutNullStreams, spawn } from 'node:child_process';

/** What `info` tells of an object, without its content. */
export interface ObjectInfo {
  sha: string;
  type: 'commit' | 'tree' | 'blob' | 'tag';
  size: number;
}

export interface GitObject extends ObjectInfo {
  data: Buffer;
}

/** An object larger than the pool reads into memory (stream it instead: `Repository.openBlob`). */
export class ObjectTooLarge extends Error {
  constructor(
    readonly size: number,
    readonly limit: number,
  ) {
    super(`object of ${size} bytes is over the ${limit}-byte read limit`);
  }
}

interface Pending {
  spec: string;
  /** `contents`: header and body; `info`: header only. */
  mode: 'contents' | 'info';
  resolve: (o: GitObject | ObjectInfo | null) => void;
  reject: (e: Error) => void;
}

/** The largest object read into memory; larger ones are refused (ObjectTooLarge), never buffered. */
export const MAX_OBJECT_BYTES = 256 * 1024 * 1024;

/**
 * One long-lived `git cat-file --batch-command` process for one repository: requests (`contents` or
 * `info`) are written in order and answers parsed from the stream in the same order. An object over
 * MAX_OBJECT_BYTES is skipped as it streams past (nothing buffered, the process kept) and its
 * request fails with ObjectTooLarge.
 */
class CatFileProcess {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly queue: Pending[] = [];
  private buf: Buffer = Buffer.alloc(0);
  private header: { sha: string; type: GitObject['type']; size: number } | null = null;
  /** Chunks of the current object's body not yet joined (joined once it is complete, not per chunk). */
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** Bytes of a refused (over-limit) object, and its newline, still to discard. */
  private skip = 0;
  dead = false;
  lastUsed = Date.now();

  constructor(gitDir: string, env: Record<string, string>, onExit: () => void) {
    this.child = tracked(spawn('git', ['cat-file', '--batch-command'], { env: { ...env, GIT_DIR: gitDir }, stdio: ['pipe', 'pipe', 'pipe'] }), ['cat-file']);
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
    return this.request(spec, 'contents') as Promise<GitObject | null>;
  }

  info(spec: string): Promise<ObjectInfo | null> {
    return this.request(spec, 'info');
  }

  private request(spec: string, mode: Pending['mode']): Promise<GitObject | ObjectInfo | null> {
    this.lastUsed = Date.now();
    return new Promise((resolve, reject) => {
      if (this.dead) return reject(new Error('git cat-file is not running'));
      this.queue.push({ spec, mode, resolve, reject });
      this.child.stdin.write(`${mode} ${spec}\n`);
    });
  }

  private onData(d: Buffer): void {
    if (this.skip > 0) {
      if (d.length <= this.skip) {
        this.skip -= d.length;
        return;
      }
      d = d.subarray(this.skip);
      this.skip = 0;
    }
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
        const info: ObjectInfo = { sha: m[1], type: m[2] as ObjectInfo['type'], size: Number(m[3]) };
        if (p?.mode === 'info') {
          this.queue.shift();
          p.resolve(info);
          continue;
        }
        if (info.size > MAX_OBJECT_BYTES) {
          this.queue.shift();
          p?.reject(new ObjectTooLarge(info.size, MAX_OBJECT_BYTES));
          const have = Math.min(this.buf.length, info.size + 1);
          this.buf = this.buf.subarray(have);
          this.skip = info.size + 1 - have;
          if (this.skip > 0) return;
          continue;
        }
        this.header = info;
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

  /**
   * Reads an object by any name `git rev-parse` accepts (validated by the caller); null when missing.
   * Rejects with ObjectTooLarge above MAX_OBJECT_BYTES.
   */
  read(gitDir: string, spec: string): Promise<GitObject | null> {
    if (/[\n\r\0]/.test(spec)) return Promise.resolve(null);
    return this.process(gitDir).read(spec);
  }

  /** The id, type and size of an object (any size), without reading its content; null when missing. */
  info(gitDir: string, spec: string): Promise<ObjectInfo | null> {
    if (/[\n\r\0]/.test(spec)) return Promise.resolve(null);
    return this.process(gitDir).info(spec);
  }

  private process(gitDir: string): CatFileProcess {
    let proc = this.procs.get(gitDir);
    if (!proc || proc.dead) {
      if (this.procs.size >= this.max) this.evictOldest();
      proc = new CatFileProcess(gitDir, this.env, () => {
        if (this.procs.get(gitDir) === proc) this.procs.delete(gitDir);
      });
      this.procs.set(gitDir, proc);
    }
    return proc;
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
