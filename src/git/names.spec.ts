import { branchRef, parseNewRefName, parseObjectId, parseRef, parseRepoPath, parseSha, repoPathProblem, tagRef } from './names';

describe('git names', () => {
  describe('parseRef (a revision a user names)', () => {
    it('takes branches, tags, nested names and SHAs as they are', () => {
      for (const ok of ['master', 'fix/nested', 'v1.0', 'release-2016.05', 'a'.repeat(40), 'abc1234', 'HEAD', 'a.b']) {
        expect(parseRef(ok)).toBe(ok);
      }
    });

    it('refuses options, ranges, reflogs, NUL, control characters and revision operators', () => {
      for (const bad of [
        '',
        '-h',
        '--all',
        '--upload-pack=touch /tmp/x',
        'master..feature',
        'a...b',
        '..',
        'HEAD@{1}',
        '/etc',
        'master\0',
        'a\nb',
        'a\tb',
        'a\x7fb',
        'a b',
        'HEAD~1',
        'HEAD^',
        'master:README.md',
        'a?',
        'a*',
        'a[1]',
        'a\\b',
        'x'.repeat(256),
      ]) {
        expect([bad, parseRef(bad)]).toEqual([bad, null]);
      }
      expect(parseRef(undefined)).toBeNull();
      expect(parseRef(42)).toBeNull();
    });
  });

  it('parseNewRefName: also what git refuses in a new ref name', () => {
    expect(parseNewRefName('feature/one')).toBe('feature/one');
    for (const bad of ['a..b', 'x.lock', '-x', 'a~1', 'ends/', 'ends.', 'q?', 'HEAD@{1}', 'a//b', '@', '.hidden', 'a/.b', 'a.lock/b', 'bad name']) {
      expect([bad, parseNewRefName(bad)]).toEqual([bad, null]);
    }
  });

  it('parseSha: full SHA-1 or SHA-256 ids only, lowercased', () => {
    expect(parseSha('A'.repeat(40))).toBe('a'.repeat(40));
    expect(parseSha('b'.repeat(64))).toBe('b'.repeat(64));
    for (const bad of ['a'.repeat(39), 'a'.repeat(41), 'g'.repeat(40), '-' + 'a'.repeat(39), '', null]) {
      expect(parseSha(bad)).toBeNull();
    }
  });

  it('parseObjectId: 4 to 64 hex digits', () => {
    expect(parseObjectId('ABCD')).toBe('abcd');
    for (const bad of ['abc', 'master', '..%2Fetc', '-abcd', 'abcd\0', 'a'.repeat(65)]) expect(parseObjectId(bad)).toBeNull();
  });

  it('qualified refs', () => {
    const name = parseRef('fix/nested')!;
    expect(branchRef(name)).toBe('refs/heads/fix/nested');
    expect(tagRef(name)).toBe('refs/tags/fix/nested');
  });

  describe('parseRepoPath', () => {
    it('takes relative paths; drops leading slashes; directories may end with a slash or be the root', () => {
      expect(parseRepoPath('docs/guide.md')).toBe('docs/guide.md');
      expect(parseRepoPath('/etc/passwd')).toBe('etc/passwd');
      expect(parseRepoPath('-dash.txt')).toBe('-dash.txt');
      expect(parseRepoPath('a..b/c...d')).toBe('a..b/c...d');
      expect(parseRepoPath('.gitignore')).toBe('.gitignore');
      expect(parseRepoPath('.github/x')).toBe('.github/x');
      expect(parseRepoPath('x.git/y')).toBe('x.git/y');
      expect(parseRepoPath('docs/', { dir: true })).toBe('docs');
      expect(parseRepoPath('', { dir: true })).toBe('');
      expect(parseRepoPath('/', { dir: true })).toBe('');
      expect(parseRepoPath('')).toBeNull();
      expect(parseRepoPath('docs/')).toBeNull();
    });

    it('refuses any .git component, in any case', () => {
      for (const bad of ['.git', '.git/config', '.GIT/config', '.Git', 'a/.git/config', 'sub/.git/hooks/x', '/.git/HEAD', 'a/.git']) {
        expect([bad, repoPathProblem(bad), parseRepoPath(bad)]).toEqual([bad, 'git-dir', null]);
      }
      expect(repoPathProblem('.git/', { dir: true })).toBe('git-dir');
    });

    it('refuses traversal, empty components, NUL and control characters', () => {
      for (const bad of ['..', '../../etc/passwd', 'docs/../../etc', './README.md', 'docs/./guide.md']) {
        expect([bad, repoPathProblem(bad)]).toEqual([bad, 'traversal']);
      }
      for (const bad of ['a//b', 'a\0b', 'README.md\0', 'a\nb', 'a\rb', 'a\tb', 'a\x1fb', 'a\x7fb', 'x'.repeat(4097)]) {
        expect([bad, repoPathProblem(bad)]).toEqual([bad, 'invalid']);
      }
      expect(parseRepoPath(7)).toBeNull();
    });
  });
});
