/**
 * How much of the client's window a git transfer over SSH keeps in flight.
 *
 * OpenSSH grants a 2 MB channel window. Sending all of it as soon as it is granted lets the data pile
 * up in the client's channel buffer whenever the client's git reads more slowly than the network
 * delivers, which is the normal case on a fast link. OpenSSH then spends most of its CPU moving that
 * buffer (memmove as it compacts and grows). On loopback this took 120–200 ms of client CPU per 10 MB
 * clone; keeping 256 KB in flight took 10–30 ms, and the clone was faster (docs/performance-history.md).
 *
 * A fixed cap would throttle a distant client, whose in-flight data is on the network, not in its
 * buffer: 256 KB per 100 ms round trip is 2.5 MB/s. So the cap starts at `initial` and doubles, up to
 * the whole window, whenever the sender waited for the window longer than `growAfterMs`. A client on
 * a fast link answers within a millisecond or two and keeps the small cap; a client far away, or one
 * that reads slowly, gets the whole window after a few round trips, as without pacing.
 *
 * ssh2 keeps the client's remaining window in `channel.outgoing.window`: its `_write` lowers it as it
 * sends and pauses at 0; a CHANNEL_WINDOW_ADJUST raises it and resumes. The pacer replaces that
 * number with an accessor that holds back `slack` bytes of it. Returns false, and changes nothing,
 * when the channel does not have that shape (src/ssh/send-window.spec.ts checks ssh2's Channel).
 */
export interface SendWindowOptions {
  initial: number;
  growAfterMs: number;
  now?: () => number;
}

export const SEND_WINDOW_DEFAULTS: SendWindowOptions = { initial: 256 * 1024, growAfterMs: 4 };

export function paceSendWindow(channel: unknown, options: SendWindowOptions = SEND_WINDOW_DEFAULTS): boolean {
  const outgoing = (channel as { outgoing?: { window?: unknown } } | null)?.outgoing;
  if (!outgoing || typeof outgoing.window !== 'number') return false;
  const now = options.now ?? (() => performance.now());
  let window = outgoing.window;
  let slack = Math.max(0, window - options.initial);
  let cap = window - slack;
  window -= slack;
  let blockedAt: number | undefined;
  Object.defineProperty(outgoing, 'window', {
    configurable: true,
    enumerable: true,
    get: () => window,
    set: (value: number) => {
      if (value > window && blockedAt !== undefined) {
        // the client's window adjust, after the sender had used up the cap
        if (slack > 0 && now() - blockedAt >= options.growAfterMs) {
          const grow = Math.min(slack, cap);
          slack -= grow;
          cap += grow;
          value += grow;
        }
        blockedAt = undefined;
      }
      if (value <= 0 && blockedAt === undefined) blockedAt = now();
      window = value;
    },
  });
  return true;
}
