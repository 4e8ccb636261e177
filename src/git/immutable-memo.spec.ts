import { ImmutableMemo } from './immutable-memo';

describe('ImmutableMemo', () => {
  it('computes once per key and remembers null answers too', async () => {
    const memo = new ImmutableMemo<string | null>(10);
    let calls = 0;
    const compute = async () => (calls++, null);
    expect(await memo.through('a', compute)).toBeNull();
    expect(await memo.through('a', compute)).toBeNull();
    expect(calls).toBe(1);
    expect(await memo.through('b', async () => 'x')).toBe('x');
    expect(memo.get('b')).toBe('x');
  });

  it('drops the least recently used key beyond its bound', async () => {
    const memo = new ImmutableMemo<number>(2);
    memo.set('a', 1);
    memo.set('b', 2);
    expect(memo.get('a')).toBe(1); // a is now the most recent
    memo.set('c', 3);
    expect(memo.has('b')).toBe(false);
    expect(memo.has('a')).toBe(true);
    expect(memo.has('c')).toBe(true);
  });

  it('remembers nothing when the computation fails', async () => {
    const memo = new ImmutableMemo<number>(2);
    await expect(memo.through('a', async () => Promise.reject(new Error('git failed')))).rejects.toThrow('git failed');
    expect(memo.has('a')).toBe(false);
  });
});

describe('ImmutableMemo with weights', () => {
  it('drops the oldest entries beyond the total weight and never keeps one heavier than all of it', () => {
    const memo = new ImmutableMemo<string>(100, (s) => s.length, 10);
    memo.set('a', 'xxxx');
    memo.set('b', 'yyyy');
    memo.set('c', 'zzzz'); // 12 > 10: a goes
    expect([memo.has('a'), memo.has('b'), memo.has('c')]).toEqual([false, true, true]);
    memo.set('big', 'x'.repeat(11));
    expect(memo.has('big')).toBe(false);
    expect([memo.has('b'), memo.has('c')]).toEqual([true, true]);
    memo.set('b', 'y'); // replacing an entry replaces its weight: 1 + 4
    memo.set('d', 'wwwww'); // 10: all kept
    expect([memo.has('b'), memo.has('c'), memo.has('d')]).toEqual([true, true, true]);
  });
});
