import { generateKeyPairSync } from 'node:crypto';
import sshpk from 'sshpk';
import { App, createApp } from '../src/app.factory';
import { Transactions } from '../src/database/transactions';
import { DomainEvents } from '../src/domain-events/domain-events';
import { ci, waitFor } from './helpers/ci';
import { sleep } from './helpers/hook-receiver';
import { startTestApp, TestApp } from './helpers/test-app';

/**
 * The domain event mechanism itself (src/domain-events/domain-events.ts): handlers found through
 * `@OnDomainEvent`, in-process ones run after the commit only, durable ones are queue jobs written by
 * the emitter's transaction, a failing handler is logged and counted and never stops the others, and a
 * durable handler runs once across two instances.
 */
describe('domain events', () => {
  let t: TestApp;
  let events: DomainEvents;
  let tx: Transactions;
  const logged: string[] = [];
  let write: typeof process.stdout.write;

  beforeAll(async () => {
    t = await startTestApp({ LOG_LEVEL: 'error' });
    events = t.app.app.get(DomainEvents);
    tx = t.app.app.get(Transactions);
    // the app logs one JSON object per line on stdout: keep ours, pass the rest on
    write = process.stdout.write.bind(process.stdout);
    process.stdout.write = (chunk: string | Uint8Array, ...rest: never[]) => {
      const line = chunk.toString();
      if (line.includes('"domain event')) logged.push(line);
      else return write(chunk, ...rest);
      return true;
    };
  });
  afterAll(async () => {
    process.stdout.write = write;
    await t.close();
  });

  const jobs = async (queue: string, state?: string) =>
    (
      await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM pgboss.job WHERE name = $1 ${state ? 'AND state = $2' : ''}`, state ? [queue, state] : [queue])
    )[0].n;

  it('finds the @OnDomainEvent handlers of every provider at bootstrap', () => {
    expect(events.handlersOf('push.received')).toEqual(
      expect.arrayContaining([
        { id: 'PipelinesService.onPush', durable: true, queue: 'push.pipelines' },
        { id: 'MergeRequestPushReactions.afterPush', durable: true, queue: 'push.merge-requests' },
      ]),
    );
    expect(events.handlersOf('issue.changed')).toEqual(expect.arrayContaining([{ id: 'HookOutboxWorker.run', durable: true, queue: 'hooks.event' }]));
    expect(events.handlersOf('commit_status.changed')).toEqual(
      expect.arrayContaining([{ id: 'AutomaticMerges.afterCommitStatus', durable: false, queue: undefined }]),
    );
  });

  it('runs an in-process handler after the commit, never before it and never after a rollback', async () => {
    const seen: number[] = [];
    await events.subscribe('issue.created', 'test.in-process', (e) => {
      seen.push(e.issueId);
    });
    await tx.run(async (m) => {
      await events.emit(m, 'issue.created', { issueId: 1, projectId: 7, userId: 3 });
      await sleep(50);
      expect(seen).toEqual([]); // not yet committed
    });
    await waitFor(async () => seen.length === 1, 'the handler after commit');
    expect(seen).toEqual([1]);

    await expect(
      tx.run(async (m) => {
        await events.emit(m, 'issue.created', { issueId: 2, projectId: 7, userId: 3 });
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    await sleep(200);
    expect(seen).toEqual([1]);
  });

  it('writes a durable handler’s job in the emitter’s transaction: rolled back → no job, never runs; committed → runs once', async () => {
    const seen: { issueId: number; at: Date }[] = [];
    await events.subscribe(
      'issue.reopened',
      'test.durable',
      (e, meta) => {
        seen.push({ issueId: e.issueId, at: meta.at });
      },
      { durable: true },
    );
    const queue = events.handlersOf('issue.reopened').find((h) => h.id === 'test.durable')!.queue!;
    expect(queue).toBe('event.issue.reopened.test.durable');

    await expect(
      tx.run(async (m) => {
        await events.emit(m, 'issue.reopened', { issueId: 10, projectId: 7, userId: 3 });
        // not visible outside the transaction (PostgreSQL: the embedded database has one connection, held by this transaction)
        if (process.env.DATABASE_URL) expect(await jobs(queue)).toBe(0);
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect(await jobs(queue)).toBe(0);

    await tx.run((m) => events.emit(m, 'issue.reopened', { issueId: 11, projectId: 7, userId: 3 }));
    await waitFor(async () => (await jobs(queue, 'completed')) === 1, 'the durable job completed');
    expect(seen.map((s) => s.issueId)).toEqual([11]);
    expect(seen[0].at).toBeInstanceOf(Date);
    await sleep(300);
    expect(seen).toHaveLength(1);
  });

  it('logs and counts a throwing handler (in-process and durable), and the other handlers still run', async () => {
    const ran: string[] = [];
    await events.subscribe('merge_request.merged', 'test.throws', () => {
      throw new Error('in-process boom');
    });
    await events.subscribe('merge_request.merged', 'test.runs', () => {
      ran.push('in-process');
    });
    await events.subscribe(
      'merge_request.merged',
      'test.durable-throws',
      () => {
        throw new Error('durable boom');
      },
      { durable: true, retryLimit: 0 },
    );
    await events.subscribe('merge_request.merged', 'test.durable-runs', () => void ran.push('durable'), { durable: true });

    await tx.run((m) => events.emit(m, 'merge_request.merged', { mergeRequestId: 5, projectId: 7, userId: 3 }));
    await waitFor(async () => ran.length === 2, 'the other handlers ran');
    expect(ran.sort()).toEqual(['durable', 'in-process']);
    await waitFor(async () => (await jobs('event.merge_request.merged.test.durable-throws', 'failed')) === 1, 'the durable job failed');

    const metrics = (await t.http.get('/-/metrics').expect(200)).text;
    expect(metrics).toContain('domain_event_handler_failures_total{event="merge_request.merged",handler="test.throws"} 1');
    expect(metrics).toContain('domain_event_handler_failures_total{event="merge_request.merged",handler="test.durable-throws"} 1');
    expect(metrics).not.toContain('handler="test.runs"');
    const lines = logged.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          level: 'error',
          msg: 'domain event handler failed',
          event: 'merge_request.merged',
          handler: 'test.throws',
          error: 'in-process boom',
        }),
        expect.objectContaining({
          level: 'error',
          msg: 'domain event handler failed',
          event: 'merge_request.merged',
          handler: 'test.durable-throws',
          error: 'durable boom',
        }),
      ]),
    );
  });

  it('emitCommitted (no transaction) runs in-process handlers and sends durable jobs at once', async () => {
    const seen: string[] = [];
    await events.subscribe('build.failed', 'test.now', () => void seen.push('in-process'));
    await events.subscribe('build.failed', 'test.now-durable', () => void seen.push('durable'), { durable: true });
    await events.emitCommitted('build.failed', { buildId: 1, projectId: 7, userId: null, pipelineId: 1 });
    await waitFor(async () => seen.length === 2, 'both handlers');
    expect(seen.sort()).toEqual(['durable', 'in-process']);
  });

  it('the routes emit the catalogue’s events with the ids of the thing, the actor and the project (what notifications subscribe to)', async () => {
    const got: { name: string; payload: Record<string, unknown> }[] = [];
    await events.subscribe(
      ['project.created', 'issue.created', 'issue.closed', 'issue.reopened', 'note.created', 'key.created', 'email.created'],
      'test.catalogue',
      (payload, meta) => void got.push({ name: meta.name, payload: payload }),
      { durable: true },
    );
    const user = await t.createUser({ username: 'catalogue' });
    const as = (req: ReturnType<typeof t.http.get>) => req.set('PRIVATE-TOKEN', user.token);
    const project = (await as(t.http.post('/api/v3/projects')).send({ name: 'catalogue' }).expect(201)).body;
    const issue = (
      await as(t.http.post(`/api/v3/projects/${project.id}/issues`))
        .send({ title: 'one' })
        .expect(201)
    ).body;
    const note = (
      await as(t.http.post(`/api/v3/projects/${project.id}/issues/${issue.id}/notes`))
        .send({ body: 'a comment' })
        .expect(201)
    ).body;
    await as(t.http.put(`/api/v3/projects/${project.id}/issues/${issue.id}`))
      .send({ state_event: 'close' })
      .expect(200);
    await as(t.http.put(`/api/v3/projects/${project.id}/issues/${issue.id}`))
      .send({ state_event: 'reopen' })
      .expect(200);
    const publicKey = sshpk.parseKey(generateKeyPairSync('ed25519').publicKey.export({ type: 'spki', format: 'pem' }).toString(), 'pem').toString('ssh');
    const key = (await as(t.http.post('/api/v3/user/keys')).send({ title: 'k', key: publicKey }).expect(201)).body;
    const email = (await as(t.http.post('/api/v3/user/emails')).send({ email: 'second@example.com' }).expect(201)).body;

    await waitFor(async () => got.length >= 7, 'seven events');
    const by = (name: string) => got.filter((g) => g.name === name).map((g) => g.payload);
    expect(by('project.created')).toEqual([expect.objectContaining({ project: expect.objectContaining({ id: project.id }), userId: user.id })]);
    expect(by('issue.created')).toEqual([{ issueId: issue.id, projectId: project.id, userId: user.id }]);
    expect(by('note.created')).toEqual([{ noteId: note.id, projectId: project.id, userId: user.id }]);
    expect(by('issue.closed')).toEqual([{ issueId: issue.id, projectId: project.id, userId: user.id }]);
    expect(by('issue.reopened')).toEqual([{ issueId: issue.id, projectId: project.id, userId: user.id }]);
    expect(by('key.created')).toEqual([expect.objectContaining({ key: expect.objectContaining({ id: key.id, userId: user.id }) })]);
    expect(by('email.created')).toEqual([{ emailId: email.id, userId: user.id, email: 'second@example.com' }]);
    expect(got).toHaveLength(7);
  });

  it('a merge and a failed build emit merge_request.merged and build.failed with their ids', async () => {
    const got: { name: string; payload: Record<string, unknown> }[] = [];
    await events.subscribe(
      ['merge_request.merged', 'build.failed'],
      'test.merged-failed',
      (payload, meta) => void got.push({ name: meta.name, payload: payload }),
      { durable: true },
    );
    const c = ci(t);
    const owner = await t.createUser({ username: 'merger' });
    const as = <R extends { set(k: string, v: string): R }>(req: R) => req.set('PRIVATE-TOKEN', owner.token);
    const runner = await c.registerRunner();
    const p = await c.project(owner, 'unit:\n  script: ["make test"]\n');
    const claimed = await waitFor(async () => {
      const res = await c.api.requestBuild(runner.token);
      return res.status === 201 && res.body.sha === p.sha ? res.body : undefined;
    }, 'claimed build');
    await c.api.update(claimed.id, { token: runner.token, state: 'failed', trace: 'no\n' }).expect(200);

    await as(t.http.post(`/api/v3/projects/${p.id}/repository/branches`))
      .send({ branch_name: 'topic', ref: 'master' })
      .expect(201);
    await as(t.http.post(`/api/v3/projects/${p.id}/repository/files`))
      .send({ file_path: 'topic.txt', branch_name: 'topic', content: 'x\n', commit_message: 'topic' })
      .expect(201);
    const mr = (
      await as(t.http.post(`/api/v3/projects/${p.id}/merge_requests`))
        .send({ source_branch: 'topic', target_branch: 'master', title: 'merge me' })
        .expect(201)
    ).body;
    await as(t.http.put(`/api/v3/projects/${p.id}/merge_requests/${mr.id}/merge`))
      .send({})
      .expect(200);

    await waitFor(async () => got.length >= 2, 'both events');
    const pipeline = (await c.pipelines(p.id))[0];
    expect(got.find((g) => g.name === 'build.failed')?.payload).toEqual({ buildId: claimed.id, projectId: p.id, userId: owner.id, pipelineId: pipeline.id });
    expect(got.find((g) => g.name === 'merge_request.merged')?.payload).toEqual({ mergeRequestId: mr.id, projectId: p.id, userId: owner.id });
  });

  const pg = !!process.env.DATABASE_URL;
  (pg ? describe : describe.skip)('two instances on one PostgreSQL database', () => {
    let b: App;
    beforeAll(async () => {
      b = await createApp(t.config);
    });
    afterAll(async () => {
      await b.close();
    });

    it('a durable handler declared by both runs each event once, on either instance', async () => {
      const runs: { instance: string; issueId: number }[] = [];
      await events.subscribe('issue.closed', 'test.once', (e) => void runs.push({ instance: 'a', issueId: e.issueId }), { durable: true });
      await b.app.get(DomainEvents).subscribe('issue.closed', 'test.once', (e) => void runs.push({ instance: 'b', issueId: e.issueId }), { durable: true });
      for (let i = 1; i <= 10; i++) await tx.run((m) => events.emit(m, 'issue.closed', { issueId: i, projectId: 7, userId: 3 }));
      await waitFor(async () => (await jobs('event.issue.closed.test.once', 'completed')) === 10, 'all ten jobs completed', 30000);
      await sleep(500);
      expect(runs.map((r) => r.issueId).sort((x, y) => x - y)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    });
  });
});
