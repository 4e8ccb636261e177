import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream, promises as fs } from 'node:fs';
import { dirname, join } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../config/config';

/** What went wrong with an upload's bytes. */
export class LfsUploadMismatch extends Error {}
/** The client went away before sending every byte: nothing is kept. */
export class LfsUploadAborted extends Error {}

export const LFS_OID = /^[0-9a-f]{64}$/;

/**
 * LFS files, content-addressed: `<DATA_DIR>/lfs-objects/<oid[0..2]>/<oid[2..4]>/<oid[4..]>` (8.17's
 * layout). An upload is streamed into a temporary file while its SHA-256 and length are computed, and
 * renamed into place only when both are what the client announced; anything else removes it, so a
 * file under its oid always holds exactly that content.
 */
@Injectable()
export class LfsStorage {
  readonly dir: string;
  private readonly tmpDir: string;

  constructor(@Inject(APP_CONFIG) config: Pick<AppConfig, 'lfs'>) {
    this.dir = config.lfs.dir;
    this.tmpDir = config.lfs.tmpDir;
  }

  pathOf(oid: string): string {
    if (!LFS_OID.test(oid)) throw new Error('not an LFS oid');
    return join(this.dir, oid.slice(0, 2), oid.slice(2, 4), oid.slice(4));
  }

  async has(oid: string): Promise<boolean> {
    return fs.stat(this.pathOf(oid)).then(
      (s) => s.isFile(),
      () => false,
    );
  }

  /** The file's stream and size, or undefined when it is not there. */
  async open(oid: string): Promise<{ stream: Readable; size: number } | undefined> {
    const path = this.pathOf(oid);
    const handle = await fs.open(path, 'r').catch(() => undefined);
    if (!handle) return undefined;
    const { size } = await handle.stat().catch(async (e: unknown) => {
      await handle.close();
      throw e;
    });
    return { stream: handle.createReadStream(), size };
  }

  /**
   * Writes `body` into a temporary file as the object `oid` of `size` bytes and checks it. Throws
   * LfsUploadMismatch (more or fewer bytes, or another hash) or LfsUploadAborted (the body ended early by
   * the client going away), the temporary file gone either way. Else answers the checked file: `place()`
   * renames it into place (atomically, over the same bytes if they are there), `discard()` removes what is
   * left of it; the caller places it under the object's lock (LfsRepository.lockOid), where removals run.
   */
  async stage(body: Readable, oid: string, size: number): Promise<{ place: () => Promise<void>; discard: () => Promise<void> }> {
    await fs.mkdir(this.tmpDir, { recursive: true, mode: 0o700 });
    const tmp = join(this.tmpDir, `${oid}.${randomBytes(8).toString('hex')}`);
    const hash = createHash('sha256');
    let seen = 0;
    const check = new Transform({
      transform(chunk: Buffer, _enc, done) {
        seen += chunk.length;
        if (seen > size) return done(new LfsUploadMismatch(`more than ${size} bytes`));
        hash.update(chunk);
        done(null, chunk);
      },
    });
    let aborted = false;
    const onAbort = () => {
      aborted = true;
    };
    body.once('aborted', onAbort);
    body.once('close', () => {
      if (!(body as Readable & { complete?: boolean }).complete && !body.readableEnded) aborted = true;
    });
    try {
      await pipeline(body, check, createWriteStream(tmp, { mode: 0o600 }));
      if (aborted) throw new LfsUploadAborted('upload interrupted');
      if (seen !== size) throw new LfsUploadMismatch(`${seen} bytes instead of ${size}`);
      if (hash.digest('hex') !== oid) throw new LfsUploadMismatch('content does not match its oid');
    } catch (e) {
      await fs.rm(tmp, { force: true });
      if (aborted && !(e instanceof LfsUploadMismatch)) throw new LfsUploadAborted('upload interrupted');
      throw e;
    } finally {
      body.off('aborted', onAbort);
    }
    const dest = this.pathOf(oid);
    return {
      place: async () => {
        await fs.mkdir(dirname(dest), { recursive: true, mode: 0o700 });
        await fs.rename(tmp, dest);
      },
      discard: () => fs.rm(tmp, { force: true }),
    };
  }

  /** Removes a file no row names any more. */
  async remove(oid: string): Promise<void> {
    await fs.rm(this.pathOf(oid), { force: true });
  }
}
