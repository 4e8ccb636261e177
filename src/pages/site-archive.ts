import { createReadStream, createWriteStream } from 'node:fs';
import { FileHandle, mkdir, open, rename, rm } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import { Transform, TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip, createInflateRaw, crc32 } from 'node:zlib';
import * as tar from 'tar';

/**
 * The `public/` folder of a build's artifacts archive (a zip, as gitlab-ci-multi-runner uploads it),
 * extracted into a new folder: GitLab 8.17's `UpdatePagesService#extract_zip_archive!`, which ran
 * `unzip -n <archive> public/* -d <tmp>` after checking the folder's total size against
 * `max_pages_size`. Here the archive is read by this file (no process, no shell): the central
 * directory is parsed, every entry under `public/` checked, and each file inflated by a stream (zlib,
 * off the event loop's critical path), so a deploy never blocks the server.
 *
 * Refused (the whole deploy fails, nothing is put in place): a name under `public/` that is absolute,
 * holds a `..` or `.` segment, an empty segment, a backslash or a control character (NUL); more bytes
 * than an entry declares; a CRC mismatch; a compression method other than stored or deflate; an
 * encrypted entry. Symbolic links (and devices, FIFOs) are never created: they are skipped, so no
 * file of a site can resolve outside it. Entries outside `public/` are not read.
 */
export class SiteArchiveError extends Error {}

/** 8.17's messages (the `pages:deploy` status's description). */
export const PAGES_ERRORS = {
  extract: 'pages failed to extract',
  noPublic: 'pages miss the public folder',
  tooLarge: (bytes: number) => `artifacts for pages are too large: ${bytes}`,
  format: 'unsupported artifacts format',
} as const;

const SITE_PATH = 'public/';
/** At most this many entries under `public/` (a bound on the work and the inodes of one deploy). */
export const MAX_SITE_ENTRIES = 100_000;
const MAX_CENTRAL_DIRECTORY = 64 * 1024 * 1024;

interface Entry {
  name: string;
  method: number;
  flags: number;
  crc: number;
  compressedSize: number;
  size: number;
  localOffset: number;
  kind: 'file' | 'dir' | 'skip';
}

export interface ExtractedSite {
  files: number;
  bytes: number;
  skippedLinks: number;
}

/**
 * Extracts the `public/` entries of the zip at `archive` into `dest` (created; it must not exist):
 * `public/a/b.html` becomes `dest/a/b.html`. Throws SiteArchiveError with 8.17's text.
 */
export async function extractSite(archive: string, dest: string, maxBytes: number): Promise<ExtractedSite> {
  const fh = await open(archive, 'r').catch(() => {
    throw new SiteArchiveError(PAGES_ERRORS.extract);
  });
  try {
    const entries = await centralDirectory(fh);
    const site = entries.filter((e) => e.name === SITE_PATH || e.name.startsWith(SITE_PATH));
    if (!site.length) throw new SiteArchiveError(PAGES_ERRORS.noPublic);
    if (site.length > MAX_SITE_ENTRIES) throw new SiteArchiveError(PAGES_ERRORS.extract);
    const total = site.reduce((n, e) => n + (e.kind === 'file' ? e.size : 0), 0);
    if (total > maxBytes) throw new SiteArchiveError(PAGES_ERRORS.tooLarge(total));
    const root = resolve(dest);
    await mkdir(root, { recursive: false, mode: 0o755 });
    const done = new Set<string>();
    let files = 0;
    let bytes = 0;
    let skippedLinks = 0;
    for (const e of site) {
      const rel = sitePath(e.name.slice(SITE_PATH.length));
      if (rel === null) throw new SiteArchiveError(PAGES_ERRORS.extract);
      if (rel === '') continue; // `public/` itself
      const target = resolve(root, rel);
      if (!target.startsWith(root + sep)) throw new SiteArchiveError(PAGES_ERRORS.extract);
      if (e.kind === 'skip') {
        skippedLinks++;
        continue;
      }
      if (e.kind === 'dir') {
        await mkdir(target, { recursive: true, mode: 0o755 });
        continue;
      }
      if (done.has(target)) continue; // unzip -n: an existing file is never overwritten
      done.add(target);
      await mkdir(dirname(target), { recursive: true, mode: 0o755 });
      await extractFile(fh, archive, e, target);
      files++;
      bytes += e.size;
    }
    return { files, bytes, skippedLinks };
  } finally {
    await fh.close();
  }
}

/**
 * The name of an entry below `public/` as a relative path, or null when it is unsafe: absolute,
 * a `..` or `.` or empty segment, a backslash, a control character. A trailing slash (a folder) is
 * dropped. `''` is `public/` itself.
 */
export function sitePath(name: string): string | null {
  const trimmed = name.endsWith('/') ? name.slice(0, -1) : name;
  if (trimmed === '') return '';
  // eslint-disable-next-line no-control-regex -- control characters (NUL among them) are refused
  if (/[\\\x00-\x1f\x7f]/.test(trimmed) || trimmed.startsWith('/') || /^[A-Za-z]:/.test(trimmed)) return null;
  const segments = trimmed.split('/');
  if (segments.some((s) => s === '' || s === '.' || s === '..')) return null;
  return segments.join('/');
}

