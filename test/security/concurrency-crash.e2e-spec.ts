import { ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import request from 'supertest';
import { GitCli } from '../helpers/git-cli';
import { ci } from '../helpers/ci';
import { startTestApp, TestApp } from '../helpers/test-app';
import { createTestDatabase, TestDatabase } from '../helpers/test-db';
import { buildIfStale } from '../helpers/build';

const API = '/api/v3';
const pg = !!process.env.DATABASE_URL;
const ROOT_PASSWORD = 'crash-root-password';
const CI_YML = 'job:\n  script: echo ok\n';
type Json = Record<string, any>;

function run(cmd: string, args: string[], cwd: string, env: Record<string, string> = {}, timeoutMs = 300_000): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const c = spawn(cmd, args, { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const timer = setTimeout(() => c.kill('SIGKILL'), timeoutMs);
    c.stdout.on('data', (d: Buffer) => (out += d.toString()));
    c.stderr.on('data', (d: Buffer) => (out += d.toString()));
    c.on('error', reject);
    c.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

/** Every bare repository under `dir` (the `@hashed` layout). */
function repositories(dir: string): string[] {
  const found: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (!e.isDirectory()) continue;
      const p = join(d, e.name);
      if (e.name.endsWith('.git') && existsSync(join(p, 'HEAD'))) found.push(p);
      else walk(p);
    }
  };
  if (existsSync(dir)) walk(dir);
  return found;
}

async function fsckAll(dataDir: string): Promise<{ repos: number; failures: string[] }> {
  const repos = repositories(dataDir);
  const failures: string[] = [];
  for (const r of repos) {
    const res = await run('git', ['fsck', '--full', '--strict', '--no-progress'], r);
    if (res.code !== 0) failures.push(`${r}: ${res.out}`);
  }
  return { repos: repos.length, failures };
}

/**
 * `n` clones, each with a commit of its own on the same base, push to master at once: exactly one is a
 * fast-forward, the others must be refused cleanly (non-fast-forward or lock refused, never an
 * error). Then each refused one rebases and pushes again, one after the other: every commit lands.
 */
function preparePushers(git: GitCli, remote: string, home: string, tag: string, n: number): Promise<string[]> {
  return Promise.all(
    Array.from({ length: n }, async (_, i) => {
      const dir = join(home, `${tag}-${i}`);
      await git.ok(['clone', '-q', remote, dir]);
      await git.commit(dir, { [`pushes/${tag}-${i}.txt`]: `${i}\n` }, `${tag} push ${i}`);
      return dir;
    }),
  );
}

async function pushRace(
  git: GitCli,
  remote: string,
  home: string,
  tag: string,
  n: number,
  opts: { stopOnError?: () => boolean; dirs?: string[] } = {},
): Promise<{ acked: string[]; firstRound: number; refused: number; errors: number }> {
  const dirs = opts.dirs ?? (await preparePushers(git, remote, home, tag, n));
  const acked: string[] = [];
  let refused = 0;
  let errors = 0;
  const push = async (dir: string): Promise<'ok' | 'refused' | 'error'> => {
    const r = await git.run(['push', '--porcelain', 'origin', 'master'], dir);
    if (r.code === 0) {
      acked.push((await git.ok(['rev-parse', 'HEAD'], dir)).trim());
      return 'ok';
    }
    if (/\[rejected\]|non-fast-forward|fetch first|failed to lock|cannot lock ref|stale info|remote rejected/.test(r.stdout + r.stderr)) {
      refused++;
      return 'refused';
    }
    errors++;
    return 'error';
  };
  const first = await Promise.all(dirs.map(push));
  const firstRound = first.filter((x) => x === 'ok').length;
  for (const [i, dir] of dirs.entries()) {
    if (first[i] === 'ok') continue;
    if (first[i] === 'error' && opts.stopOnError?.()) continue;
    for (let attempt = 0; attempt < 5; attempt++) {
      if (opts.stopOnError?.()) break;
      await git.run(['pull', '-q', '--rebase', 'origin', 'master'], dir);
      if ((await push(dir)) === 'ok') break;
    }
  }
  return { acked, firstRound, refused, errors };
}

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/**
 * Concurrency and crashes: concurrent writers never duplicate or lose a row, concurrent pushes and
 * files-API commits on one branch are ordered and lose nothing, runners never claim a build twice;
 * then the built server (node dist/main.js) is killed with SIGKILL in the middle of the same load and
 * restarted: git fsck is clean everywhere, every acknowledged write is there, no half-written rows.
 */
(pg ? describe : describe.skip)('security: concurrency and crashes (PostgreSQL)', () => {
  describe('in one live server', () => {
    let t: TestApp;
    let git: GitCli;
    let home: string;
    let project: Json;
    const root = <T extends { set(k: string, v: string): T }>(r: T) => r.set('PRIVATE-TOKEN', t.root.token);

    beforeAll(async () => {
      t = await startTestApp();
      home = mkdtempSync(join(tmpdir(), 'glv3-conc-'));
      git = await GitCli.listen(t, home);
      project = (
        await root(t.http.post(`${API}/projects`))
          .send({ name: 'race' })
          .expect(201)
      ).body;
      await root(t.http.post(`${API}/projects/${project.id}/repository/files`))
        .send({ file_path: '.gitlab-ci.yml', branch_name: 'master', content: CI_YML, commit_message: 'ci' })
        .expect(201);
    });
    afterAll(async () => {
      await t.close();
      rmSync(home, { recursive: true, force: true });
    }, 120_000);

    it('50 concurrent issue creates and 50 concurrent note creates: distinct iids 1..50, no lost row, each with its event', async () => {
      // (timeout below: the machine running the suite may be busy)
      const s = Date.now();
      const issues = await Promise.all(
        Array.from({ length: 50 }, (_, i) => root(t.http.post(`${API}/projects/${project.id}/issues`)).send({ title: `race ${i}` })),
      );
      expect(issues.map((r) => r.status)).toEqual(Array(50).fill(201));
      const iids = issues.map((r) => r.body.iid as number).sort((a, b) => a - b);
      expect(iids).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
      const target = issues[0].body.id;
      const notes = await Promise.all(
        Array.from({ length: 50 }, (_, i) => root(t.http.post(`${API}/projects/${project.id}/issues/${target}/notes`)).send({ body: `note ${i}` })),
      );
      expect(notes.map((r) => r.status)).toEqual(Array(50).fill(201));
      const [counts] = await t.sql<Json>(
        `SELECT (SELECT count(*) FROM issues WHERE project_id = $1)::int AS issues,
                (SELECT count(DISTINCT iid) FROM issues WHERE project_id = $1)::int AS iids,
                (SELECT count(*) FROM notes WHERE noteable_type = 'Issue' AND noteable_id = $2)::int AS notes,
                (SELECT count(*) FROM issues i WHERE project_id = $1 AND NOT EXISTS
                   (SELECT 1 FROM events e WHERE e.target_type = 'Issue' AND e.target_id = i.id AND e.action = 'created'))::int AS issues_without_event,
                (SELECT count(*) FROM notes n WHERE noteable_id = $2 AND NOT EXISTS
                   (SELECT 1 FROM events e WHERE e.target_type = 'Note' AND e.target_id = n.id))::int AS notes_without_event`,
        [project.id, target],
      );
      console.log(`concurrency: 50 issue creates + 50 note creates in ${Date.now() - s} ms -> ${JSON.stringify(counts)}`);
      expect(counts).toEqual({ issues: 50, iids: 50, notes: 50, issues_without_event: 0, notes_without_event: 0 });
    }, 120_000);

    it('20 concurrent pushes to one branch with real git: fast-forwards ordered, non-fast-forwards refused cleanly, none lost; a pipeline for each', async () => {
      const s = Date.now();
      const remote = git.url(project.path_with_namespace, 'root', t.root.token);
      const race = await pushRace(git, remote, home, 'live', 20);
      const ms = Date.now() - s;
      console.log(
        `concurrency: 20 concurrent pushes of one base: ${race.firstRound} fast-forward accepted, ${race.refused} non-fast-forwards refused cleanly, ${race.errors} errors; after rebasing ${race.acked.length}/20 landed; ${ms} ms`,
      );
      expect(race.firstRound).toBe(1);
      expect(race.errors).toBe(0);
      expect(race.acked).toHaveLength(20);
      const check = join(home, 'live-check');
      await git.ok(['clone', '-q', remote, check]);
      for (const sha of race.acked) expect((await git.run(['merge-base', '--is-ancestor', sha, 'HEAD'], check)).code).toBe(0);
      const log = (await git.ok(['log', '--format=%s', 'HEAD'], check)).split('\n').filter((l) => l.startsWith('live push'));
      expect(log).toHaveLength(20);
      const { GitService } = await import('../../src/git/git.service');
      const repo = t.app.app.get(GitService).repositoryPath(project.id);
      expect((await run('git', ['fsck', '--full', '--strict', '--no-progress'], repo)).code).toBe(0);
      // every accepted push has its pipeline (created right after the push)
      const deadline = Date.now() + 15_000;
      let missing: string[] = race.acked;
      while (missing.length && Date.now() < deadline) {
        const rows = await t.sql<{ sha: string }>(`SELECT sha FROM ci_pipelines WHERE project_id = $1`, [project.id]);
        const have = new Set(rows.map((r) => r.sha));
        missing = race.acked.filter((sha) => !have.has(sha));
        if (missing.length) await new Promise((r) => setTimeout(r, 200));
      }
      expect(missing).toEqual([]);
    }, 240_000);

    it('20 concurrent files-API commits on one branch: all land, ordered, fsck clean', async () => {
      const s = Date.now();
      const res = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          root(t.http.post(`${API}/projects/${project.id}/repository/files`)).send({
            file_path: `api/file-${i}.txt`,
            branch_name: 'master',
            content: `${i}\n`,
            commit_message: `api commit ${i}`,
          }),
        ),
      );
      const statuses = res.map((r) => r.status);
      console.log(
        `concurrency: 20 concurrent files-API commits in ${Date.now() - s} ms -> statuses ${JSON.stringify(statuses.reduce((m, x) => ({ ...m, [x]: (m[x] ?? 0) + 1 }), {} as Record<number, number>))}`,
      );
      expect(statuses).toEqual(Array(20).fill(201));
      const tree = await root(t.http.get(`${API}/projects/${project.id}/repository/tree?path=api`)).expect(200);
      expect(tree.body).toHaveLength(20);
      const commits = await root(t.http.get(`${API}/projects/${project.id}/repository/commits?per_page=100`)).expect(200);
      expect(commits.body.filter((c: Json) => /^api commit/.test(c.title))).toHaveLength(20);
      const { GitService } = await import('../../src/git/git.service');
      expect((await run('git', ['fsck', '--full', '--strict', '--no-progress'], t.app.app.get(GitService).repositoryPath(project.id))).code).toBe(0);
    }, 180_000);

    it('50 runners claiming from 1,000 pending builds: 0 double claims, 0 lost', async () => {
      const c = ci(t);
      const owner = await t.createUser();
      const p = await c.project(owner, 'job:\n  script: x\n');
      const [pipeline] = await c.pipelines(p.id);
      await t.sql(
        `WITH s AS (
           INSERT INTO commit_statuses (project_id, sha, ref, name, stage, status, allow_failure, pipeline_id)
           SELECT $1, $2, 'master', 'job ' || g, 'test', 'pending', false, $3 FROM generate_series(2, 1000) g RETURNING id)
         INSERT INTO ci_builds (id, pipeline_id, project_id, stage_idx, commands)
         SELECT id, $3, $1, 1, 'x' FROM s`,
        [p.id, p.sha, pipeline.id],
      );
      const runners = await Promise.all(Array.from({ length: 50 }, () => c.registerRunner()));
      const claimed: number[] = [];
      const statuses: Record<number, number> = {};
      const s = Date.now();
      await Promise.all(
        runners.map(async (r) => {
          for (;;) {
            const res = await c.api.requestBuild(r.token);
            statuses[res.status] = (statuses[res.status] ?? 0) + 1;
            if (res.status !== 201) return;
            claimed.push(res.body.id);
          }
        }),
      );
      const ms = Date.now() - s;
      const [counts] = await t.sql<Json>(
        `SELECT count(*) FILTER (WHERE s.status = 'running')::int AS running, count(*) FILTER (WHERE s.status = 'pending')::int AS pending,
                count(DISTINCT b.runner_id)::int AS runners
         FROM ci_builds b JOIN commit_statuses s ON s.id = b.id WHERE b.project_id = $1`,
        [p.id],
      );
      const doubles = claimed.length - new Set(claimed).size;
      // the shared runners also take the pending builds of the earlier tests' pipelines: count this project's
      const ours = new Set((await t.sql<{ id: number }>(`SELECT id FROM ci_builds WHERE project_id = $1`, [p.id])).map((r) => r.id));
      const oursClaimed = claimed.filter((id) => ours.has(id));
      console.log(
        `concurrency: 50 runners claimed ${oursClaimed.length} of the 1000 pending builds (+${claimed.length - oursClaimed.length} of other projects) in ${ms} ms ` +
          `(${Math.round((claimed.length / ms) * 1000)}/s): ${doubles} double claims, ${1000 - new Set(oursClaimed).size} lost, ${counts.runners} runners got work, statuses ${JSON.stringify(statuses)}`,
      );
      expect(doubles).toBe(0);
      expect(new Set(oursClaimed).size).toBe(1000);
      expect(counts).toMatchObject({ running: 1000, pending: 0 });
    }, 240_000);
  });

  describe('the built server killed with SIGKILL mid-way and restarted', () => {
    let home: string;
    let dataDir: string;
    let port: number;
    let child: ChildProcess | undefined;
    let git: GitCli;
    let db: TestDatabase; // without tables: the built server migrates it on its first start
    const env = () => ({
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      DATABASE_URL: db.url,
      SECRET_KEY: 'crash-secret-key-crash-secret-key-0123456789',
      ROOT_PASSWORD,
      EXTERNAL_URL: `http://127.0.0.1:${port}`,
      LOG_LEVEL: 'error',
      QUEUE_POLL_SECONDS: '0.5',
    });

    async function start(): Promise<void> {
      const c = spawn(process.execPath, ['dist/main.js'], {
        cwd: process.cwd(),
        env: { PATH: process.env.PATH ?? '', ...env() },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      child = c;
      let out = '';
      c.stdout.on('data', (d: Buffer) => (out += d.toString()));
      c.stderr.on('data', (d: Buffer) => (out += d.toString()));
      const deadline = Date.now() + 90_000;
      for (;;) {
        if (c.exitCode !== null) throw new Error(`server exited: ${out}`);
        const ok = await request(`http://127.0.0.1:${port}`)
          .get('/-/readiness')
          .then(
            (r) => r.status === 200,
            () => false,
          );
        if (ok) return;
        if (Date.now() > deadline) throw new Error(`server did not start: ${out}`);
        await new Promise((r) => setTimeout(r, 200));
      }
    }

    const http = () => request(`http://127.0.0.1:${port}`);

    beforeAll(async () => {
      await buildIfStale();
      db = await createTestDatabase({ empty: true });
      home = mkdtempSync(join(tmpdir(), 'glv3-crash-'));
      dataDir = join(home, 'data');
      port = await freePort();
      git = new GitCli(home, port);
    }, 300_000);
    afterAll(async () => {
      const c = child;
      if (c && c.exitCode === null && c.signalCode === null) {
        c.kill('SIGKILL');
        await new Promise((r) => c.once('exit', r));
      }
      rmSync(home, { recursive: true, force: true });
      await db?.release();
    });

    it('SIGKILL under concurrent issue, note, files-API and git-push load: after restart fsck is clean, every acknowledged write is there, no half-written rows', async () => {
      await start();
      const session = await http().post(`${API}/session`).send({ login: 'root', password: ROOT_PASSWORD }).expect(201);
      const token: string = session.body.private_token;
      const as = <T extends { set(k: string, v: string): T }>(r: T) => r.set('PRIVATE-TOKEN', token);
      const project = (
        await as(http().post(`${API}/projects`))
          .send({ name: 'crash' })
          .expect(201)
      ).body;
      await as(http().post(`${API}/projects/${project.id}/repository/files`))
        .send({ file_path: '.gitlab-ci.yml', branch_name: 'master', content: CI_YML, commit_message: 'ci' })
        .expect(201);
      const target = (
        await as(http().post(`${API}/projects/${project.id}/issues`))
          .send({ title: 'notes go here' })
          .expect(201)
      ).body;
      const remote = `http://root:${token}@127.0.0.1:${port}/${project.path_with_namespace}.git`;

      const acked = { issues: [] as number[], notes: [] as number[], files: [] as string[] };
      let killed = false;
      let ackCount = 0;
      const ack = () => {
        // kill once issues and notes are mostly in and a few commits and pushes are acknowledged
        ackCount++;
        if (!killed && ackCount >= 105) {
          killed = true;
          child!.kill('SIGKILL');
        }
      };
      // the pushers clone first (they need the server); then everything starts at once
      const dirs = await preparePushers(git, remote, home, 'crash', 20);
      const pushes = pushRace(git, remote, home, 'crash', 20, { stopOnError: () => killed, dirs });
      const issueLoad = Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          as(http().post(`${API}/projects/${project.id}/issues`))
            .send({ title: `crash ${i}` })
            .then(
              (r) => r.status === 201 && (acked.issues.push(r.body.id), ack()),
              () => undefined,
            ),
        ),
      );
      const noteLoad = Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          as(http().post(`${API}/projects/${project.id}/issues/${target.id}/notes`))
            .send({ body: `crash note ${i}` })
            .then(
              (r) => r.status === 201 && (acked.notes.push(r.body.id), ack()),
              () => undefined,
            ),
        ),
      );
      const fileLoad = Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          as(http().post(`${API}/projects/${project.id}/repository/files`))
            .send({ file_path: `crash-api/file-${i}.txt`, branch_name: 'master', content: `${i}\n`, commit_message: `crash api ${i}` })
            .then(
              (r) => r.status === 201 && (acked.files.push(`file-${i}.txt`), ack()),
              () => undefined,
            ),
        ),
      );
      await Promise.all([issueLoad, noteLoad, fileLoad]);
      if (!killed) {
        killed = true;
        child!.kill('SIGKILL');
      }
      const race = await pushes;
      const dead = child!;
      if (dead.exitCode === null && dead.signalCode === null) await new Promise((r) => dead.once('exit', r));
      console.log(
        `crash: SIGKILL after ${ackCount} acknowledged writes: ${acked.issues.length}/50 issues, ${acked.notes.length}/50 notes, ${acked.files.length}/20 files-API commits, ${race.acked.length}/20 pushes acknowledged`,
      );

      const restartStarted = Date.now();
      await start();
      const restartMs = Date.now() - restartStarted;
      const fsck = await fsckAll(dataDir);
      console.log(`crash: restarted in ${restartMs} ms; git fsck --full on ${fsck.repos} repositories: ${fsck.failures.length} failures`);
      expect(fsck.repos).toBeGreaterThanOrEqual(1);
      expect(fsck.failures).toEqual([]);

      const sql = new Client({ connectionString: db.url });
      await sql.connect();
      try {
        const q = async (text: string, params: unknown[] = []) => (await sql.query(text, params)).rows;
        const issueIds = new Set((await q(`SELECT id FROM issues WHERE project_id = $1`, [project.id])).map((r) => r.id as number));
        const noteIds = new Set((await q(`SELECT id FROM notes WHERE noteable_type = 'Issue' AND noteable_id = $1`, [target.id])).map((r) => r.id as number));
        const lostIssues = acked.issues.filter((id) => !issueIds.has(id));
        const lostNotes = acked.notes.filter((id) => !noteIds.has(id));
        const [half] = await q(
          `SELECT (SELECT count(*) FROM issues i WHERE project_id = $1 AND NOT EXISTS
                     (SELECT 1 FROM events e WHERE e.target_type = 'Issue' AND e.target_id = i.id AND e.action = 'created'))::int AS issues_without_event,
                  (SELECT count(*) FROM notes n WHERE noteable_id = $2 AND NOT EXISTS
                     (SELECT 1 FROM events e WHERE e.target_type = 'Note' AND e.target_id = n.id))::int AS notes_without_event,
                  (SELECT count(*) - count(DISTINCT iid) FROM issues WHERE project_id = $1)::int AS duplicate_iids`,
          [project.id, target.id],
        );
        const tree = await as(http().get(`${API}/projects/${project.id}/repository/tree?path=crash-api`));
        const files = new Set(tree.status === 200 ? tree.body.map((e: Json) => e.name as string) : []);
        const lostFiles = acked.files.filter((f) => !files.has(f));
        const check = join(home, 'crash-check');
        await git.ok(['clone', '-q', remote, check]);
        const lostPushes: string[] = [];
        for (const sha of race.acked) if ((await git.run(['merge-base', '--is-ancestor', sha, 'HEAD'], check)).code !== 0) lostPushes.push(sha);
        // every branch tip that a push or a commit left has its pipeline (reconciled at boot if the crash beat it)
        const tips = (await git.ok(['log', '--first-parent', '--format=%H', 'HEAD'], check)).trim().split('\n');
        const pipelineShas = async () => new Set((await q(`SELECT sha FROM ci_pipelines WHERE project_id = $1`, [project.id])).map((r) => r.sha as string));
        let missing: string[] = [];
        let have = new Set<string>();
        const deadline = Date.now() + 20_000;
        do {
          have = await pipelineShas();
          missing = [tips[0]].filter((sha) => !have.has(sha));
          if (missing.length) await new Promise((r) => setTimeout(r, 300));
        } while (missing.length && Date.now() < deadline);
        const ackedWithoutPipeline = race.acked.filter((sha) => !have.has(sha)).length;
        console.log(
          `crash: after restart lost ${lostIssues.length} issues, ${lostNotes.length} notes, ${lostFiles.length} files-API commits, ${lostPushes.length} pushes; ` +
            `half-written ${JSON.stringify(half)}; branch tip without a pipeline: ${missing.length}; acknowledged pushes without a pipeline: ${ackedWithoutPipeline}`,
        );
        expect({ lostIssues, lostNotes, lostFiles, lostPushes }).toEqual({ lostIssues: [], lostNotes: [], lostFiles: [], lostPushes: [] });
        expect(half).toEqual({ issues_without_event: 0, notes_without_event: 0, duplicate_iids: 0 });
        expect(missing).toEqual([]);
      } finally {
        await sql.end();
      }

      // and the restarted server takes writes again
      await as(http().post(`${API}/projects/${project.id}/issues`))
        .send({ title: 'after the crash' })
        .expect(201);
      const after = await pushRace(git, remote, home, 'after', 3);
      expect(after.acked).toHaveLength(3);
      child!.kill('SIGTERM');
    }, 600_000);
  });
});
