import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { BuildFiles, MaskSecrets } from './build-files';

async function collect(s: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of s as AsyncIterable<Buffer>) chunks.push(Buffer.from(c));
  return Buffer.concat(chunks).toString('utf8');
}

describe('MaskSecrets', () => {
  it.each([
    [['abc def SECRET ghi'], 'abc def xxxxxx ghi'],
    [['abc SEC', 'RET SECRET', 'SE', 'CRET!'], 'abc xxxxxx xxxxxxxxxxxx!'],
    [['S', 'E', 'C', 'R', 'E', 'T'], 'xxxxxx'],
    [['no secrets here'], 'no secrets here'],
    [['TOKEN2 and SECRET'], 'xxxxxx and xxxxxx'],
  ])('%j', async (chunks, expected) => {
    const out = Readable.from(chunks.map((c) => Buffer.from(c))).pipe(new MaskSecrets(['SECRET', 'TOKEN2']));
    expect(await collect(out)).toBe(expected);
  });
});

describe('BuildFiles traces', () => {
  let dir: string;
  beforeAll(() => (dir = mkdtempSync(join(tmpdir(), 'ci-files-'))));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('writes parts at their offset, cuts after the part, and serves only the stored length, masked', async () => {
    const f = new BuildFiles(dir);
    expect(await f.writeTraceAt(1, 0, Buffer.from('BUILD TRACE'))).toBe(11);
    expect(await f.writeTraceAt(1, 11, Buffer.from(' appended tok123'))).toBe(27);
    expect(await f.writeTraceAt(1, 5, Buffer.from(' again'))).toBe(11);
    expect(readFileSync(f.tracePath(1), 'utf8')).toBe('BUILD again');
    await f.writeTraceAt(1, 11, Buffer.from(' tok123 end'));
    expect(await collect(f.readTrace(1, 22, ['tok123']))).toBe('BUILD again xxxxxx end');
    expect(await collect(f.readTrace(1, 5, ['tok123']))).toBe('BUILD');
    expect(await collect(f.readTrace(2, 0, []))).toBe('');
    expect(await f.replaceTrace(1, 'whole')).toBe(5);
    expect(await collect(f.readTrace(1, 5, []))).toBe('whole');
  });
});