async function readAt(fh: FileHandle, position: number, length: number): Promise<Buffer> {
  const buf = Buffer.alloc(length);
  const { bytesRead } = await fh.read(buf, 0, length, position);
  if (bytesRead !== length) throw new SiteArchiveError(PAGES_ERRORS.extract);
  return buf;
}

/** The entries of the central directory (zip64 included). */
async function centralDirectory(fh: FileHandle): Promise<Entry[]> {
  const { size } = await fh.stat();
  if (size < 22) throw new SiteArchiveError(PAGES_ERRORS.format);
  const tailLength = Math.min(size, 22 + 0xffff);
  const tail = await readAt(fh, size - tailLength, tailLength);
  let eocd = -1;
  for (let i = tail.length - 22; i >= 0; i--) {
    if (tail.readUInt32LE(i) === 0x06054b50) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) throw new SiteArchiveError(PAGES_ERRORS.format);
  let count = tail.readUInt16LE(eocd + 10);
  let cdSize = tail.readUInt32LE(eocd + 12);
  let cdOffset = tail.readUInt32LE(eocd + 16);
  if (count === 0xffff || cdSize === 0xffffffff || cdOffset === 0xffffffff) {
    // zip64: the locator sits just before the end record, and points at the zip64 end record
    const locatorAt = size - tailLength + eocd - 20;
    if (locatorAt < 0) throw new SiteArchiveError(PAGES_ERRORS.extract);
    const locator = await readAt(fh, locatorAt, 20);
    if (locator.readUInt32LE(0) !== 0x07064b50) throw new SiteArchiveError(PAGES_ERRORS.extract);
    const recordAt = Number(locator.readBigUInt64LE(8));
    const record = await readAt(fh, recordAt, 56);
    if (record.readUInt32LE(0) !== 0x06064b50) throw new SiteArchiveError(PAGES_ERRORS.extract);
    count = Number(record.readBigUInt64LE(32));
    cdSize = Number(record.readBigUInt64LE(40));
    cdOffset = Number(record.readBigUInt64LE(48));
  }
  if (cdSize > MAX_CENTRAL_DIRECTORY || cdOffset + cdSize > size) throw new SiteArchiveError(PAGES_ERRORS.extract);
  const cd = await readAt(fh, cdOffset, cdSize);
  const entries: Entry[] = [];
  let p = 0;
  for (let n = 0; n < count; n++) {
    if (p + 46 > cd.length || cd.readUInt32LE(p) !== 0x02014b50) throw new SiteArchiveError(PAGES_ERRORS.extract);
    const madeBy = cd.readUInt16LE(p + 4);
    const flags = cd.readUInt16LE(p + 8);
    const method = cd.readUInt16LE(p + 10);
    const crc = cd.readUInt32LE(p + 16);
    let compressedSize = cd.readUInt32LE(p + 20);
    let uncompressed = cd.readUInt32LE(p + 24);
    const nameLength = cd.readUInt16LE(p + 28);
    const extraLength = cd.readUInt16LE(p + 30);
    const commentLength = cd.readUInt16LE(p + 32);
    const external = cd.readUInt32LE(p + 38);
    let localOffset = cd.readUInt32LE(p + 42);
    const end = p + 46 + nameLength + extraLength + commentLength;
    if (end > cd.length) throw new SiteArchiveError(PAGES_ERRORS.extract);
    const name = cd.toString(flags & 0x800 ? 'utf8' : 'latin1', p + 46, p + 46 + nameLength);
    // zip64 extended information: the fields that are 0xffffffff above, in this order
    let x = p + 46 + nameLength;
    const extraEnd = x + extraLength;
    while (x + 4 <= extraEnd) {
      const id = cd.readUInt16LE(x);
      const len = cd.readUInt16LE(x + 2);
      if (id === 0x0001) {
        let q = x + 4;
        const take = () => {
          if (q + 8 > x + 4 + len) throw new SiteArchiveError(PAGES_ERRORS.extract);
          const v = Number(cd.readBigUInt64LE(q));
          q += 8;
          return v;
        };
        if (uncompressed === 0xffffffff) uncompressed = take();
        if (compressedSize === 0xffffffff) compressedSize = take();
        if (localOffset === 0xffffffff) localOffset = take();
      }
      x += 4 + len;
    }
    // Unix mode in the high half of the external attributes when the archive was made on Unix (3)
    const unixMode = madeBy >> 8 === 3 ? external >>> 16 : 0;
    const type = unixMode & 0o170000;
    const kind: Entry['kind'] = name.endsWith('/') || type === 0o040000 ? 'dir' : type === 0 || type === 0o100000 ? 'file' : 'skip';
    entries.push({ name, method, flags, crc, compressedSize, size: uncompressed, localOffset, kind });
    p = end;
  }
  return entries;
}

/** Counts what passes and fails past `limit` bytes (an entry inflating to more than it declares). */
class AtMost extends Transform {
  private seen = 0;
  crc = 0;

