import type { AppConfig } from '../config/config';
import { Logger } from '../common/logging/logger';
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
});
