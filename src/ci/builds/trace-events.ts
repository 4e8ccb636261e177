import type { Request, Response } from 'express';
import { BuildRow } from './builds.repository';
import { TraceFollower } from './trace-follower';

/**
 * Writes a live trace follow as server-sent events: `event: trace` with `{"text": …}` (JSON keeps
 * carriage returns and newlines exact), then `event: end` with `{"status": …}`. A comment line every
 * 15 s keeps proxies from closing an idle stream. Closing the connection stops the follow at once.
 */
export async function followAsEventStream(follower: TraceFollower, build: BuildRow, secrets: string[], _req: Request, res: Response): Promise<void> {
  res.status(200);
  res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
  res.setHeader('Cache-Control', 'no-cache');
  res.setHeader('X-Accel-Buffering', 'no');
  res.flushHeaders();
  let closed = false;
  let stopFollow: () => void = () => undefined;
  const stop = new Promise<void>((resolve) => (stopFollow = resolve));
  const onClose = () => {
    closed = true;
    stopFollow();
  };
  res.on('close', onClose);
  const keepAlive = setInterval(() => !closed && res.write(': keep-alive\n\n'), 15_000);
  keepAlive.unref();
  const sink = {
    get closed() {
      return closed;
    },
    event(name: string, data: unknown) {
      res.write(`event: ${name}\ndata: ${JSON.stringify(data)}\n\n`);
    },
  };
  try {
    await follower.follow(build, secrets, sink, stop);
  } catch {
    // a failed read ends the stream; the client sees it close without an `end` event
  } finally {
    clearInterval(keepAlive);
    res.off('close', onClose);
    if (!closed) res.end();
  }
}
