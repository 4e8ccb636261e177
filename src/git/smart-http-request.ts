import type { IncomingMessage } from 'node:http';
import { Readable, Transform } from 'node:stream';
import { createGunzip } from 'node:zlib';

/**
 * The most an upload-pack request (its `want`, `have` and other lines) may hold once inflated, and
 * the most a push's list of ref updates may: GitLab Workhorse's cap on the upload-pack request, 10 MiB
 * (lines of about 50 bytes: over 200,000 of them).
 */
export const GIT_REQUEST_MAX_BYTES = 10 * 1024 * 1024;

/**
 * A gzip-compressed push body (stock git never compresses one: only its fetch requests) may inflate
 * past `GIT_REQUEST_MAX_BYTES` only at this many times the bytes received. A pack is compressed
 * already, so a real push inflates at about 1:1; a compression bomb (a few hundred kB becoming
 * gigabytes for `index-pack`) is cut off. There is no cap on the size of a push itself (GitLab 8 had
 * none), so an uncompressed body is never cut.
 */
export const GZIP_PUSH_MAX_RATIO = 32;

/** A smart HTTP request refused before git could serve it, with the status and the text to answer. */
export class GitRequestRefused extends Error {
  constructor(
    readonly status: 400 | 408 | 413,
    message: string,
  ) {
    super(message);
  }
}

/** The client went away while its request was read. */
export class GitRequestAborted extends Error {
  constructor() {
    super('the client went away while its git request was read');
  }
}

/** A smart HTTP POST's request as read before git starts (`readSmartHttpRequest`). */
export interface SmartHttpBody {
  /** What was read: the whole of an upload-pack request; a push's list of ref updates and what came with it. */
  head: Buffer;
  /**
   * The rest of a push's body (its pack), inflated when it was compressed, paused; undefined when
   * the body was read to its end.
   */
  rest?: Readable;
  /** Why the rest failed, once it did: `GitRequestRefused` (413) when it inflated too far. */
  error?: Error;
}

/**
 * Reads the request of a smart HTTP POST before git is started or a transfer slot taken, so that a
 * client that sends its request slowly, or not at all, holds neither (as GitLab Workhorse read the
 * upload-pack request before calling Gitaly):
 *  - `git-upload-pack`: the whole request (wants and haves), at most `GIT_REQUEST_MAX_BYTES` once
 *    inflated (413 beyond), within `timeoutMs` (408 after);
 *  - `git-receive-pack`: the list of ref updates up to its flush-pkt, under the same caps; the pack
 *    that follows (possibly gigabytes) stays in the stream for git to read as it arrives.
 * A gzip body (`Content-Encoding: gzip`, what git sends for larger fetch requests) is inflated here;
 * one that does not inflate is refused (400).
 */
export function readSmartHttpRequest(req: IncomingMessage, service: 'upload-pack' | 'receive-pack', o: { timeoutMs: number }): Promise<SmartHttpBody> {
  const stream = bodyStream(req, service);
  const what = service === 'upload-pack' ? 'the upload-pack request (its want and have lines)' : "the push's list of ref updates";
  return new Promise<SmartHttpBody>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const enough = service === 'receive-pack' ? pktFlushSeeker() : undefined;
    let settled = false;
    const finish = (e: Error | undefined, ended = false) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      stream.off('data', onData).off('end', onEnd).off('error', finish);
      req.off('close', onClose);
      if (e) {
        // what else comes is not read (the answer closes the connection); the request itself stays
        // open for that answer
        if (stream !== req) stream.destroy();
        req.pause();
        return reject(e);
      }
      stream.pause();
      const body: SmartHttpBody = { head: Buffer.concat(chunks), rest: ended ? undefined : stream };
      // kept for whoever reads the rest later (a failure before then must not go unheard)
      if (!ended) stream.on('error', (err) => (body.error ??= err));
      resolve(body);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > GIT_REQUEST_MAX_BYTES) return finish(new GitRequestRefused(413, `${what} is over ${mib(GIT_REQUEST_MAX_BYTES)}`));
      chunks.push(chunk);
      if (enough?.(chunk)) finish(undefined);
    };
    const onEnd = () => finish(undefined, true);
    const onClose = () => {
      if (!req.complete) finish(new GitRequestAborted());
    };
    const timer = setTimeout(() => finish(new GitRequestRefused(408, `${what} did not arrive within ${o.timeoutMs / 1000} seconds`)), o.timeoutMs);
    stream.on('data', onData).on('end', onEnd).on('error', finish);
    req.on('close', onClose);
    if (req.destroyed && !req.complete) finish(new GitRequestAborted());
  });
}

/** The body as git reads it: inflated when it came gzip-compressed, and cut (413) where it would inflate too far. */
function bodyStream(req: IncomingMessage, service: 'upload-pack' | 'receive-pack'): Readable {
  const encoding = String(req.headers['content-encoding'] ?? '').toLowerCase();
  if (encoding !== 'gzip' && encoding !== 'x-gzip') return req;
  let received = 0;
  let inflated = 0;
  const tooFar = () =>
    service === 'upload-pack'
      ? received > GIT_REQUEST_MAX_BYTES || inflated > GIT_REQUEST_MAX_BYTES
      : inflated > GIT_REQUEST_MAX_BYTES && inflated > GZIP_PUSH_MAX_RATIO * received;
  const refusal = () =>
    new GitRequestRefused(
      413,
      service === 'upload-pack'
        ? `the gzip-compressed upload-pack request inflates to over ${mib(GIT_REQUEST_MAX_BYTES)}`
        : `the gzip-compressed push inflates to over ${mib(GIT_REQUEST_MAX_BYTES)} at more than ${GZIP_PUSH_MAX_RATIO} times its compressed size`,
    );
  const guard = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      inflated += chunk.length;
      done(tooFar() ? refusal() : null, chunk);
    },
  });
  const gunzip = createGunzip();
  const countReceived = (chunk: Buffer) => {
    received += chunk.length;
  };
  req.on('data', countReceived);
  gunzip.on('error', () => guard.destroy(new GitRequestRefused(400, 'the gzip-compressed request body does not inflate')));
  guard.on('close', () => {
    // refused or done: stop inflating what else comes
    req.off('data', countReceived);
    req.unpipe(gunzip);
    gunzip.destroy();
  });
  req.pipe(gunzip).pipe(guard);
  return guard;
}

/**
 * Tells, chunk by chunk, when a pkt-line stream has reached its first flush-pkt (`0000`): the end of
 * a push's list of ref updates, or of the first request of a client over SSH. Also true at anything
 * that is no pkt-line (git answers it). With `v2Markers`, protocol v2's delimiter (`0001`) and
 * response end (`0002`) do not end the request (a v2 command goes on after them).
 */
export function pktFlushSeeker(o: { v2Markers?: boolean } = {}): (chunk: Buffer) => boolean {
  let header = '';
  let skip = 0;
  let done = false;
  return (chunk) => {
    let i = 0;
    while (!done && i < chunk.length) {
      if (skip > 0) {
        const n = Math.min(skip, chunk.length - i);
        skip -= n;
        i += n;
        continue;
      }
      header += String.fromCharCode(chunk[i++]);
      if (header.length < 4) continue;
      const length = /^[0-9a-f]{4}$/i.test(header) ? parseInt(header, 16) : -1;
      header = '';
      if (o.v2Markers && (length === 1 || length === 2)) continue;
      if (length < 4)
        done = true; // 0000 flush (or a delimiter, or no pkt-line at all)
      else skip = length - 4;
    }
    return done;
  };
}

function mib(bytes: number): string {
  return `${bytes / (1024 * 1024)} MiB`;
}
