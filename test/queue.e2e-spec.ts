import { Transactions } from '../src/database/transactions';
import { QueueService } from '../src/queue/queue.service';
import { startTestApp, TestApp } from './helpers/test-app';

const until = async (cond: () => boolean | Promise<boolean>, ms = 15000) => {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await cond()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('timed out waiting');
};

describe('durable queue (pg-boss on the app connection)', () => {
  let t: TestApp;
  let queue: QueueService;
  const seen: { data: { n: number }; retryCount: number }[] = [];
  let failFirst = new Set<number>();

  beforeAll(async () => {
    t = await startTestApp({ QUEUE_POLL_SECONDS: '0.5' });
    queue = t.app.app.get(QueueService);
    await queue.register<{ n: number }>('test.echo', {
      retryLimit: 2,
      retryDelay: 1,
      retryBackoff: true,
      handler: async (job) => {
        seen.push({ data: job.data, retryCount: job.retryCount });
        if (failFirst.has(job.data.n) && job.retryCount === 0) throw new Error('first attempt fails');
      },
    });
  });
  afterAll(() => t.close());

  it('a job sent in a committed transaction runs once after commit', async () => {
    await t.app.app.get(Transactions).run(async (tx) => {
      await queue.send('test.echo', { n: 1 }, { tx });
      await tx.query('SELECT 1');
    });
    queue.wake('test.echo');
    await until(() => seen.some((s) => s.data.n === 1));
    expect(seen.filter((s) => s.data.n === 1)).toHaveLength(1);
  });

  it('a job sent in a rolled-back transaction never runs (outbox)', async () => {
    await expect(
      t.app.app.get(Transactions).run(async (tx) => {
        await queue.send('test.echo', { n: 2 }, { tx });
        throw new Error('rollback');
      }),
    ).rejects.toThrow('rollback');
    await queue.send('test.echo', { n: 3 });
    await until(() => seen.some((s) => s.data.n === 3));
    await new Promise((r) => setTimeout(r, 1000));
    expect(seen.some((s) => s.data.n === 2)).toBe(false);
    const rows = await t.sql<{ n: string }>(`SELECT count(*) AS n FROM pgboss.job WHERE name = 'test.echo' AND data->>'n' = '2'`);
    expect(Number(rows[0].n)).toBe(0);
  });

  it('a failing job is retried with backoff', async () => {
    failFirst = new Set([4]);
    await queue.send('test.echo', { n: 4 });
    await until(() => seen.filter((s) => s.data.n === 4).length >= 2);
    expect(seen.filter((s) => s.data.n === 4).map((s) => s.retryCount)).toEqual([0, 1]);
  });

  it('reports counts by state', async () => {
    const counts = await queue.counts();
    expect(counts['test.echo']).toBeDefined();
    expect(Object.values(counts['test.echo']).reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(3);
  });
});
