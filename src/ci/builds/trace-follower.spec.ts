import { LiveMask } from './trace-follower';

describe('LiveMask', () => {
  const run = (secrets: string[], parts: string[]) => {
    const m = new LiveMask(secrets);
    const out = parts.map((p) => m.push(Buffer.from(p)).toString());
    return { out, all: out.join('') + m.flush().toString() };
  };

  it('passes text through at once when no tail could start a secret', () => {
    expect(run(['SECRET'], ['hello\n', 'world\n']).out).toEqual(['hello\n', 'world\n']);
  });

  it('masks a secret split across parts, holding back only the possible start', () => {
    const r = run(['SECRET'], ['a SEC', 'RET b']);
    expect(r.out).toEqual(['a ', 'xxxxxx b']);
    expect(r.all).toBe('a xxxxxx b');
  });

  it('releases a held tail that turned out not to be a secret, and flushes at the end', () => {
    expect(run(['SECRET'], ['x SE', 'Y', 'SEC']).all).toBe('x SEYSEC');
    expect(run(['tok1', 'other'], ['tok1 and oth', 'er']).all).toBe('xxxxxx and xxxxxx');
  });
});
