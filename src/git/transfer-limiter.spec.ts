import { CLIENT_SHARE_MESSAGE, TransferAborted, TransferLimiter, transferClient, TransfersBusy, TRANSFERS_BUSY_MESSAGE } from './transfer-limiter';

const tick = () => new Promise((r) => setImmediate(r));

describe('TransferLimiter', () => {
  it('runs up to maxRunning, queues up to maxQueued in arrival order, refuses the rest at once', async () => {
    const limiter = new TransferLimiter({ maxRunning: 2, maxQueued: 2, queueTimeoutMs: 60_000 });
    const first = await limiter.acquire();
    const second = await limiter.acquire();
    const order: string[] = [];
    const third = limiter.acquire().then((r) => (order.push('third'), r));
    const fourth = limiter.acquire().then((r) => (order.push('fourth'), r));
    await expect(limiter.acquire()).rejects.toEqual(new TransfersBusy('queue_full'));
    expect(() => limiter.admit()).toThrow(TransfersBusy);
    await tick();
    expect(order).toEqual([]);
    first();
    first(); // giving back twice frees one slot only
    await tick();
    expect(order).toEqual(['third']);
    second();
    await tick();
    expect(order).toEqual(['third', 'fourth']);
    (await third)();
    (await fourth)();
    // all free again: the next ones start at once
    (await limiter.acquire())();
    limiter.admit();
  });

  it('refuses a waiter after queueTimeoutMs', async () => {
    const limiter = new TransferLimiter({ maxRunning: 1, maxQueued: 5, queueTimeoutMs: 20 });
    const held = await limiter.acquire();
    await expect(limiter.acquire()).rejects.toEqual(new TransfersBusy('timeout'));
    held();
    (await limiter.acquire())();
  });

  it('an aborted waiter leaves the queue: its place goes to the next, no slot is taken for it', async () => {
    const limiter = new TransferLimiter({ maxRunning: 1, maxQueued: 1, queueTimeoutMs: 60_000 });
    const held = await limiter.acquire();
    const gone = new AbortController();
    const waiting = limiter.acquire(gone.signal);
    await expect(limiter.acquire()).rejects.toBeInstanceOf(TransfersBusy);
    gone.abort();
    await expect(waiting).rejects.toBeInstanceOf(TransferAborted);
    const next = limiter.acquire(); // queues (the place is free)
    held();
    const release = await next;
    const after = limiter.acquire();
    release();
    (await after)();
    await expect(limiter.acquire(AbortSignal.abort())).rejects.toBeInstanceOf(TransferAborted);
  });

  it('one client runs at most half of the slots (rounded up) and queues at most a quarter of the queue; others run at once', async () => {
    const limiter = new TransferLimiter({ maxRunning: 4, maxQueued: 8, queueTimeoutMs: 60_000 });
    const a1 = await limiter.acquire(undefined, 'ip:a');
    const a2 = await limiter.acquire(undefined, 'ip:a');
    // a's share of the slots (2 of 4) is taken: its next ones wait although two slots are free
    const order: string[] = [];
    const a3 = limiter.acquire(undefined, 'ip:a').then((r) => (order.push('a3'), r));
    const a4 = limiter.acquire(undefined, 'ip:a').then((r) => (order.push('a4'), r));
    // its share of the queue (2 of 8) is taken too: refused at once, with its own words
    const refused = limiter.acquire(undefined, 'ip:a');
    await expect(refused).rejects.toEqual(new TransfersBusy('client_share'));
    await expect(refused).rejects.toThrow(CLIENT_SHARE_MESSAGE);
    expect(() => limiter.admit('ip:a')).toThrow(CLIENT_SHARE_MESSAGE);
    // another client runs at once, past a's waiters
    const b1 = await limiter.acquire(undefined, 'user:7');
    const b2 = await limiter.acquire(undefined, 'user:7');
    limiter.admit('user:9'); // the queue has room for a third client
    await tick();
    expect(order).toEqual([]);
    // a slot of b's frees: a is still at its share, so its waiter stays; a new client takes it
    b1();
    await tick();
    expect(order).toEqual([]);
    const c1 = await limiter.acquire(undefined, 'user:9');
    // a slot of a's frees: its longest waiter runs
    a1();
    await tick();
    expect(order).toEqual(['a3']);
    a2();
    await tick();
    expect(order).toEqual(['a3', 'a4']);
    for (const r of [b2, c1, await a3, await a4]) r();
    // all free: a runs its share at once again
    (await limiter.acquire(undefined, 'ip:a'))();
  });

  it('a freed slot goes to the longest waiter whose client is under its share; the totals still apply to every client', async () => {
    const limiter = new TransferLimiter({ maxRunning: 2, maxQueued: 3, queueTimeoutMs: 60_000 });
    const a1 = await limiter.acquire(undefined, 'a');
    const b1 = await limiter.acquire(undefined, 'b');
    const order: string[] = [];
    const a2 = limiter.acquire(undefined, 'a').then((r) => (order.push('a2'), r));
    const b2 = limiter.acquire(undefined, 'b').then((r) => (order.push('b2'), r));
    const c1 = limiter.acquire(undefined, 'c').then((r) => (order.push('c1'), r));
    // the queue (3) is full: a fourth client is refused as before, with the server's words
    await expect(limiter.acquire(undefined, 'd')).rejects.toEqual(new TransfersBusy('queue_full'));
    await expect(limiter.acquire(undefined, 'd')).rejects.toThrow(TRANSFERS_BUSY_MESSAGE);
    b1(); // b's slot frees: a2 is first in line but a is at its share (1 of 2); b2 is next
    await tick();
    expect(order).toEqual(['b2']);
    (await b2)();
    await tick();
    expect(order).toEqual(['b2', 'c1']);
    a1();
    await tick();
    expect(order).toEqual(['b2', 'c1', 'a2']);
    (await c1)();
    (await a2)();
  });

  it('explicit shares: the whole of the slots for one client shares nothing (the behaviour before shares)', async () => {
    const limiter = new TransferLimiter({ maxRunning: 2, maxQueued: 2, queueTimeoutMs: 60_000, maxRunningPerClient: 2, maxQueuedPerClient: 2 });
    const held = [await limiter.acquire(undefined, 'a'), await limiter.acquire(undefined, 'a')];
    const waiting = [limiter.acquire(undefined, 'a'), limiter.acquire(undefined, 'a')];
    await expect(limiter.acquire(undefined, 'a')).rejects.toEqual(new TransfersBusy('queue_full'));
    for (const r of held) r();
    for (const w of waiting) (await w)();
  });

  it("names the client: the user, a CI build's project, else the address (IPv6 by its /64, IPv4-mapped as IPv4)", () => {
    expect(transferClient({ userId: 3, address: '10.0.0.1' })).toBe('user:3');
    expect(transferClient({ buildProjectId: 5, address: '10.0.0.1' })).toBe('ci:5');
    expect(transferClient({ address: '10.0.0.1' })).toBe('ip:10.0.0.1');
    expect(transferClient({ address: '::ffff:10.0.0.1' })).toBe('ip:10.0.0.1');
    expect(transferClient({ address: '2001:db8:1:2:3:4:5:6' })).toBe(transferClient({ address: '2001:db8:1:2:ffff::1' }));
    expect(transferClient({ address: '2001:db8:1:2:3:4:5:6' })).not.toBe(transferClient({ address: '2001:db8:1:3::1' }));
  });
});
