import type { AppConfig } from '../config/config';
import { Logger } from '../common/http/logger';
import { RepositoryLocks } from './repository-locks';

/** The embedded default's path (no DATABASE_URL): the process-local queue per project. */
describe('RepositoryLocks (one instance)', () => {
  const locks = new RepositoryLocks({ databaseUrl: undefined } as AppConfig, new Logger({ logLevel: 'silent' }));

  /** A gate the test opens by hand, so the order is decided without timers. */
  const gate = () => {
    let open!: () => void;
    const p = new Promise<void>((r) => (open = r));
    return { p, open };
  };

  it('runs the writes of one repository one after the other, in arrival order', async () => {
    const log: string[] = [];
    const g1 = gate();
    const first = locks.run(1, async () => {
      log.push('1 start');
      await g1.p;
      log.push('1 end');
      return 'one';
    });
    const second = locks.run(1, async () => {
      log.push('2 start');
      return 'two';
    });
    await new Promise((r) => setImmediate(r)); // every pending continuation has run
    expect(log).toEqual(['1 start']);
    g1.open();
    expect(await Promise.all([first, second])).toEqual(['one', 'two']);
    expect(log).toEqual(['1 start', '1 end', '2 start']);
  });

  it('does not hold other repositories, and a failed write releases the lock', async () => {
    const g = gate();
    const log: string[] = [];
    const held = locks.run(2, async () => {
      await g.p;
      log.push('2');
    });
    await locks.run(3, async () => {
      log.push('3');
    });
    expect(log).toEqual(['3']);
    g.open();
    await held;
    await expect(locks.run(2, async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await locks.run(2, async () => 'after')).toBe('after');
  });

  it('a held lock given back early lets the next write in before the holder has finished its work; a second release is a no-op', async () => {
    const log: string[] = [];
    const release = await locks.hold(4);
    const next = locks.run(4, async () => {
      log.push('next');
    });
    await new Promise((r) => setImmediate(r));
    expect(log).toEqual([]); // still held
    await release();
    await next;
    expect(log).toEqual(['next']);
    const third = await locks.hold(4);
    await release(); // the first holder's release again: must not open the lock the third one holds
    const fourth = locks.run(4, async () => {
      log.push('fourth');
    });
    await new Promise((r) => setImmediate(r));
    expect(log).toEqual(['next']);
    await third();
    await fourth;
    expect(log).toEqual(['next', 'fourth']);
  });

  it('shared holders (pushes) hold it together; an exclusive one waits for them all, and a shared one that comes after it waits for it', async () => {
    const log: string[] = [];
    const s1 = await locks.hold(5, undefined, 'shared');
    const s2 = await locks.hold(5, undefined, 'shared'); // at once, beside s1
    const writer = locks.run(5, async () => {
      log.push('exclusive');
    });
    const s3 = locks.hold(5, undefined, 'shared').then((release) => {
      log.push('shared after');
      return release;
    });
    await new Promise((r) => setImmediate(r));
    expect(log).toEqual([]);
    await s1();
    await new Promise((r) => setImmediate(r));
    expect(log).toEqual([]); // s2 still holds it
    await s2();
    await writer;
    const release3 = await s3;
    expect(log).toEqual(['exclusive', 'shared after']);
    // the shared requests queued behind an exclusive holder all go in together when it leaves
    const w = locks.hold(5); // waits for release3
    let entered = 0;
    const both = [locks.hold(5, undefined, 'shared'), locks.hold(5, undefined, 'shared')].map((p) => p.then((r) => (entered++, r)));
    await release3();
    const releaseW = await w;
    await new Promise((r) => setImmediate(r));
    expect(entered).toBe(0);
    await releaseW();
    const [x, y] = await Promise.all(both); // neither waited for the other's release
    expect(entered).toBe(2);
    await x();
    await y();
    expect(await locks.run(5, async () => 'free')).toBe('free');
  });
});

const pgUrl = process.env.DATABASE_URL;
/** Two instances on one PostgreSQL database: the advisory locks, behind the turnstile. */
(pgUrl ? describe : describe.skip)('RepositoryLocks (two instances on PostgreSQL)', () => {
  const logger = new Logger({ logLevel: 'silent' });
  const a = new RepositoryLocks({ databaseUrl: pgUrl } as AppConfig, logger);
  const b = new RepositoryLocks({ databaseUrl: pgUrl } as AppConfig, logger);
  // project ids no other test holds
  const id = 900_000_000 + (process.pid % 1_000_000);
  const settle = () => new Promise((r) => setTimeout(r, 150)); // longer than the polls' first steps

  afterAll(async () => {
    await a.onModuleDestroy();
    await b.onModuleDestroy();
  });

  it('an exclusive holder on one instance keeps the other out until it lets go', async () => {
    const log: string[] = [];
    const release = await a.hold(id);
    const other = b.run(id, async () => {
      log.push('b');
    });
    await settle();
    expect(log).toEqual([]);
    await release();
    await other;
    expect(log).toEqual(['b']);
  });

  it('shared holders on two instances hold it together; an exclusive one waits for both', async () => {
    const log: string[] = [];
    const sa = await a.hold(id + 1, undefined, 'shared');
    const sb = await b.hold(id + 1, undefined, 'shared'); // not kept out by a's
    const writer = a.run(id + 1, async () => {
      log.push('exclusive');
    });
    await settle();
    await sa();
    await settle();
    expect(log).toEqual([]); // b's shared hold is still there
    await sb();
    await writer;
    expect(log).toEqual(['exclusive']);
  });

  it('a waiting exclusive holder is not starved: shared requests on another instance wait behind it', async () => {
    const log: string[] = [];
    const first = await a.hold(id + 2, undefined, 'shared');
    const writer = b.run(id + 2, async () => {
      log.push('exclusive');
    });
    await settle(); // b holds the turnstile and waits for a's shared hold
    const later = a.hold(id + 2, undefined, 'shared').then((release) => {
      log.push('shared after');
      return release;
    });
    await settle();
    expect(log).toEqual([]);
    await first();
    await writer;
    await (
      await later
    )();
    expect(log).toEqual(['exclusive', 'shared after']);
  });

  it('an exclusive request that times out answers 503 and leaves the turnstile free', async () => {
    const held = await a.hold(id + 3, undefined, 'shared');
    await expect(b.hold(id + 3, 100)).rejects.toMatchObject({ status: 503 });
    const again = await a.hold(id + 3, 1_000, 'shared'); // would wait out its 1 s behind a leftover turnstile
    await again();
    await held();
    await (
      await b.hold(id + 3, 1_000)
    )();
  });
});
