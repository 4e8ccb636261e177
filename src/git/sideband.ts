/**
 * Messages for the pusher on `remote:` lines, in a push's own answer. `git receive-pack` talks to a
 * client that asked for `side-band` or `side-band-64k` (every git since 1.6) in bands: its report
 * (band 1), what its hooks print (band 2, which git shows as `remote: …`), then a last flush-pkt.
 * `FinalFlushHold` keeps that last flush-pkt back while the answer streams, so that lines the server
 * decides on once the refs moved (`onUpdates`) go out on band 2 before it, as a hook's would.
 */

export type Sideband = 'side-band' | 'side-band-64k';

const FLUSH = Buffer.from('0000');
/** The most a band-2 packet carries: a pkt-line of 1000 bytes (`side-band`) or 65520 (`side-band-64k`), less its length and band. */
const MAX_DATA: Record<Sideband, number> = { 'side-band': 1000 - 5, 'side-band-64k': 65520 - 5 };

/**
 * The side band a push's request asked for: the capabilities after the NUL of its first pkt-line
 * (`<old> <new> <ref>\0report-status side-band-64k …`). Undefined when it asked for none (or the
 * request is no push command list).
 */
export function pushSideband(head: Buffer): Sideband | undefined {
  if (head.length < 4) return undefined;
  const length = parseInt(head.subarray(0, 4).toString('latin1'), 16);
  if (!Number.isInteger(length) || length <= 4 || length > head.length) return undefined;
  const line = head.subarray(4, length);
  const nul = line.indexOf(0);
  if (nul === -1) return undefined;
  const caps = line
    .subarray(nul + 1)
    .toString('latin1')
    .trim()
    .split(' ');
  return caps.includes('side-band-64k') ? 'side-band-64k' : caps.includes('side-band') ? 'side-band' : undefined;
}

/** `lines` as band-2 packets (each line ends with a newline; a line longer than a packet is split). */
export function sidebandMessages(lines: string[], band: Sideband): Buffer {
  const data = Buffer.from(lines.map((l) => `${l.replace(/[\r\n]+/g, ' ')}\n`).join(''), 'utf8');
  const packets: Buffer[] = [];
  for (let at = 0; at < data.length; at += MAX_DATA[band]) {
    const part = data.subarray(at, at + MAX_DATA[band]);
    packets.push(Buffer.from((part.length + 5).toString(16).padStart(4, '0') + '\x02', 'latin1'), part);
  }
  return Buffer.concat(packets);
}

/**
 * Holds back the last four bytes of a side-band answer as it streams (`push`: what may go out now),
 * and at its end (`end`) gives them back, after `lines` on band 2 when they are the answer's last
 * flush-pkt (anything else — git failed midway — goes out unchanged, without the lines).
 */
export class FinalFlushHold {
  private held: Buffer = Buffer.alloc(0);

  constructor(private readonly band: Sideband) {}

  push(chunk: Buffer): Buffer {
    const all = this.held.length ? Buffer.concat([this.held, chunk]) : chunk;
    if (all.length <= 4) {
      this.held = all;
      return Buffer.alloc(0);
    }
    this.held = Buffer.from(all.subarray(all.length - 4));
    return all.subarray(0, all.length - 4);
  }

  end(lines: string[] | void): Buffer {
    if (!lines || lines.length === 0 || !this.held.equals(FLUSH)) return this.held;
    return Buffer.concat([sidebandMessages(lines, this.band), FLUSH]);
  }
}
