// ssh2's Channel, as the server creates it: the pacer depends on its `outgoing.window` and `_write`
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { Channel, MAX_WINDOW } = require('ssh2/lib/Channel.js') as {
  Channel: new (client: unknown, info: unknown, opts: unknown) => SshChannel;
  MAX_WINDOW: number;
};
import { paceSendWindow } from './send-window';

interface SshChannel {
  outgoing: { window: number };
  _waitWindow: boolean;
  _chunk?: Buffer;
  _chunkcb?: () => void;
  _write(data: Buffer, encoding: null, cb: () => void): void;
}

const KB = 1024;

function serverChannel() {
  const sent: number[] = [];
  const protocol = { channelData: (_id: number, data: Buffer) => sent.push(data.length) };
  const info = {
    type: 'session',
    incoming: { id: 1, window: MAX_WINDOW, packetSize: 32 * KB, state: 'open' },
    outgoing: { id: 7, window: 2 * 1024 * KB, packetSize: 32 * KB, state: 'open' }, // OpenSSH's grant
  };
  const ch = new Channel({ _protocol: protocol }, info, { server: true });
  const inFlight = () => sent.reduce((a, b) => a + b, 0);
  /** What ssh2's server does on CHANNEL_WINDOW_ADJUST (lib/server.js). */
  const adjust = (amount: number) => {
    ch.outgoing.window += amount;
    if (ch._waitWindow) {
      ch._waitWindow = false;
      if (ch._chunk) ch._write(ch._chunk, null, ch._chunkcb!);
    }
  };
  return { ch, sent, inFlight, adjust };
}

describe('paceSendWindow', () => {
  it('keeps 256 KB in flight while the client answers promptly', () => {
    const { ch, inFlight, adjust } = serverChannel();
    let t = 0;
    expect(paceSendWindow(ch, { initial: 256 * KB, growAfterMs: 4, now: () => t })).toBe(true);
    let done = false;
    ch._write(Buffer.alloc(1024 * KB), null, () => (done = true));
    expect(inFlight()).toBe(256 * KB);
    expect(done).toBe(false);
    let acked = 0;
    while (!done) {
      t += 1; // the client's adjust comes 1 ms later: no growth
      const outstanding = inFlight() - acked;
      expect(outstanding).toBeLessThanOrEqual(256 * KB);
      acked += 96 * KB;
      adjust(96 * KB);
    }
    expect(inFlight()).toBe(1024 * KB);
  });

  it('doubles the cap up to the whole window when the client is slow or far', () => {
    const { ch, inFlight, adjust } = serverChannel();
    let t = 0;
    paceSendWindow(ch, { initial: 256 * KB, growAfterMs: 4, now: () => t });
    ch._write(Buffer.alloc(8 * 1024 * KB), null, () => undefined);
    const outstanding: number[] = [];
    let acked = 0;
    for (let i = 0; i < 6; i++) {
      outstanding.push(inFlight() - acked);
      t += 50; // a 50 ms round trip
      acked += 128 * KB;
      adjust(128 * KB);
    }
    // 256 KB, then 512 KB, 1 MB, 2 MB (the client's whole window), never more
    expect(outstanding).toEqual([256 * KB, 512 * KB, 1024 * KB, 2048 * KB, 2048 * KB, 2048 * KB]);
  });

  it('leaves a channel without the expected shape alone', () => {
    expect(paceSendWindow({})).toBe(false);
    expect(paceSendWindow(null)).toBe(false);
    const odd = { outgoing: { window: 'x' } };
    expect(paceSendWindow(odd)).toBe(false);
    expect(odd.outgoing.window).toBe('x');
  });
});
