import { reviveDates } from './hook-outbox';

describe('reviveDates (outbox jobs through JSON)', () => {
  it('turns toISOString strings back into the same Dates, at any depth', () => {
    const at = new Date('2016-05-22T10:11:12.345Z');
    const job = JSON.parse(JSON.stringify({ user: { createdAt: at, name: 'x' }, list: [at], n: 1, none: null }));
    const back = reviveDates(job) as { user: { createdAt: Date; name: string }; list: Date[]; n: number; none: null };
    expect(back.user.createdAt).toBeInstanceOf(Date);
    expect(back.user.createdAt.getTime()).toBe(at.getTime());
    expect(back.list[0].getTime()).toBe(at.getTime());
    expect(back).toMatchObject({ user: { name: 'x' }, n: 1, none: null });
  });

  it('leaves other date-like strings as they are (a payload string keeps its form)', () => {
    const data = { timestamp: '2011-12-12T14:27:31+02:00', xml: '2016-05-22T10:11:12Z', created_at: '2016-05-22 10:11:12 UTC' };
    expect(reviveDates(data)).toEqual(data);
  });
});
