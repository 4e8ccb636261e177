import request from 'supertest';
import { startTestApp, TestApp } from './helpers/test-app';

describe('operations: metrics, CORS, request ids', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ CORS_ORIGINS: 'http://front.example:3000', METRICS_ALLOWED_IPS: '10.1.0.0/16' });
  });
  afterAll(() => t.close());

  it('GET /-/metrics answers Prometheus text to loopback, with route templates and the DB pool', async () => {
    await t.http.get('/api/v3/projects/12345').set('PRIVATE-TOKEN', t.root.token).expect(404);
    const res = await t.http.get('/-/metrics').expect(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.text).toMatch(/http_request_duration_seconds_count\{method="GET",route="\/api\/v3\/projects\/:id",status="404"\} \d+/);
    expect(res.text).toMatch(/db_pool_connections\{state="total"\} \d+/);
    expect(res.text).toContain('git_processes_running');
    // git work is counted by subcommand
    const p = await t.http.post('/api/v3/projects').set('PRIVATE-TOKEN', t.root.token).send({ name: 'metered' }).expect(201);
    await t.http
      .post(`/api/v3/projects/${p.body.id}/repository/files`)
      .set('PRIVATE-TOKEN', t.root.token)
      .send({ file_path: 'a.txt', branch_name: 'master', content: 'a', commit_message: 'a' })
      .expect(201);
    const after = await t.http.get('/-/metrics').expect(200);
    expect(after.text).toMatch(/git_processes_spawned_total\{command="commit-tree"\} [1-9]/);
    expect(res.text).not.toContain('/api/v3/projects/12345');
  });

  it('GET /-/metrics shows queue depth and failures by queue and state, and pending/running builds', async () => {
    const { QueueService } = await import('../src/queue/queue.service');
    const queue = t.app.app.get(QueueService);
    let attempts = 0;
    await queue.register<{ n: number }>('test.metrics-fails', {
      retryLimit: 0,
      handler: async () => {
        attempts++;
        throw new Error('always fails');
      },
    });
    await queue.send('test.metrics-fails', { n: 1 });
    const start = Date.now();
    while (attempts === 0 && Date.now() - start < 15000) await new Promise((r) => setTimeout(r, 100));
    // two builds waiting for a runner, one running (as a pipeline would leave them)
    const p = await t.http.post('/api/v3/projects').set('PRIVATE-TOKEN', t.root.token).send({ name: 'metered-ci' }).expect(201);
    const [pl] = await t.sql<{ id: number }>(
      `INSERT INTO ci_pipelines (project_id, sha, before_sha, ref, status) VALUES ($1, repeat('a', 40), repeat('0', 40), 'master', 'running') RETURNING id`,
      [p.body.id],
    );
    for (const [i, status] of ['pending', 'pending', 'running'].entries()) {
      const [s] = await t.sql<{ id: number }>(
        `INSERT INTO commit_statuses (project_id, sha, ref, name, stage, status, pipeline_id) VALUES ($1, repeat('a', 40), 'master', $2, 'test', $3, $4) RETURNING id`,
        [p.body.id, `job${i}`, status, pl.id],
      );
      await t.sql(`INSERT INTO ci_builds (id, pipeline_id, project_id, stage_idx, commands) VALUES ($1, $2, $3, 0, 'true')`, [s.id, pl.id, p.body.id]);
    }
    let text = '';
    for (let i = 0; i < 50; i++) {
      text = (await t.http.get('/-/metrics').expect(200)).text;
      if (/queue_jobs\{queue="test.metrics-fails",state="failed"\} 1/.test(text)) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(text).toMatch(/queue_jobs\{queue="test.metrics-fails",state="failed"\} 1/);
    expect(text).toMatch(/queue_jobs\{queue="push.pipelines",state="completed"\} [1-9]/); // the files-API commit above
    expect(text).toMatch(/queue_jobs\{queue="repository.housekeeping",state="(created|active|completed)"\} [1-9]/);
    expect(text).toMatch(/queue_job_failures_total\{queue="test.metrics-fails"\} 1/);
    expect(text).toMatch(/ci_builds\{status="pending"\} 2/);
    expect(text).toMatch(/ci_builds\{status="running"\} 1/);
  });

  it('GET /-/metrics is 404 to addresses outside loopback and METRICS_ALLOWED_IPS', async () => {
    const { MetricsService } = await import('../src/metrics/metrics.service');
    const metrics = t.app.app.get(MetricsService);
    expect(metrics.allows('127.0.0.1')).toBe(true);
    expect(metrics.allows('::1')).toBe(true);
    expect(metrics.allows('::ffff:127.0.0.1')).toBe(true);
    expect(metrics.allows('10.1.2.3')).toBe(true);
    expect(metrics.allows('::ffff:10.1.2.3')).toBe(true);
    expect(metrics.allows('10.2.0.1')).toBe(false);
    expect(metrics.allows('203.0.113.9')).toBe(false);
    expect(metrics.allows('not an ip')).toBe(false);
    await expect(metrics.scrape('203.0.113.9')).rejects.toMatchObject({ status: 404 });
  });

  it('CORS: a listed origin gets the allow-origin and exposed pagination headers, never credentials', async () => {
    const res = await t.http.get('/api/v3/projects').set('Origin', 'http://front.example:3000').set('PRIVATE-TOKEN', t.root.token).expect(200);
    expect(res.headers['access-control-allow-origin']).toBe('http://front.example:3000');
    expect(res.headers['access-control-expose-headers']).toContain('X-Total');
    expect(res.headers['access-control-expose-headers']).toContain('Link');
    expect(res.headers['access-control-allow-credentials']).toBeUndefined();
    expect(res.headers.vary).toMatch(/Origin/);
  });

  it('CORS preflight: 204 with the allowed headers for a listed origin; nothing for others', async () => {
    const ok = await t.http
      .options('/api/v3/projects')
      .set('Origin', 'http://front.example:3000')
      .set('Access-Control-Request-Method', 'GET')
      .set('Access-Control-Request-Headers', 'private-token')
      .expect(204);
    expect(ok.headers['access-control-allow-origin']).toBe('http://front.example:3000');
    expect(ok.headers['access-control-allow-headers']).toMatch(/PRIVATE-TOKEN/);
    expect(ok.headers['access-control-allow-headers']).toMatch(/Sudo/);
    const other = await t.http.options('/api/v3/projects').set('Origin', 'http://evil.example').set('Access-Control-Request-Method', 'GET').expect(204);
    expect(other.headers['access-control-allow-origin']).toBeUndefined();
    const plain = await t.http.get('/api/v3/projects').set('Origin', 'http://evil.example').set('PRIVATE-TOKEN', t.root.token).expect(200);
    expect(plain.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('every response carries an X-Request-Id, taken from a well-formed incoming one', async () => {
    const a = await t.http.get('/api/v3/user').set('PRIVATE-TOKEN', t.root.token).expect(200);
    expect(a.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const b = await t.http.get('/api/v3/user').set('X-Request-Id', 'proxy-abc.123').expect(401);
    expect(b.headers['x-request-id']).toBe('proxy-abc.123');
    const c = await t.http.get('/api/v3/user').set('X-Request-Id', 'bad id with spaces').expect(401);
    expect(c.headers['x-request-id']).not.toBe('bad id with spaces');
  });
});

describe('operations: no CORS unless configured', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('sends no CORS headers by default', async () => {
    const res = await t.http.get('/api/v3/projects').set('Origin', 'http://front.example:3000').set('PRIVATE-TOKEN', t.root.token).expect(200);
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    void request;
  });
});
