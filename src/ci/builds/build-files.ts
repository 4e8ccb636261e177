import { constants, createReadStream, createWriteStream, promises as fs, ReadStream } from 'node:fs';
import { dirname, join } from 'node:path';
import { Readable, Transform, TransformCallback } from 'node:stream';

/**
 * Where a build's trace and artifacts live: `<DATA_DIR>/ci/builds/<id>/` (shared by every app
 * instance, like the repositories). A trace is one file that parts are written into at their offset,
 * so an append costs O(part); the row's `trace_size` says how much of it is valid.
 */
export class BuildFiles {
  constructor(private readonly dataDir: string) {}

  dir(buildId: number): string {
    return join(this.dataDir, 'ci', 'builds', String(buildId));
  }

  tracePath(buildId: number): string {
    return join(this.dir(buildId), 'trace.log');
  }

  artifactsPath(buildId: number): string {
    return join(this.dir(buildId), 'artifacts.bin');
  }

  /** Writes `data` at `offset` and cuts the file there; returns the new length. */
  async writeTraceAt(buildId: number, offset: number, data: Buffer): Promise<number> {
    const path = this.tracePath(buildId);
    await fs.mkdir(dirname(path), { recursive: true });
    const fh = await fs.open(path, constants.O_RDWR | constants.O_CREAT, 0o600);
    try {
      if (data.length > 0) await fh.write(data, 0, data.length, offset);
      await fh.truncate(offset + data.length);
    } finally {
      await fh.close();
    }
    return offset + data.length;
  }

  /** Replaces the whole trace (the full-trace PUT of older runners). */
  async replaceTrace(buildId: number, text: string): Promise<number> {
    const path = this.tracePath(buildId);
    await fs.mkdir(dirname(path), { recursive: true });
    const tmp = `${path}.${process.pid}.${Date.now()}.tmp`;
    const data = Buffer.from(text, 'utf8');
    await fs.writeFile(tmp, data);
    await fs.rename(tmp, path);
    return data.length;
  }

  /** The last `max` bytes of the trace's first `size` bytes (the valid part), as text; empty when there is none. */
  async traceTail(buildId: number, size: number, max: number): Promise<string> {
    if (size <= 0) return '';
    const start = Math.max(0, size - max);
    const fh = await fs.open(this.tracePath(buildId), 'r').catch((e: NodeJS.ErrnoException) => {
      if (e.code === 'ENOENT') return undefined; // no trace written yet
      throw e;
    });
    if (!fh) return '';
    try {
      const buf = Buffer.alloc(size - start);
      const { bytesRead } = await fh.read(buf, 0, buf.length, start);
      return buf.subarray(0, bytesRead).toString('utf8');
    } finally {
      await fh.close();
    }
  }

  /** The first `size` bytes of the trace, streamed, with each secret replaced by `xxxxxx`. */
  readTrace(buildId: number, size: number, secrets: string[]): NodeJS.ReadableStream {
    if (size <= 0) return Readable.from([]);
    const src: ReadStream = createReadStream(this.tracePath(buildId), { start: 0, end: size - 1 });
    return src.pipe(new MaskSecrets(secrets.filter((s) => s.length > 0)));
  }

  async removeArtifacts(buildId: number): Promise<void> {
    await fs.rm(this.artifactsPath(buildId), { force: true });
  }

  async removeAll(buildId: number): Promise<void> {
    await fs.rm(this.dir(buildId), { recursive: true, force: true });
  }

  artifactsWriteStream(buildId: number, tmp: string) {
    return createWriteStream(join(this.dir(buildId), tmp), { flags: 'w' });
  }
}

/** Replaces secrets in a byte stream, also across chunk boundaries (keeps the last len-1 bytes back). */
export class MaskSecrets extends Transform {
  private carry: Buffer = Buffer.alloc(0);
  private readonly needles: Buffer[];
  private readonly keep: number;

  constructor(secrets: string[]) {
    super();
    this.needles = secrets.map((s) => Buffer.from(s, 'utf8'));
    this.keep = Math.max(0, ...this.needles.map((n) => n.length - 1));
  }

  private mask(buf: Buffer): Buffer {
    return maskSecrets(buf, this.needles);
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    const data = this.mask(Buffer.concat([this.carry, chunk]));
    const cut = Math.max(0, data.length - this.keep);
    this.carry = data.subarray(cut);
    done(null, data.subarray(0, cut));
  }

  override _flush(done: TransformCallback): void {
    done(null, this.mask(this.carry));
  }
}

/** Every occurrence of each needle replaced with `xxxxxx` (tokens in traces). */
export function maskSecrets(buf: Buffer, needles: Buffer[]): Buffer {
  let out = buf;
  for (const n of needles) {
    let i = out.indexOf(n);
    if (i === -1) continue;
    const parts: Buffer[] = [];
    let from = 0;
    while (i !== -1) {
      parts.push(out.subarray(from, i), Buffer.from('xxxxxx'));
      from = i + n.length;
      i = out.indexOf(n, from);
    }
    parts.push(out.subarray(from));
    out = Buffer.concat(parts);
  }
  return out;
}
