import { GroupRefParam, NO_PROJECT, parseGroupRef, parseProjectRef, projectKey, ProjectRefParam } from './refs';

describe('parseProjectRef', () => {
  it('reads digits as an id and anything else as namespace/path split at the last slash', () => {
    expect(parseProjectRef('42')).toEqual({ id: 42 });
    expect(parseProjectRef('2147483647')).toEqual({ id: 2147483647 });
    expect(parseProjectRef('alice/web')).toEqual({ namespace: 'alice', path: 'web' });
    expect(parseProjectRef('a/b/c')).toEqual({ namespace: 'a/b', path: 'c' });
    expect(parseProjectRef('alice/')).toEqual({ namespace: 'alice', path: '' });
    expect(parseProjectRef('123/web')).toEqual({ namespace: '123', path: 'web' });
  });

  it('names no project for what cannot name one (the resolver answers 404 without a query)', () => {
    for (const raw of ['0', '-1', '1.5', '2147483648', '99999999999', 'abc', '/web', '', 'a/b\u0000', 'a/b\n', 'a/' + 'x'.repeat(511)]) {
      expect(parseProjectRef(raw)).toBe(NO_PROJECT);
    }
    expect(projectKey(NO_PROJECT)).toBeUndefined();
    expect(projectKey({ id: 3 })).toEqual({ id: 3 });
  });

  it('is what the param pipe hands on', () => {
    expect(new ProjectRefParam().transform('ns/p')).toEqual({ namespace: 'ns', path: 'p' });
    expect(new ProjectRefParam().transform('x')).toBe(NO_PROJECT);
  });
});

describe('parseGroupRef', () => {
  it('reads digits as an id and any other text as a path', () => {
    expect(parseGroupRef('7')).toEqual({ id: 7 });
    expect(parseGroupRef('0')).toEqual({ path: '0' });
    expect(parseGroupRef('2147483648')).toEqual({ path: '2147483648' });
    expect(parseGroupRef('my-group')).toEqual({ path: 'my-group' });
    expect(new GroupRefParam().transform('g')).toEqual({ path: 'g' });
  });
});
