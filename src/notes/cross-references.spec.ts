import { crossReferenceBody, extractMentions, MAX_MENTIONS, parseCrossReference, ProjectPath, rebaseCrossReference, withoutCode } from './cross-references';

const URL = 'http://gitlab.test';
const here: ProjectPath = { id: 1, namespace: 'group', path: 'app' };

describe('cross-references (GitLab 8.17 references and wording)', () => {
  it('finds #12 and !12, with `project` or `namespace/project` before them, and links, in order, each once', () => {
    expect(extractMentions('See #1, lib#2 and other/lib!3; #1 again', URL)).toEqual([
      { kind: 'Issue', namespace: null, project: null, iid: 1 },
      { kind: 'Issue', namespace: null, project: 'lib', iid: 2 },
      { kind: 'MergeRequest', namespace: 'other', project: 'lib', iid: 3 },
    ]);
    expect(extractMentions(`${URL}/a/b/issues/4 and ${URL}/a/b/merge_requests/5#note_1`, URL)).toEqual([
      { kind: 'Issue', namespace: 'a', project: 'b', iid: 4 },
      { kind: 'MergeRequest', namespace: 'a', project: 'b', iid: 5 },
    ]);
    // as GitLab's prefix pattern matches: the last two path segments, a leading `-` is not part of a name
    expect(extractMentions('x/a/b#1 -c#2 a/-d#3 e.git#4 f./g#5', URL)).toEqual([
      { kind: 'Issue', namespace: 'a', project: 'b', iid: 1 },
      { kind: 'Issue', namespace: null, project: 'c', iid: 2 },
      { kind: 'Issue', namespace: null, project: 'd', iid: 3 },
      { kind: 'Issue', namespace: null, project: null, iid: 4 },
      { kind: 'Issue', namespace: null, project: 'g', iid: 5 },
    ]);
    expect(extractMentions('#0 #99999999999 issue#2147483648', URL)).toEqual([]);
  });

  it('skips code: fenced blocks and inline code spans', () => {
    const text = 'real #1\n```\n#2 in a block\n```\nand `#3` inline, ~~~ \n~~~\n#4\n~~~\n#5';
    expect(withoutCode(text)).not.toMatch(/#[234]/);
    expect(extractMentions(text, URL).map((m) => m.iid)).toEqual([1, 5]);
  });

  it(`acts on at most ${MAX_MENTIONS} references, and a long text without references costs linear time`, () => {
    const many = Array.from({ length: 300 }, (_, i) => `#${i + 1}`).join(' ');
    expect(extractMentions(many, URL)).toHaveLength(MAX_MENTIONS);
    const started = Date.now();
    expect(extractMentions('a'.repeat(1_000_000) + '#1' + 'b/'.repeat(200_000) + '!2', URL)).toHaveLength(2);
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it("writes GitLab's bodies relative to the noted project, and reads them back", () => {
    const sibling: ProjectPath = { id: 2, namespace: 'group', path: 'lib' };
    const elsewhere: ProjectPath = { id: 3, namespace: 'other', path: 'tool' };
    const sha = 'a'.repeat(40);
    expect(crossReferenceBody({ kind: 'Issue', projectId: 1, id: 10, iid: 2 }, here, here)).toBe('mentioned in issue #2');
    expect(crossReferenceBody({ kind: 'MergeRequest', projectId: 1, id: 10, iid: 3 }, here, sibling)).toBe('mentioned in merge request app!3');
    expect(crossReferenceBody({ kind: 'Issue', projectId: 1, id: 10, iid: 2 }, here, elsewhere)).toBe('mentioned in issue group/app#2');
    expect(crossReferenceBody({ kind: 'Commit', projectId: 1, sha }, here, here)).toBe(`mentioned in commit ${sha}`);
    expect(crossReferenceBody({ kind: 'Commit', projectId: 1, sha }, here, elsewhere)).toBe(`mentioned in commit group/app@${sha}`);

    expect(parseCrossReference('mentioned in issue #2', here)).toEqual({ kind: 'Issue', namespace: 'group', path: 'app', iid: 2 });
    expect(parseCrossReference('mentioned in merge request lib!3', here)).toEqual({ kind: 'MergeRequest', namespace: 'group', path: 'lib', iid: 3 });
    expect(parseCrossReference('Mentioned in issue other/tool#4', here)).toEqual({ kind: 'Issue', namespace: 'other', path: 'tool', iid: 4 });
    expect(parseCrossReference(`mentioned in commit ${sha}`, here)).toEqual({ kind: 'Commit', namespace: 'group', path: 'app', sha });
    expect(parseCrossReference(`mentioned in commit other/tool@${sha}`, here)).toEqual({ kind: 'Commit', namespace: 'other', path: 'tool', sha });
    for (const unknown of ['mentioned in snippet $1', 'mentioned in issue !2', 'mentioned in merge request #2', 'mentioned in issue #2 and more']) {
      expect(parseCrossReference(unknown, here)).toBeUndefined();
    }
  });

  it('rebases a copied body onto the project it is copied to (an issue moved with its notes)', () => {
    const sibling: ProjectPath = { id: 2, namespace: 'group', path: 'lib' };
    const elsewhere: ProjectPath = { id: 3, namespace: 'other', path: 'tool' };
    expect(rebaseCrossReference('mentioned in issue #2', here, sibling)).toBe('mentioned in issue app#2');
    expect(rebaseCrossReference('mentioned in merge request lib!3', here, sibling)).toBe('mentioned in merge request !3');
    expect(rebaseCrossReference('mentioned in issue #2', here, elsewhere)).toBe('mentioned in issue group/app#2');
    expect(rebaseCrossReference(`mentioned in commit ${'b'.repeat(40)}`, here, elsewhere)).toBe(`mentioned in commit group/app@${'b'.repeat(40)}`);
    expect(rebaseCrossReference('Status changed to closed', here, elsewhere)).toBe('Status changed to closed');
  });
});