  constructor(private readonly limit: number) {
    super();
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.seen += chunk.length;
    if (this.seen > this.limit) return done(new SiteArchiveError(PAGES_ERRORS.extract));
    this.crc = crc32(chunk, this.crc);
    done(null, chunk);
  }

  get bytes(): number {
    return this.seen;
  }
}

async function extractFile(fh: FileHandle, archive: string, e: Entry, target: string): Promise<void> {
  if (e.flags & 0x1) throw new SiteArchiveError(PAGES_ERRORS.extract); // encrypted
  if (e.method !== 0 && e.method !== 8) throw new SiteArchiveError(PAGES_ERRORS.extract);
  const local = await readAt(fh, e.localOffset, 30);
  if (local.readUInt32LE(0) !== 0x04034b50) throw new SiteArchiveError(PAGES_ERRORS.extract);
  const dataAt = e.localOffset + 30 + local.readUInt16LE(26) + local.readUInt16LE(28);
  const out = createWriteStream(target, { flags: 'wx', mode: 0o644 });
  const counter = new AtMost(e.size);
  if (e.compressedSize === 0) {
    await pipeline(async function* () {}, counter, out);
  } else {
    const raw = createReadStream(archive, { start: dataAt, end: dataAt + e.compressedSize - 1 });
    const run = e.method === 8 ? pipeline(raw, createInflateRaw(), counter, out) : pipeline(raw, counter, out);
    await run.catch((err: unknown) => {
      throw err instanceof SiteArchiveError ? err : new SiteArchiveError(PAGES_ERRORS.extract);
    });
  }
  if (counter.bytes !== e.size || counter.crc >>> 0 !== e.crc) throw new SiteArchiveError(PAGES_ERRORS.extract);
}

/** A tar entry type that is a regular file's data. */
const TAR_FILES = new Set(['File', 'OldFile', 'ContiguousFile']);

/** Fails the stream once more than `limit` bytes went through (8.17 cut the unpacked tar at `max_pages_size` with dd). */
class StreamCap extends Transform {
  private seen = 0;

  constructor(private readonly limit: number) {
    super();
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.seen += chunk.length;
    if (this.seen > this.limit) return done(new SiteArchiveError(PAGES_ERRORS.extract));
    done(null, chunk);
  }
}

/**
 * The `public/` entries of a `.tar.gz` artifacts archive (8.17's `extract_tar_archive!`: `gunzip -c |
 * dd count=<max_pages_size> | tar -x public/`) extracted into `dest`, by the `tar` package in two
 * streamed passes: the first lists and checks every entry under `public/` (the same name rules as
 * the zip's; links and special files are skipped, and the unpacked stream may not pass
 * `max_pages_size` and one 32 KiB block, as 8.17's dd cut it), the second extracts the files and
 * folders the first accepted.
 */
export async function extractTarSite(archive: string, dest: string, maxBytes: number): Promise<ExtractedSite> {
  const accepted = new Set<string>();
  let found = false;
  let bytes = 0;
  let files = 0;
  let skippedLinks = 0;
  let unsafe = false;
  const name = (p: string) => p.replace(/^(\.\/)+/, '');
  const stream = () => [createReadStream(archive), createGunzip(), new StreamCap(maxBytes + 32 * 1024)] as const;
  const lister = tar.t({
    onReadEntry: (e) => {
      const p = name(e.path);
      if (p !== 'public' && !p.startsWith(SITE_PATH)) return;
      found = true;
      const rel = p === 'public' ? '' : sitePath(p.slice(SITE_PATH.length));
      if (rel === null) unsafe = true;
      else if (TAR_FILES.has(e.type)) {
        accepted.add(p.replace(/\/$/, ''));
        bytes += e.size ?? 0;
        files++;
      } else if (e.type === 'Directory') accepted.add(p.replace(/\/$/, ''));
      else skippedLinks++;
    },
  });
  await pipeline(...stream(), lister).catch((err: unknown) => {
    throw err instanceof SiteArchiveError ? err : new SiteArchiveError(PAGES_ERRORS.extract);
  });
  if (!found) throw new SiteArchiveError(PAGES_ERRORS.noPublic);
  if (unsafe || files > MAX_SITE_ENTRIES) throw new SiteArchiveError(PAGES_ERRORS.extract);
  if (bytes > maxBytes) throw new SiteArchiveError(PAGES_ERRORS.tooLarge(bytes));
  const work = `${resolve(dest)}.tar`;
  await mkdir(work, { mode: 0o700 });
  try {
    const extractor = tar.x({
      cwd: work,
      filter: (p, e) => accepted.has(name(p).replace(/\/$/, '')) && ('type' in e ? TAR_FILES.has(e.type) || e.type === 'Directory' : true),
      preservePaths: false,
      noChmod: true,
      strict: true,
    });
    await pipeline(...stream(), extractor).catch((err: unknown) => {
      throw err instanceof SiteArchiveError ? err : new SiteArchiveError(PAGES_ERRORS.extract);
    });
    await mkdir(join(work, 'public'), { recursive: true, mode: 0o755 });
    await rename(join(work, 'public'), dest);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  return { files, bytes, skippedLinks };
}
