import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathSegments } from './pages-host';
import { extractSite, extractTarSite, sitePath, SiteArchiveError } from './site-archive';

describe('Pages: names and paths', () => {
  it('sitePath: relative names below public/ only', () => {
    expect(sitePath('index.html')).toBe('index.html');
    expect(sitePath('a/b/c.css')).toBe('a/b/c.css');
    expect(sitePath('docs/')).toBe('docs');
    expect(sitePath('')).toBe('');
    for (const bad of ['../x', 'a/../../x', '/etc/passwd', 'a//b', './a', 'a/./b', 'a\\..\\b', 'a\u0000b', 'C:/x', 'a\nb']) {
      expect([bad, sitePath(bad)]).toEqual([bad, null]);
    }
  });

  it('pathSegments: decoded segments; traversal, encoded or not, is no path', () => {
    expect(pathSegments('/')).toEqual(['']);
    expect(pathSegments('/proj/')).toEqual(['proj', '']);
    expect(pathSegments('/proj/a%20b.html')).toEqual(['proj', 'a b.html']);
    for (const bad of [
      '/proj/../x',
      '/proj/%2e%2e/x',
      '/proj/%2E%2E',
      '/proj/..%2fx',
      '/proj/a%5cb',
      '/proj/a\\b',
      '/proj/%00',
      '/proj//x',
      '/proj/%zz',
      'x',
      '/proj/.',
    ]) {
      expect([bad, pathSegments(bad)]).toEqual([bad, null]);
    }
  });
});

describe('Pages: extracting public/ from a zip', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'site-archive-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** A zip made by Info-ZIP's zip (as an artifacts archive would be made elsewhere), with a symlink stored as a link (-y). */
  function zipOf(files: Record<string, string>, links: Record<string, string> = {}): string {
    const src = join(dir, 'src');
    for (const [name, content] of Object.entries(files)) {
      mkdirSync(join(src, name, '..'), { recursive: true });
      writeFileSync(join(src, name), content);
    }
    for (const [name, target] of Object.entries(links)) symlinkSync(target, join(src, name));
    const archive = join(dir, 'artifacts.zip');
    execFileSync('zip', ['-q', '-r', '-y', archive, '.'], { cwd: src });
    return archive;
  }

  it('extracts public/ (deflated and stored), nothing else, and skips symbolic links', async () => {
    const archive = zipOf({ 'public/index.html': 'x'.repeat(10_000), 'public/a/b.txt': 'b', 'other/secret.txt': 's' }, { 'public/link': '/etc/passwd' });
    const out = join(dir, 'site');
    const r = await extractSite(archive, out, 1024 * 1024);
    expect(r).toEqual({ files: 2, bytes: 10_001, skippedLinks: 1 });
    expect(readFileSync(join(out, 'index.html'), 'utf8')).toBe('x'.repeat(10_000));
    expect(readFileSync(join(out, 'a', 'b.txt'), 'utf8')).toBe('b');
    expect(readdirSync(out).sort()).toEqual(['a', 'index.html']);
  });

  it("refuses with 8.17's texts: no public/, too large, not a zip, a corrupted entry", async () => {
    const fail = (archive: string, max = 1024 * 1024) =>
      extractSite(archive, join(dir, `site-${Math.random()}`), max).then(
        () => 'extracted',
        (e: Error) => (e instanceof SiteArchiveError ? e.message : `unexpected: ${e.message}`),
      );
    expect(await fail(zipOf({ 'site/index.html': 'x' }))).toBe('pages miss the public folder');
    rmSync(join(dir, 'src'), { recursive: true });
    rmSync(join(dir, 'artifacts.zip'));
    const big = zipOf({ 'public/index.html': 'x'.repeat(2000) });
    expect(await fail(big, 1000)).toBe('artifacts for pages are too large: 2000');
    const notZip = join(dir, 'not.zip');
    writeFileSync(notZip, 'this is not a zip archive at all, just text');
    expect(await fail(notZip)).toBe('unsupported artifacts format');
    // one byte of the deflated data changed: inflating fails or the CRC does not match
    const data = readFileSync(big);
    const header = data.indexOf('public/index.html') - 30; // the local header, then the name, the extra field, the data
    const at = header + 30 + data.readUInt16LE(header + 26) + data.readUInt16LE(header + 28) + 3;
    data[at] ^= 0xff;
    const corrupt = join(dir, 'corrupt.zip');
    writeFileSync(corrupt, data);
    expect(await fail(corrupt)).toBe('pages failed to extract');
    expect(existsSync(join(dir, 'etc'))).toBe(false);
  });
});

describe('Pages: extracting public/ from a .tar.gz (8.17 took those too)', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'site-tar-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** A .tar.gz made by GNU tar from `files` (and links), with extra raw member names through --transform. */
  function tgzOf(files: Record<string, string>, links: Record<string, string> = {}, transform?: string): string {
    const src = join(dir, 'src');
    for (const [name, content] of Object.entries(files)) {
      mkdirSync(join(src, name, '..'), { recursive: true });
      writeFileSync(join(src, name), content);
    }
    for (const [name, target] of Object.entries(links)) symlinkSync(target, join(src, name));
    const archive = join(dir, `artifacts-${Math.random()}.tar.gz`);
    execFileSync('tar', ['-czf', archive, ...(transform ? ['--transform', transform] : []), '-C', src, '.'], { cwd: src });
    rmSync(src, { recursive: true });
    return archive;
  }
  const fail = (archive: string, max = 1024 * 1024) =>
    extractTarSite(archive, join(dir, `site-${Math.random()}`), max).then(
      () => 'extracted',
      (e: Error) => (e instanceof SiteArchiveError ? e.message : `unexpected: ${e.message}`),
    );

  it('extracts public/ only, skipping links', async () => {
    const archive = tgzOf({ 'public/index.html': 'home', 'public/a/b.css': 'b', 'other.txt': 'o' }, { 'public/link': '/etc/passwd' });
    const out = join(dir, 'site');
    expect(await extractTarSite(archive, out, 1024)).toEqual({ files: 2, bytes: 5, skippedLinks: 1 });
    expect(readFileSync(join(out, 'index.html'), 'utf8')).toBe('home');
    expect(readdirSync(out).sort()).toEqual(['a', 'index.html']);
    expect(readdirSync(dir).filter((f) => f.endsWith('.tar'))).toEqual([]);
  });

  it("refuses with 8.17's texts: no public/, too large, a .. member, not gzip", async () => {
    expect(await fail(tgzOf({ 'site/index.html': 'x' }))).toBe('pages miss the public folder');
    expect(await fail(tgzOf({ 'public/index.html': 'x'.repeat(2000) }), 1000)).toBe('artifacts for pages are too large: 2000');
    // the unpacked stream is cut past max_pages_size and a block, as 8.17's dd cut it (here by an entry outside public/)
    expect(await fail(tgzOf({ 'public/index.html': 'x', 'other.bin': 'o'.repeat(100_000) }), 1000)).toBe('pages failed to extract');
    expect(await fail(tgzOf({ 'public/index.html': 'x', 'public/evil.html': 'e' }, {}, 's,evil.html,../evil.html,'))).toBe('pages failed to extract');
    const notGzip = join(dir, 'plain.tar.gz');
    writeFileSync(notGzip, 'not gzip');
    expect(await fail(notGzip)).toBe('pages failed to extract');
    expect(existsSync(join(dir, 'evil.html'))).toBe(false);
  });
});
