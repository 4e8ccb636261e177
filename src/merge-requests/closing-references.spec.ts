import { closingReferences } from './closing-references';

const URL = 'http://gitlab.test';

describe('closingReferences', () => {
  const refs = (text: string) => closingReferences(text, URL).map((r) => `${r.project ?? ''}#${r.iid}`);

  it('reads the default closing pattern', () => {
    expect(refs('Closes #1')).toEqual(['#1']);
    expect(refs('fixes #1, #2 and #3')).toEqual(['#1', '#2', '#3']);
    expect(refs('Resolves: group/project#4')).toEqual(['group/project#4']);
    expect(refs('This closes issue #5 and fixed issues #6')).toEqual(['#5', '#6']);
    expect(refs('Fixing #7\nResolving #8')).toEqual(['#7', '#8']);
    expect(refs(`Closes ${URL}/ns/proj/issues/9`)).toEqual(['ns/proj#9']);
  });

  it('ignores mentions without a closing word, other hosts and repeats', () => {
    expect(refs('See #1, relates to #2')).toEqual([]);
    expect(refs('Closes http://elsewhere.test/ns/proj/issues/9')).toEqual([]);
    expect(refs('Closes #1. Fixes #1')).toEqual(['#1']);
    expect(refs('closes#1')).toEqual([]);
  });
});
