import { TransferAborted, TransferLimiter, TransfersBusy } from './transfer-limiter';

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
});
