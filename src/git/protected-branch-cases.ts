/**
 * How a protected-branch name matches a branch, as cases: GitLab's rule is the name literally, apart
 * from `*`, which stands for any run of characters (`/` included). Both matchers of this rule — the
 * update hook's POSIX `sh` one (receive-hooks.ts, UPDATE_SH) and `protectedBranchMatches`
 * (the API's files, branches and merges) — are tested against this one table (receive-hooks.spec.ts,
 * protected-branch-match.spec.ts), so they cannot drift. Each case: the pattern, branches it
 * protects, branches it does not.
 */
export const PROTECTED_BRANCH_CASES: [pattern: string, matching: string[], other: string[]][] = [
  ['master', ['master'], ['mast', 'master2', 'Master']],
  ['release-*', ['release-', 'release-1', 'release-1/fix'], ['release', 'xrelease-1', 'Release-1']],
  ['*-stable', ['-stable', '8-stable', 'a/b-stable'], ['8-stable2', 'stable', '8-Stable']],
  ['a*b*c', ['abc', 'a-b-c', 'abcbc', 'aXbXcXc', 'abbc'], ['ab', 'acb', 'abcx', 'xabc', 'a-c']],
  ['ab*ba', ['abba', 'ab-ba'], ['aba', 'ab']],
  ['a*a', ['aa', 'aba'], ['a']],
  ['ab*b*ba', ['abbba', 'ab-b-ba'], ['abba', 'abb']],
  ['**', ['', 'x'], []],
  ['*', ['x', 'a/b'], []],
  ['fix?', ['fix?'], ['fix1', 'fixx', 'fix']],
  ['fix?*', ['fix?', 'fix?1'], ['fix1', 'fixab']],
  ['[ab]*', ['[ab]', '[ab]c'], ['a', 'b', 'ab']],
  ['*[!a]', ['x[!a]'], ['b', 'x']],
  ['a\\*', ['a\\', 'a\\b'], ['a', 'ab', 'a*']],
  ['$(touch pwned)*', ['$(touch pwned)', '$(touch pwned)x'], ['pwned', 'x']],
  ['`touch pwned`*', ['`touch pwned`'], ['pwned']],
  ['${HOME}*', ['${HOME}'], ['/root', '/rootx']], // no expansion (receive-hooks.spec also tries the real $HOME)
  ['*$PATH', ['x$PATH'], ['x']],
  ['it\'s "quoted" *', ['it\'s "quoted" x'], ['its quoted x']],
  ['with space*', ['with space', 'with space2'], ['with', 'withspace']],
  ['ā*Ĉ', ['āĈ', 'ā-Ĉ'], ['aC', 'ā-C']], // UTF-8 bytes 0x81 and 0x88: dash's own control bytes
];
