import { ci } from './helpers/ci';
import { startTestApp, TestApp } from './helpers/test-app';

const BUILDS = 1000;
const CLAIMERS = 50;
const onPostgres = !!process.env.DATABASE_URL;

// Concurrency needs the real server: embedded PGlite has one connection, so claims would simply queue.
(onPostgres ? describe : describe.skip)('CI build claiming under concurrency (PostgreSQL; skipped without DATABASE_URL)', () => {
  let t: TestApp;
  let c: ReturnType<typeof ci>;

  beforeAll(async () => {
    t = await startTestApp();
    c = ci(t);
  });
  afterAll(() => t.close());

  it(`${CLAIMERS} concurrent runners drain ${BUILDS} pending builds, each claimed exactly once`, async () => {
    const owner = await t.createUser();
    const p = await c.project(owner, 'job:\n  script: x\n');
    const [pipeline] = await c.pipelines(p.id);
    // 999 more pending builds in the pipeline (the push created the first)
    await t.sql(
      `WITH s AS (
         INSERT INTO commit_statuses (project_id, sha, ref, name, stage, status, allow_failure, pipeline_id)
         SELECT $1, $2, 'master', 'job ' || g, 'test', 'pending', false, $3 FROM generate_series(2, $4) g RETURNING id)
       INSERT INTO ci_builds (id, pipeline_id, project_id, stage_idx, commands)
       SELECT id, $3, $1, 1, 'x' FROM s`,
      [p.id, p.sha, pipeline.id, BUILDS],
    );
    const runners = await Promise.all(Array.from({ length: CLAIMERS }, () => c.registerRunner()));
    const claimed: number[] = [];
    const statuses = new Map<number, number>();
    await Promise.all(
      runners.map(async (r) => {
        for (;;) {
          const res = await c.api.requestBuild(r.token);
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
          if (res.status !== 201) return;
          claimed.push(res.body.id);
        }
      }),
    );
    expect([...statuses.keys()].sort()).toEqual([201, 404]);
    expect(claimed.length).toBe(BUILDS);
    expect(new Set(claimed).size).toBe(BUILDS);
    const [counts] = await t.sql<{ running: string; pending: string; runners: string }>(
      `SELECT count(*) FILTER (WHERE s.status = 'running') AS running, count(*) FILTER (WHERE s.status = 'pending') AS pending,
              count(DISTINCT b.runner_id) AS runners
       FROM ci_builds b JOIN commit_statuses s ON s.id = b.id WHERE b.project_id = $1`,
      [p.id],
    );
    expect(Number(counts.running)).toBe(BUILDS);
    expect(Number(counts.pending)).toBe(0);
    expect(Number(counts.runners)).toBeGreaterThan(1);
  });
});
