import { extractCoverage } from './coverage';

describe('extractCoverage (GitLab 8.17 Ci::Build#extract_coverage)', () => {
  it.each([
    ['a simplecov line', 'Coverage 1033 / 1051 LOC (98.29%) covered', '\\(\\d+.\\d+\\%\\) covered', 98.29],
    ['the last match wins', 'Coverage 10%\nmore\nCoverage 42.5%\n', 'Coverage \\d+(?:\\.\\d+)?%', 42.5],
    ['with a group, only the group counts (Ruby scan)', 'Coverage 42.5%', 'Coverage \\d+(\\.\\d+)?%', 5],
    ['with groups: the last group', 'total: 77.1% (lines) 3 files', '(total): (\\d+\\.\\d+)%', 77.1],
    ['slashes around the source are read as the regex delimiters', 'Lines: 88%', '/Lines: \\d+%/', 88],
    ['an integer', 'TOTAL 100', 'TOTAL +\\d+', 100],
    ['no match', 'nothing here', 'Coverage \\d+%', null],
    ['a match without a number', 'Coverage: n/a', 'Coverage: \\S+', null],
    ['an invalid regex', 'Coverage 10%', '(unclosed', null],
    ['no regex', 'Coverage 10%', null, null],
    ['an empty-matching regex does not loop', 'abc', 'x*', null],
  ] as [string, string, string | null, number | null][])('%s', (_n, text, regex, expected) => {
    expect(extractCoverage(text, regex)).toBe(expected);
  });

  it('a catastrophic pattern over a long line gives up within its time limit', () => {
    const started = Date.now();
    expect(extractCoverage('a'.repeat(50_000) + '!', '(a+)+b')).toBeNull();
    expect(Date.now() - started).toBeLessThan(2000);
  });
});
