import { FinalFlushHold, pushSideband, sidebandMessages } from './sideband';

const pkt = (s: string) => (s.length + 4).toString(16).padStart(4, '0') + s;
const Z = '0'.repeat(40);
const A = 'a'.repeat(40);

describe('pushSideband: the side band a push asked for', () => {
  it.each([
    [pkt(`${Z} ${A} refs/heads/master\0report-status side-band-64k agent=git/2.39\n`) + '0000', 'side-band-64k'],
    [pkt(`${Z} ${A} refs/heads/master\0 report-status side-band\n`) + '0000', 'side-band'],
    [pkt(`${Z} ${A} refs/heads/master\0report-status\n`) + '0000', undefined],
    [pkt(`${Z} ${A} refs/heads/master\n`) + '0000', undefined],
    ['0000', undefined],
    ['zzzz', undefined],
    ['00', undefined],
  ])('%j → %s', (head, band) => expect(pushSideband(Buffer.from(head, 'latin1'))).toBe(band));
});

describe('sidebandMessages: band-2 pkt-lines', () => {
  it('one packet of lines, each ending with a newline (newlines inside a line become spaces)', () => {
    expect(sidebandMessages(['a', 'b\nc'], 'side-band-64k').toString('latin1')).toBe('000b\x02a\nb c\n');
  });
  it('splits what does not fit a side-band packet of 1000 bytes', () => {
    const out = sidebandMessages(['x'.repeat(2000)], 'side-band');
    expect(out.subarray(0, 5).toString('latin1')).toBe('03e8\x02');
    expect(out.length).toBe(2001 + 3 * 5);
  });
});

describe('FinalFlushHold', () => {
  const stream = (chunks: string[], lines: string[] | undefined) => {
    const hold = new FinalFlushHold('side-band-64k');
    const out = chunks.map((c) => hold.push(Buffer.from(c, 'latin1')).toString('latin1')).join('');
    return out + hold.end(lines).toString('latin1');
  };
  const answer = '0013\x01000eunpack ok\n0000';

  it('puts the lines before the last flush-pkt, however the answer was cut', () => {
    const withLines = answer.slice(0, -4) + '0008\x02hi\n' + '0000';
    expect(stream([answer], ['hi'])).toBe(withLines);
    expect(stream([answer.slice(0, 5), answer.slice(5, -2), answer.slice(-2)], ['hi'])).toBe(withLines);
    expect(stream(answer.split(''), ['hi'])).toBe(withLines);
  });

  it('without lines, or when the answer does not end with a flush-pkt, the answer goes out unchanged', () => {
    expect(stream([answer], undefined)).toBe(answer);
    expect(stream([answer], [])).toBe(answer);
    expect(stream(['0013\x01000eunpack'], ['hi'])).toBe('0013\x01000eunpack');
    expect(stream(['00'], ['hi'])).toBe('00');
  });
});
