import { PROTECTED_BRANCH_CASES } from './protected-branch-cases';
import { protectedBranchMatches } from './receive-hooks';

/** The API's matcher against the same table as the update hook's (receive-hooks.spec.ts). */
describe('protectedBranchMatches', () => {
  it.each(PROTECTED_BRANCH_CASES)('pattern %j: literal apart from *', (pattern, matching, other) => {
    for (const b of matching) expect([b, protectedBranchMatches(pattern, b)]).toEqual([b, true]);
    for (const b of other) expect([b, protectedBranchMatches(pattern, b)]).toEqual([b, false]);
  });
});
