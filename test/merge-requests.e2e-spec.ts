import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GitService } from '../src/git/git.service';
import { parseRef, parseRepoPath } from '../src/git/names';
import { MergeRequestGit } from '../src/merge-requests/merge-request-git.service';
import { GitCli } from './helpers/git-cli';
import { API, Json, planning, Team, TestProject } from './helpers/planning';
import type { Response } from 'supertest';
import { expectSchema } from './helpers/schema';
import { startTestApp, TestApp, TestUser } from './helpers/test-app';

const SHA = /^[0-9a-f]{40}$/;

/**
 * Merge requests over HTTP with real repositories on disk: histories made with the git CLI and
 * pushed over smart HTTP, merges checked with git itself.
 *
 * Each seeded project:   m1 ─ m2 (master: a.txt changed)
 *                         ├ f1 ─ f2 (feature: adds feature.txt, "Fixes #1")
 *                         └ c1 (conflict: a.txt changed otherwise)
 */
describe('merge requests', () => {
  let t: TestApp;
  let cli: GitCli;
  let tmp: string;
  let h: ReturnType<typeof planning>;
  let tm: Team;
  let seq = 0;

  beforeAll(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'glv3-mr-'));
    t = await startTestApp();
    cli = await GitCli.listen(t, tmp);
    h = planning(t);
    tm = await h.team();
  });
  afterAll(async () => {
    await t.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  interface Seeded {
    p: TestProject;
    work: string;
    url: string;
    m2: string;
    f2: string;
    c1: string;
  }

  /** A project of the team with the history above, pushed by its owner. */
  async function seeded(visibility: 0 | 10 | 20 = 0, p?: TestProject): Promise<Seeded> {
    p = p ?? (await h.project(tm, visibility));
    const work = join(tmp, `w${++seq}`);
    mkdirSync(work);
    const url = cli.url(p.path_with_namespace, tm.owner.username, tm.owner.password);
    await cli.ok(['init', '-q', work]);
    await cli.commit(work, { 'README.md': '# readme\n', 'a.txt': 'one\ntwo\nthree\n' }, 'Initial commit');
    await cli.ok(['checkout', '-q', '-b', 'feature'], work);
    await cli.commit(work, { 'feature.txt': 'feature\n' }, 'Add feature');
    const f2 = await cli.commit(work, { 'feature.txt': 'feature v2\n' }, 'Improve feature\n\nFixes #1');
    await cli.ok(['checkout', '-q', '-b', 'conflict', 'master'], work);
    const c1 = await cli.commit(work, { 'a.txt': 'one\nTWO (conflict)\nthree\n' }, 'Change a on conflict');
    await cli.ok(['checkout', '-q', 'master'], work);
    const m2 = await cli.commit(work, { 'a.txt': 'one\nTWO (master)\nthree\n' }, 'Change a on master');
    await cli.ok(['push', '-q', url, 'master', 'feature', 'conflict'], work);
    return { p, work, url, m2, f2, c1 };
  }

  const P = (p: { id: number }) => `/projects/${p.id}`;

  /** The answer of the last createMr (for expectSchema). */
  let lastCreated: Response;
  async function createMr(u: TestUser, p: { id: number }, body: Json = {}): Promise<Json> {
    const res = await h.post(u, `${P(p)}/merge_requests`).send({ source_branch: 'feature', target_branch: 'master', title: `MR ${++seq}`, ...body });
    if (res.status !== 201) throw new Error(`create MR: ${res.status} ${JSON.stringify(res.body)}`);
    lastCreated = res;
    return res.body;
  }

  async function until<T>(fn: () => Promise<T>, ok: (v: T) => boolean, ms = 10_000): Promise<T> {
    const end = Date.now() + ms;
    for (;;) {
      const v = await fn();
      if (ok(v) || Date.now() > end) return v;
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  async function systemNotes(mrId: number): Promise<string[]> {
    const rows = await t.sql<{ body: string }>(`SELECT body FROM notes WHERE noteable_type = 'MergeRequest' AND noteable_id = $1 AND system ORDER BY id`, [
      mrId,
    ]);
    return rows.map((r) => r.body);
  }

  const git = (s: Seeded, ...args: string[]) => cli.ok(args, s.work);
  async function remoteTip(s: Seeded, branch: string): Promise<string | null> {
    const out = await cli.ok(['ls-remote', s.url, `refs/heads/${branch}`], s.work);
    return out.split('\t')[0] || null;
  }

  // ------------------------------------------------------------------ create, get, list

  describe('create and read', () => {
    let s: Seeded;
    beforeAll(async () => {
      s = await seeded(0);
    });

    it('creates with 201 and GitLab 8.8’s shape, iid from the project counter', async () => {
      const ms = await h.milestone(tm.owner, s.p.id);
      const mr = await createMr(tm.developer, s.p, {
        title: 'Add the feature',
        description: 'Adds it',
        labels: 'feature, ux',
        milestone_id: ms.id,
        assignee_id: tm.master.id,
      });
      await expectSchema(lastCreated, 'MergeRequest');
      expect(mr).toMatchObject({
        iid: 1,
        project_id: s.p.id,
        title: 'Add the feature',
        description: 'Adds it',
        state: 'opened',
        target_branch: 'master',
        source_branch: 'feature',
        upvotes: 0,
        downvotes: 0,
        source_project_id: s.p.id,
        target_project_id: s.p.id,
        labels: ['feature', 'ux'],
        work_in_progress: false,
        merge_when_build_succeeds: false,
        merge_status: 'unchecked',
        subscribed: true,
        user_notes_count: 0,
      });
      expect(mr.author.username).toBe(tm.developer.username);
      expect(mr.assignee.username).toBe(tm.master.username);
      expect(mr.milestone.id).toBe(ms.id);
      // issues and merge requests share nothing but the counter table: a second MR is !2
      const second = await createMr(tm.developer, s.p, { source_branch: 'conflict', title: 'WIP: conflict' });
      expect(second.iid).toBe(2);
      expect(second.work_in_progress).toBe(true);
      const events = await h.eventsOf(s.p.id);
      expect(events.some((e) => e.target_type === 'MergeRequest' && e.action_name === 'opened' && e.target_id === mr.id)).toBe(true);
    });

    it('refuses bad creates with GitLab’s statuses and bodies', async () => {
      const path = `${P(s.p)}/merge_requests`;
      const base = { source_branch: 'feature', target_branch: 'master', title: 'x' };
      expect(
        (
          await h
            .post(tm.developer, path)
            .send({ ...base, title: undefined })
            .expect(400)
        ).body,
      ).toEqual({
        message: '400 (Bad request) "title" not given',
      });
      await h
        .post(tm.developer, path)
        .send({ ...base, source_branch: undefined })
        .expect(400);
      await h
        .post(tm.developer, path)
        .send({ ...base, target_branch: ' ' })
        .expect(400);
      expect(
        (
          await h
            .post(tm.developer, path)
            .send({ ...base, title: '   ' })
            .expect(400)
        ).body,
      ).toEqual({ message: '400 (Bad request) "title" not given' });
      expect(
        (
          await h
            .post(tm.developer, path)
            .send({ ...base, source_branch: 'master' })
            .expect(422)
        ).body,
      ).toEqual({ message: '422 You can not use same project/branch for source and target' });
      expect(
        (
          await h
            .post(tm.developer, path)
            .send({ ...base, source_branch: 'nope' })
            .expect(400)
        ).body,
      ).toEqual({
        message: { source_branch: ['does not exist'] },
      });
      await h
        .post(tm.developer, path)
        .send({ ...base, target_branch: 'nope' })
        .expect(400);
      for (const bad of ['--upload-pack=touch /tmp/x', '../../etc', 'a..b', 'x\u0000y']) {
        const res = await h.post(tm.developer, path).send({ ...base, source_branch: bad });
        expect(res.status).toBe(400);
      }
      const dup = await h.post(tm.developer, path).send(base).expect(409);
      expect(dup.body.message).toMatch(/^409 Cannot Create: This merge request already exists: \["Add the feature"\]$/);
      expect(
        (
          await h
            .post(tm.developer, path)
            .send({ ...base, target_project_id: 999999 })
            .expect(422)
        ).body,
      ).toEqual({ message: '422 Source project is not a fork of target project' });
      expect(
        (
          await h
            .post(tm.developer, path)
            .send({ ...base, labels: 'a?b' })
            .expect(400)
        ).body.message.labels,
      ).toBeDefined();
    });

    it('needs create_merge_request: guest and reporter 403, stranger 404, anonymous 401', async () => {
      const path = `${P(s.p)}/merge_requests`;
      const body = { source_branch: 'conflict', target_branch: 'feature', title: 'x' };
      await h.post(tm.guest, path).send(body).expect(403);
      await h.post(tm.reporter, path).send(body).expect(403);
      await h.post(tm.stranger, path).send(body).expect(404);
      await t.http.post(`${API}${path}`).send(body).expect(401);
    });

    it('gets one by id on the plural and the legacy singular path; 404s', async () => {
      const listed = await h.get(tm.reporter, `${P(s.p)}/merge_requests`).expect(200);
      await expectSchema(listed, 'MergeRequest[]');
      const list = listed.body as Json[];
      const mr = list.find((m) => m.iid === 1)!;
      const a = (await h.get(tm.guest, `${P(s.p)}/merge_requests/${mr.id}`).expect(200)).body;
      const b = (await h.get(tm.guest, `${P(s.p)}/merge_request/${mr.id}`).expect(200)).body;
      expect(a).toEqual(b);
      expect(a.id).toBe(mr.id);
      expect(a.subscribed).toBe(false);
      // old clients' slash and encoding habits
      await h.get(tm.guest, `${P(s.p)}/merge_requests/${mr.id}/`).expect(200);
      await h.get(tm.guest, `${P(s.p)}//merge_requests//${mr.id}`).expect(200);
      await h.get(tm.guest, `/projects/${encodeURIComponent(s.p.path_with_namespace)}/merge_requests/${mr.id}`).expect(200);
      await h.get(tm.guest, `/projects/${encodeURIComponent(s.p.path_with_namespace)}/merge_request/${mr.id}`).expect(200);
      expect((await h.get(tm.guest, `${P(s.p)}/merge_requests/999999`).expect(404)).body).toEqual({ message: '404 Merge Request Not Found' });
      await h.get(tm.guest, `${P(s.p)}/merge_requests/abc`).expect(404);
      await h.get(tm.stranger, `${P(s.p)}/merge_requests/${mr.id}`).expect(404);
      await h.get(tm.stranger, `${P(s.p)}/merge_requests`).expect(404);
      await t.http.get(`${API}${P(s.p)}/merge_requests/${mr.id}`).expect(401);
      // an id of another project's merge request is not found here
      const other = await seeded(0);
      await h.get(tm.owner, `${P(other.p)}/merge_requests/${mr.id}`).expect(404);
    });

    it('routes the slash and encoding habits of old clients', async () => {
      const mr = (await h.get(tm.reporter, `${P(s.p)}/merge_requests?iid=1`).expect(200)).body[0];
      const ns = s.p.path_with_namespace;
      const forms = [
        `/projects/${s.p.id}/merge_requests/${mr.id}`,
        `/projects/${s.p.id}/merge_requests/${mr.id}/`,
        `//projects//${s.p.id}//merge_requests//${mr.id}`,
        `/projects/${s.p.id}/merge_requests/${mr.id}.json`,
        `/projects/${encodeURIComponent(ns)}/merge_requests/${mr.id}`,
        `/projects/${ns.replace('/', '%2f')}/merge_requests/${mr.id}`,
        `/projects/${s.p.id}/merge_request/${mr.id}`,
        `/projects/${s.p.id}/merge_request/${mr.id}.json`,
      ];
      for (const f of forms) expect((await h.get(tm.reporter, f).expect(200)).body.id).toBe(mr.id);
      // lists with a trailing slash and re-appended parameters
      const list = await h.get(tm.reporter, `/projects/${s.p.id}/merge_requests/?state=opened&state=opened&per_page=1&per_page=1`).expect(200);
      expect(list.body).toHaveLength(1);
      // a form-encoded write on the legacy path with extra slashes
      const res = await h.put(tm.developer, `//projects/${s.p.id}//merge_request//${mr.id}`).type('form').send({ description: 'from a form' }).expect(200);
      expect(res.body.description).toBe('from a form');
    });

    it('lists with state, iid, order_by, sort and pagination', async () => {
      const path = `${P(s.p)}/merge_requests`;
      const all = (await h.get(tm.guest, path).expect(200)).body as Json[];
      expect(all.map((m) => m.iid)).toEqual([2, 1]);
      expect((await h.get(tm.guest, `${path}?sort=asc`).expect(200)).body.map((m: Json) => m.iid)).toEqual([1, 2]);
      expect((await h.get(tm.guest, `${path}?iid=2`).expect(200)).body.map((m: Json) => m.iid)).toEqual([2]);
      expect((await h.get(tm.guest, `${path}?iid[]=1&iid[]=2`).expect(200)).body.length).toBe(2);
      expect((await h.get(tm.guest, `${path}?state=merged`).expect(200)).body).toEqual([]);
      expect((await h.get(tm.guest, `${path}?state=opened`).expect(200)).body.length).toBe(2);
      expect((await h.get(tm.guest, `${path}?state=all`).expect(200)).body.length).toBe(2);
      await h.get(tm.guest, `${path}?order_by=title`).expect(400);
      await h.get(tm.guest, `${path}?sort=sideways`).expect(400);
      await h.get(tm.guest, `${path}?iid=x`).expect(400);
      const page = await h.get(tm.guest, `${path}?per_page=1&page=2`).expect(200);
      expect(page.body.map((m: Json) => m.iid)).toEqual([1]);
      expect(page.headers['x-total']).toBe('2');
      expect(page.headers.link).toContain('rel="first"');
      // updated_at order follows the last change
      const first = all.find((m) => m.iid === 1)!;
      await h.put(tm.owner, `${path}/${first.id}`).send({ description: 'touched' }).expect(200);
      expect((await h.get(tm.guest, `${path}?order_by=updated_at`).expect(200)).body[0].iid).toBe(1);
    });
  });

  // ------------------------------------------------------------------ update, delete, subscriptions

  describe('update, delete and subscribe', () => {
    let s: Seeded;
    let mr: Json;
    beforeAll(async () => {
      s = await seeded(0);
      mr = await createMr(tm.developer, s.p, { title: 'Feature' });
    });
    const path = () => `${P(s.p)}/merge_requests/${mr.id}`;

    it('updates title, description, labels, assignee and milestone, leaving system notes', async () => {
      const ms = await h.milestone(tm.owner, s.p.id);
      const res = await h
        .put(tm.master, path())
        .send({
          title: 'WIP: Feature',
          description: 'new text',
          labels: 'a, b',
          assignee_id: tm.reporter.id,
          milestone_id: ms.id,
          created_at: '2001-01-01', // resent fields are ignored
        })
        .expect(200);
      expect(res.body).toMatchObject({ title: 'WIP: Feature', description: 'new text', labels: ['a', 'b'], work_in_progress: true });
      expect(res.body.assignee.id).toBe(tm.reporter.id);
      expect(res.body.milestone.id).toBe(ms.id);
      expect(await systemNotes(mr.id)).toEqual([
        'Changed title: **Feature** → **WIP: Feature**',
        'Marked this merge request as a **Work In Progress**',
        `Reassigned to @${tm.reporter.username}`,
        `Milestone changed to %"${ms.title}"`,
        'Added ~a ~b labels',
      ]);
      // the assignee may update it; clearing the assignee with 0
      await h.put(tm.reporter, path()).send({ title: 'Feature' }).expect(200);
      const cleared = await h.put(tm.master, path()).send({ assignee_id: 0 }).expect(200);
      expect(cleared.body.assignee).toBeNull();
    });

    it('changes the target branch (merge_status unchecked), never the source branch', async () => {
      expect((await h.put(tm.developer, path()).send({ source_branch: 'conflict' }).expect(400)).body).toEqual({
        message: '400 Source branch cannot be changed',
      });
      const res = await h.put(tm.developer, path()).send({ target_branch: 'conflict' }).expect(200);
      expect(res.body).toMatchObject({ target_branch: 'conflict', merge_status: 'unchecked' });
      expect((await h.put(tm.developer, path()).send({ target_branch: 'feature' }).expect(422)).body).toEqual({
        message: '422 You can not use same project/branch for source and target',
      });
      await h.put(tm.developer, path()).send({ target_branch: 'nope' }).expect(400);
      await h.put(tm.developer, path()).send({ target_branch: 'master' }).expect(200);
      await h.put(tm.developer, path()).send({ state_event: 'explode' }).expect(400);
    });

    it('closes and reopens (events and notes); reporter 403, stranger 404, anonymous 401', async () => {
      const closed = await h.put(tm.developer, path()).send({ state_event: 'close' }).expect(200);
      expect(closed.body.state).toBe('closed');
      expect((await h.get(tm.guest, `${P(s.p)}/merge_requests?state=closed`).expect(200)).body.map((m: Json) => m.id)).toEqual([mr.id]);
      // a second open request for the same branches is fine while this one is closed; reopening it then conflicts
      const again = await createMr(tm.developer, s.p);
      await h.put(tm.developer, path()).send({ state_event: 'reopen' }).expect(409);
      await h
        .put(tm.owner, `${P(s.p)}/merge_requests/${again.id}`)
        .send({ state_event: 'close' })
        .expect(200);
      const reopened = await h.put(tm.developer, path()).send({ state_event: 'reopen' }).expect(200);
      expect(reopened.body).toMatchObject({ state: 'opened', merge_status: 'unchecked' });
      const actions = (await h.eventsOf(s.p.id)).filter((e) => e.target_id === mr.id).map((e) => e.action_name);
      expect(actions).toEqual(expect.arrayContaining(['opened', 'closed']));
      expect(await systemNotes(mr.id)).toEqual(expect.arrayContaining(['Status changed to closed', 'Status changed to reopened']));
      await h.put(tm.guest, path()).send({ title: 'x' }).expect(403);
      await h.put(tm.stranger, path()).send({ title: 'x' }).expect(404);
      await t.http.put(`${API}${path()}`).send({ title: 'x' }).expect(401);
      await h
        .put(tm.developer, `${P(s.p)}/merge_request/${mr.id}`)
        .send({ title: 'Legacy path' })
        .expect(200);
    });

    it('subscribes 201/304 and unsubscribes 200/304 (the author is a participant)', async () => {
      await h.post(tm.developer, `${path()}/subscription`).expect(304);
      const sub = await h.post(tm.guest, `${path()}/subscription`).expect(201);
      expect(sub.body.subscribed).toBe(true);
      await h.post(tm.guest, `${path()}/subscription`).expect(304);
      const unsub = await h.del(tm.guest, `${path()}/subscription`).expect(200);
      expect(unsub.body.subscribed).toBe(false);
      await h.del(tm.guest, `${path()}/subscription`).expect(304);
      await h.post(tm.guest, `${P(s.p)}/merge_request/${mr.id}/subscription`).expect(201);
      await h.post(tm.stranger, `${path()}/subscription`).expect(404);
      await h.post(tm.reporter, `${P(s.p)}/merge_requests/999999/subscription`).expect(404);
    });

    it('deletes softly for owners and admins only; 404 when absent', async () => {
      const other = await createMr(tm.developer, s.p, { source_branch: 'conflict' });
      const p2 = `${P(s.p)}/merge_requests/${other.id}`;
      await h.del(tm.master, p2).expect(403);
      await h.del(tm.stranger, p2).expect(404);
      const res = await h.del(tm.owner, p2).expect(200);
      await expectSchema(res, 'MergeRequestRecord');
      expect(res.body).toMatchObject({ id: other.id, iid: other.iid, title: other.title });
      expect(res.body.deleted_at).not.toBeNull();
      await h.del(tm.owner, p2).expect(404);
      await h.get(tm.owner, p2).expect(404);
      await h.del(t.root, `${P(s.p)}/merge_request/${mr.id}`).expect(200);
    });
  });

  // ------------------------------------------------------------------ commits and changes

  describe('commits and changes', () => {
    let s: Seeded;
    let mr: Json;
    beforeAll(async () => {
      s = await seeded(0);
      mr = await createMr(tm.developer, s.p);
    });

    it('lists the source commits not on the target, newest first', async () => {
      for (const path of ['merge_requests', 'merge_request']) {
        const res = await h.get(tm.reporter, `${P(s.p)}/${path}/${mr.id}/commits`).expect(200);
        expect(res.body.map((c: Json) => c.title)).toEqual(['Improve feature', 'Add feature']);
        expect(res.body[0]).toMatchObject({ id: s.f2, short_id: s.f2.slice(0, 8), message: 'Improve feature\n\nFixes #1\n', author_name: 'Git Tester' });
      }
      // the same range, remembered once for both: compare lists it oldest first, and that does not change the order above
      const compare = await h.get(tm.reporter, `${P(s.p)}/repository/compare?from=master&to=feature`).expect(200);
      expect(compare.body.commits.map((c: Json) => c.title)).toEqual(['Add feature', 'Improve feature']);
      expect((await h.get(tm.reporter, `${P(s.p)}/merge_requests/${mr.id}/commits`).expect(200)).body.map((c: Json) => c.title)).toEqual([
        'Improve feature',
        'Add feature',
      ]);
      await h.get(tm.stranger, `${P(s.p)}/merge_requests/${mr.id}/commits`).expect(404);
      // a guest of a private project may read the merge request but not its code
      await h.get(tm.guest, `${P(s.p)}/merge_requests/${mr.id}/commits`).expect(403);
      await h.get(tm.guest, `${P(s.p)}/merge_requests/${mr.id}/changes`).expect(403);
      await h.get(tm.reporter, `${P(s.p)}/merge_requests/999999/commits`).expect(404);
      await t.http.get(`${API}${P(s.p)}/merge_requests/${mr.id}/commits`).expect(401);
    });

    it('shows the changes from the merge base, with the diff entry fields and the compare caps', async () => {
      const res = await h.get(tm.reporter, `${P(s.p)}/merge_requests/${mr.id}/changes`).expect(200);
      await expectSchema(res, 'MergeRequestChanges');
      expect(res.body.created_at).toBeDefined();
      expect(res.body.changes).toHaveLength(1);
      expect(res.body.changes[0]).toMatchObject({
        old_path: 'feature.txt',
        new_path: 'feature.txt',
        a_mode: '0',
        b_mode: '100644',
        new_file: true,
        renamed_file: false,
        deleted_file: false,
        too_large: false,
      });
      expect(res.body.changes[0].diff).toContain('+feature v2');
      // master's own change is not part of it
      expect(JSON.stringify(res.body.changes)).not.toContain('TWO (master)');
      await h.get(tm.stranger, `${P(s.p)}/merge_requests/${mr.id}/changes`).expect(404);
      await h.get(tm.reporter, `${P(s.p)}/merge_request/${mr.id}/changes`).expect(200);
    });

    it('follows pushes to the source branch', async () => {
      await git(s, 'checkout', '-q', 'feature');
      const f3 = await cli.commit(s.work, { 'more.txt': 'more\n' }, 'More');
      await git(s, 'push', '-q', s.url, 'feature');
      await git(s, 'checkout', '-q', 'master');
      const commits = (await h.get(tm.reporter, `${P(s.p)}/merge_requests/${mr.id}/commits`).expect(200)).body;
      expect(commits[0].id).toBe(f3);
      const changes = (await h.get(tm.reporter, `${P(s.p)}/merge_requests/${mr.id}/changes`).expect(200)).body.changes;
      expect(changes.map((c: Json) => c.new_path)).toEqual(['feature.txt', 'more.txt']);
    });
  });

  // ------------------------------------------------------------------ merge

  describe('merge', () => {
    it('merges with a merge commit by the merging user and GitLab’s default message', async () => {
      const s = await seeded(0);
      const mr = await createMr(tm.developer, s.p, { title: 'Feature', description: 'Long text' });
      const res = await h.put(tm.master, `${P(s.p)}/merge_requests/${mr.id}/merge`).expect(200);
      expect(res.body).toMatchObject({ state: 'merged', merge_status: 'can_be_merged' });
      await git(s, 'fetch', '-q', s.url, 'master');
      const tip = (await git(s, 'rev-parse', 'FETCH_HEAD')).trim();
      expect(tip).toMatch(SHA);
      expect((await git(s, 'rev-parse', `${tip}^1`)).trim()).toBe(s.m2);
      expect((await git(s, 'rev-parse', `${tip}^2`)).trim()).toBe(s.f2);
      expect(await git(s, 'log', '-1', '--format=%an <%ae>%n%cn <%ce>', tip)).toBe(
        `master ${tm.owner.username.replace('owner', '')} <${tm.master.email}>\nmaster ${tm.owner.username.replace('owner', '')} <${tm.master.email}>\n`,
      );
      expect(await git(s, 'log', '-1', '--format=%B', tip)).toBe(
        `Merge branch 'feature' into 'master'\n\nFeature\n\nLong text\n\nSee merge request !${mr.iid}\n`,
      );
      // the merged tree has both sides
      expect(await git(s, 'show', `${tip}:feature.txt`)).toBe('feature v2\n');
      expect(await git(s, 'show', `${tip}:a.txt`)).toContain('TWO (master)');
      // merged: 405 again; event and note
      expect((await h.put(tm.master, `${P(s.p)}/merge_requests/${mr.id}/merge`).expect(405)).body).toEqual({ message: '405 Method Not Allowed' });
      expect((await h.get(tm.guest, `${P(s.p)}/merge_requests?state=merged`).expect(200)).body.map((m: Json) => m.id)).toEqual([mr.id]);
      const events = await h.eventsOf(s.p.id);
      expect(events.some((e) => e.action_name === 'accepted' && e.target_id === mr.id)).toBe(true);
      expect(await systemNotes(mr.id)).toContain('Status changed to merged');
      // after the merge, commits and changes still show what was merged
      expect((await h.get(tm.reporter, `${P(s.p)}/merge_requests/${mr.id}/commits`).expect(200)).body).toHaveLength(2);
      expect((await h.get(tm.reporter, `${P(s.p)}/merge_requests/${mr.id}/changes`).expect(200)).body.changes).toHaveLength(1);
    });

    it('takes merge_commit_message and should_remove_source_branch; legacy path and state_event=merge', async () => {
      const s = await seeded(0);
      const mr = await createMr(tm.developer, s.p);
      await h
        .put(tm.developer, `${P(s.p)}/merge_request/${mr.id}/merge`)
        .send({ merge_commit_message: 'Custom message', should_remove_source_branch: 'true' })
        .expect(200);
      await git(s, 'fetch', '-q', s.url, 'master');
      expect(await git(s, 'log', '-1', '--format=%B', 'FETCH_HEAD')).toBe('Custom message\n');
      expect(await remoteTip(s, 'feature')).toBeNull();
      // should_remove_source_branch=false keeps it; state_event=merge merges like PUT .../merge
      const mr2 = await createMr(tm.developer, s.p, { source_branch: 'conflict', target_branch: 'feature-gone' }).catch(() => null);
      expect(mr2).toBeNull();
      await git(s, 'checkout', '-q', '-b', 'side', 'master');
      await cli.commit(s.work, { 'side.txt': 'side\n' }, 'Side');
      await git(s, 'push', '-q', s.url, 'side');
      await git(s, 'checkout', '-q', 'master');
      const mr3 = await createMr(tm.developer, s.p, { source_branch: 'side' });
      const res = await h
        .put(tm.developer, `${P(s.p)}/merge_requests/${mr3.id}`)
        .send({ state_event: 'merge', should_remove_source_branch: false })
        .expect(200);
      expect(res.body.state).toBe('merged');
      expect(await remoteTip(s, 'side')).toMatch(SHA);
    });

    it('refuses conflicts with 405 Branch cannot be merged and marks cannot_be_merged', async () => {
      const s = await seeded(0);
      const mr = await createMr(tm.developer, s.p, { source_branch: 'conflict' });
      const before = await remoteTip(s, 'master');
      expect((await h.put(tm.master, `${P(s.p)}/merge_requests/${mr.id}/merge`).expect(405)).body).toEqual({ message: '405 Branch cannot be merged' });
      expect(await remoteTip(s, 'master')).toBe(before);
      const after = (await h.get(tm.guest, `${P(s.p)}/merge_requests/${mr.id}`).expect(200)).body;
      expect(after).toMatchObject({ state: 'opened', merge_status: 'cannot_be_merged' });
    });

    it('refuses closed and WIP with 405; 401 without push rights (reporter, protected branch); 404 for strangers', async () => {
      const s = await seeded(0);
      const mr = await createMr(tm.developer, s.p);
      const merge = (u: TestUser) => h.put(u, `${P(s.p)}/merge_requests/${mr.id}/merge`);
      expect((await merge(tm.reporter).expect(401)).body).toEqual({ message: '401 Unauthorized' });
      await merge(tm.guest).expect(401);
      await merge(tm.stranger).expect(404);
      await t.http.put(`${API}${P(s.p)}/merge_requests/${mr.id}/merge`).expect(401);
      // master came protected with developers_can_push (default_branch_protection 1); protecting again keeps a flag not given (8.17)
      await h
        .put(tm.owner, `${P(s.p)}/repository/branches/master/protect`)
        .send({ developers_can_push: false })
        .expect(200);
      await merge(tm.developer).expect(401);
      await h
        .put(tm.developer, `${P(s.p)}/merge_requests/${mr.id}`)
        .send({ title: 'WIP: not yet' })
        .expect(200);
      expect((await merge(tm.master).expect(405)).body).toEqual({ message: '405 Method Not Allowed' });
      await h
        .put(tm.developer, `${P(s.p)}/merge_requests/${mr.id}`)
        .send({ title: 'Ready', state_event: 'close' })
        .expect(200);
      await merge(tm.master).expect(405);
      await h.put(tm.master, `${P(s.p)}/merge_requests/999999/merge`).expect(404);
    });

    it('two concurrent merges: one 200, one 405, one merge commit', async () => {
      const s = await seeded(0);
      const mr = await createMr(tm.developer, s.p);
      const results = await Promise.all([1, 2].map(() => h.put(tm.master, `${P(s.p)}/merge_requests/${mr.id}/merge`)));
      expect(results.map((r) => r.status).sort()).toEqual([200, 405]);
      await git(s, 'fetch', '-q', s.url, 'master');
      expect(await git(s, 'rev-list', '--merges', '--count', 'FETCH_HEAD')).toBe('1\n');
    });

    it('never overwrites a push that lands between the check and the update', async () => {
      const s = await seeded(0);
      const mr = await createMr(tm.developer, s.p);
      // pushes to master race the merge: whatever the order, every pushed commit stays on master
      await git(s, 'checkout', '-q', 'master');
      const pushed: string[] = [];
      const pusher = (async () => {
        for (let i = 0; i < 3; i++) {
          pushed.push(await cli.commit(s.work, { [`race${i}.txt`]: `${i}\n` }, `Race ${i}`));
          const r = await cli.run(['push', '-q', s.url, 'master'], s.work);
          if (r.code !== 0) {
            // the merge moved master first: rebase on it and push again
            await git(s, 'pull', '-q', '--rebase', s.url, 'master');
            pushed[pushed.length - 1] = (await git(s, 'rev-parse', 'HEAD')).trim();
            await git(s, 'push', '-q', s.url, 'master');
          }
        }
      })();
      const res = await h.put(tm.master, `${P(s.p)}/merge_requests/${mr.id}/merge`);
      await pusher;
      expect([200, 405]).toContain(res.status);
      await git(s, 'fetch', '-q', s.url, 'master');
      const tip = (await git(s, 'rev-parse', 'FETCH_HEAD')).trim();
      for (const c of pushed) expect((await cli.run(['merge-base', '--is-ancestor', c, tip], s.work)).code).toBe(0);
      if (res.status === 200) expect((await cli.run(['merge-base', '--is-ancestor', s.f2, tip], s.work)).code).toBe(0);
    });

    it('a write landing exactly between the check and the update: the CAS fails, the merge is redone on the new tip', async () => {
      const s = await seeded(0);
      const mr = await createMr(tm.developer, s.p);
      const mrGit = t.app.app.get(MergeRequestGit, { strict: false });
      const original = mrGit.heads.bind(mrGit);
      let pushed: string | undefined;
      // The first time the merge reads the branch tips, master moves right after. Pushes wait for the
      // repository lock the merge holds, so this is a write that did not take it (as when the lock's
      // connection was lost): the ref update's compare-and-swap is what must still protect it.
      const repo = t.app.app.get(GitService).repository(s.p.id);
      const spy = jest.spyOn(mrGit, 'heads').mockImplementation(async (m) => {
        const heads = await original(m);
        if (!pushed) {
          const master = await repo.branch(parseRef('master')!);
          pushed = await repo.commitFiles({
            branch: parseRef('master')!,
            parent: master!.commit.id,
            message: 'Pushed in between',
            author: { name: 'Someone', email: 'someone@example.com' },
            changes: [{ action: 'create', path: parseRepoPath('between.txt')!, content: Buffer.from('between\n') }],
          });
        }
        return heads;
      });
      let reads: number;
      try {
        await h.put(tm.master, `${P(s.p)}/merge_requests/${mr.id}/merge`).expect(200);
        reads = spy.mock.calls.length;
      } finally {
        spy.mockRestore();
      }
      // read, CAS refused, read again, merged (the push's own merge_status recheck reads too)
      expect(reads).toBeGreaterThanOrEqual(2);
      await git(s, 'fetch', '-q', s.url, 'master');
      const tip = (await git(s, 'rev-parse', 'FETCH_HEAD')).trim();
      expect((await git(s, 'rev-list', '--parents', '-n', '1', tip)).trim()).toBe(`${tip} ${pushed} ${s.f2}`);
    });

    it('merges from a fork into its upstream (the fork’s commits fetched first)', async () => {
      const s = await seeded(10);
      const fork = (await h.post(tm.stranger, `/projects/fork/${s.p.id}`).expect(201)).body;
      const forkUrl = cli.url(fork.path_with_namespace, tm.stranger.username, tm.stranger.password);
      await git(s, 'checkout', '-q', '-b', 'from-fork', 'master');
      const own = await cli.commit(s.work, { 'fork.txt': 'from the fork\n' }, 'Fork work');
      await git(s, 'push', '-q', forkUrl, 'from-fork');
      await git(s, 'checkout', '-q', 'master');
      const body = { source_branch: 'from-fork', target_branch: 'master', title: 'From fork' };
      expect(
        (
          await h
            .post(tm.stranger, `/projects/${fork.id}/merge_requests`)
            .send({ ...body, target_project_id: fork.id + 1000 })
            .expect(422)
        ).body,
      ).toEqual({ message: '422 Source project is not a fork of target project' });
      const mr = (
        await h
          .post(tm.stranger, `/projects/${fork.id}/merge_requests`)
          .send({ ...body, target_project_id: s.p.id })
          .expect(201)
      ).body;
      expect(mr).toMatchObject({ project_id: s.p.id, source_project_id: fork.id, target_project_id: s.p.id, iid: 1 });
      const commits = (await h.get(tm.reporter, `${P(s.p)}/merge_requests/${mr.id}/commits`).expect(200)).body;
      expect(commits.map((c: Json) => c.id)).toEqual([own]);
      // the fork's author may not merge into upstream; a master may
      await h.put(tm.stranger, `${P(s.p)}/merge_requests/${mr.id}/merge`).expect(401);
      await h.put(tm.master, `${P(s.p)}/merge_requests/${mr.id}/merge`).expect(200);
      await git(s, 'fetch', '-q', s.url, 'master');
      expect(await git(s, 'show', 'FETCH_HEAD:fork.txt')).toBe('from the fork\n');
    });

    it('keeps the merge requests of a deleted fork in the upstream, with no source to merge', async () => {
      const s = await seeded(10);
      const fork = (await h.post(tm.stranger, `/projects/fork/${s.p.id}`).expect(201)).body;
      const mr = (
        await h
          .post(tm.stranger, `/projects/${fork.id}/merge_requests`)
          .send({ source_branch: 'feature', target_branch: 'master', title: 'Gone soon', target_project_id: s.p.id })
          .expect(201)
      ).body;
      await h.del(tm.stranger, `/projects/${fork.id}`).expect(200);
      const got = (await h.get(tm.reporter, `${P(s.p)}/merge_requests/${mr.id}`).expect(200)).body;
      expect(got).toMatchObject({ source_project_id: null, target_project_id: s.p.id, state: 'opened' });
      expect((await h.get(tm.reporter, `${P(s.p)}/merge_requests/${mr.id}/commits`).expect(200)).body).toEqual([]);
      expect((await h.put(tm.master, `${P(s.p)}/merge_requests/${mr.id}/merge`).expect(405)).body).toEqual({ message: '405 Branch cannot be merged' });
    });

    it('keeps merge_status: unchecked after pushes, rechecked in the background', async () => {
      const s = await seeded(0);
      const ok = await createMr(tm.developer, s.p);
      const bad = await createMr(tm.developer, s.p, { source_branch: 'conflict' });
      await git(s, 'checkout', '-q', 'master');
      await cli.commit(s.work, { 'new.txt': 'new\n' }, 'New on master');
      await git(s, 'push', '-q', s.url, 'master');
      const get = (id: number) =>
        h
          .get(tm.guest, `${P(s.p)}/merge_requests/${id}`)
          .expect(200)
          .then((r) => r.body.merge_status);
      expect(
        await until(
          () => get(ok.id),
          (v) => v !== 'unchecked',
        ),
      ).toBe('can_be_merged');
      expect(
        await until(
          () => get(bad.id),
          (v) => v !== 'unchecked',
        ),
      ).toBe('cannot_be_merged');
    });
  });

  // ------------------------------------------------------------------ notes and comments

  describe('notes and comments', () => {
    let s: Seeded;
    let mr: Json;
    beforeAll(async () => {
      s = await seeded(0);
      mr = await createMr(tm.developer, s.p, { title: 'Discuss me' });
    });
    const path = () => `${P(s.p)}/merge_requests/${mr.id}`;

    it('creates, lists, edits and deletes notes like every noteable (noteable_type MergeRequest)', async () => {
      const created = await h.post(tm.guest, `${path()}/notes`).send({ body: 'Looks good' }).expect(201);
      expect(created.body).toMatchObject({ body: 'Looks good', system: false, noteable_id: mr.id, noteable_type: 'MergeRequest', upvote: false });
      const events = await h.eventsOf(s.p.id);
      expect(events.find((e) => e.target_id === created.body.id)).toMatchObject({ action_name: 'commented on', target_title: 'Discuss me' });
      const list = (await h.get(tm.guest, `${path()}/notes`).expect(200)).body as Json[];
      expect(list.map((n) => n.body)).toEqual(['Looks good']);
      await h.get(tm.guest, `${path()}/notes/${created.body.id}`).expect(200);
      await h.get(tm.guest, `${P(s.p)}/merge_request/${mr.id}/notes`).expect(200);
      await h.put(tm.guest, `${path()}/notes/${created.body.id}`).send({ body: 'Looks great' }).expect(200);
      await h.put(tm.reporter, `${path()}/notes/${created.body.id}`).send({ body: 'no' }).expect(403);
      await h.post(tm.guest, `${path()}/notes`).expect(400);
      await h.get(tm.stranger, `${path()}/notes`).expect(404);
      await h.post(tm.stranger, `${path()}/notes`).send({ body: 'x' }).expect(404);
      await t.http.get(`${API}${path()}/notes`).expect(401);
      await h.get(tm.guest, `${P(s.p)}/merge_requests/999999/notes`).expect(404);
      // an unknown noteable kind is an unknown route
      await h.get(tm.guest, `${P(s.p)}/pipelines/${mr.id}/notes`).expect(404);
      const del = await h.del(tm.guest, `${path()}/notes/${created.body.id}`).expect(200);
      expect(del.body.body).toBe('Looks great');
      await h.del(tm.guest, `${path()}/notes/${created.body.id}`).expect(404);
    });

    it('a note touches the merge request (updated_at)', async () => {
      await t.sql(`UPDATE merge_requests SET updated_at = '2001-01-01T00:00:00Z' WHERE id = $1`, [mr.id]);
      const created = await h.post(tm.guest, `${path()}/notes`).send({ body: 'touching' }).expect(201);
      const got = (await h.get(tm.guest, path()).expect(200)).body;
      expect(new Date(got.updated_at).getTime()).toBeGreaterThanOrEqual(new Date(created.body.created_at).getTime());
      await h.del(tm.guest, `${path()}/notes/${created.body.id}`).expect(200);
    });

    it('counts award notes in upvotes/downvotes and people’s notes in user_notes_count; commenters are subscribed', async () => {
      await h.post(tm.guest, `${path()}/notes`).send({ body: '+1' }).expect(201);
      await h.post(tm.reporter, `${path()}/notes`).send({ body: ':thumbsup:' }).expect(201);
      await h.post(tm.master, `${path()}/notes`).send({ body: '-1' }).expect(201);
      const got = (await h.get(tm.reporter, path()).expect(200)).body;
      expect(got).toMatchObject({ upvotes: 2, downvotes: 1, user_notes_count: 3, subscribed: true });
      // system notes do not count
      await h.put(tm.developer, path()).send({ title: 'Discuss me more' }).expect(200);
      expect((await h.get(tm.reporter, path()).expect(200)).body.user_notes_count).toBe(3);
      await h.post(tm.reporter, `${path()}/subscription`).expect(304);
    });

    it('answers the legacy comments routes with {note, author}', async () => {
      for (const base of [path(), `${P(s.p)}/merge_request/${mr.id}`]) {
        const res = await h.post(tm.guest, `${base}/comments`).send({ note: 'Old client says hi' }).expect(201);
        await expectSchema(res, 'MergeRequestComment');
        expect(Object.keys(res.body)).toEqual(['note', 'author']);
        expect(res.body.note).toBe('Old client says hi');
        expect(res.body.author.username).toBe(tm.guest.username);
        // an author object like every other (decision 18): created_at, and no email for a non-administrator
        expect(res.body.author.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T/);
        expect(res.body.author).not.toHaveProperty('email');
      }
      const asAdmin = await h.get(tm.admin, `${path()}/comments?per_page=100`).expect(200);
      expect(asAdmin.body.find((c: Json) => c.note === 'Old client says hi').author).toMatchObject({ username: tm.guest.username, email: tm.guest.email });
      expect((await h.post(tm.guest, `${path()}/comments`).send({ body: 'wrong field' }).expect(400)).body).toEqual({
        message: '400 (Bad request) "note" not given',
      });
      const list = await h.get(tm.guest, `${path()}/comments?per_page=100`).expect(200);
      expect(list.body.filter((c: Json) => c.note === 'Old client says hi')).toHaveLength(2);
      expect(list.headers['x-total']).toBeDefined();
      await h.get(tm.stranger, `${path()}/comments`).expect(404);
      // issues never had comments routes
      const issue = await h.issue(tm.owner, s.p.id);
      await h.get(tm.guest, `${P(s.p)}/issues/${issue.id}/comments`).expect(404);
    });
  });

  // ------------------------------------------------------------------ merge when build succeeds

  describe('merge when build succeeds', () => {
    const status = (u: TestUser, p: { id: number }, sha: string, state: string, name = 'ci') =>
      h
        .post(u, `${P(p)}/statuses/${sha}`)
        .send({ state, name, ref: 'feature' })
        .expect(201);
    const get = (p: { id: number }, id: number) =>
      h
        .get(tm.reporter, `${P(p)}/merge_requests/${id}`)
        .expect(200)
        .then((r) => r.body as Json);

    it('waits while the head’s statuses are pending or running, merges when they all succeed', async () => {
      const s = await seeded(0);
      const mr = await createMr(tm.developer, s.p, { title: 'Auto' });
      await status(tm.developer, s.p, s.f2, 'pending', 'build');
      await status(tm.developer, s.p, s.f2, 'running', 'test');
      const res = await h
        .put(tm.master, `${P(s.p)}/merge_requests/${mr.id}/merge`)
        .send({ merge_when_build_succeeds: 'true', should_remove_source_branch: true })
        .expect(200);
      expect(res.body).toMatchObject({ state: 'opened', merge_when_build_succeeds: true });
      expect(await systemNotes(mr.id)).toContain(`Enabled an automatic merge when the build for ${s.f2} succeeds`);
      // one success is not enough while another status still runs
      await status(tm.developer, s.p, s.f2, 'success', 'build');
      await new Promise((r) => setTimeout(r, 300));
      expect((await get(s.p, mr.id)).state).toBe('opened');
      await status(tm.developer, s.p, s.f2, 'success', 'test');
      const done = await until(
        () => get(s.p, mr.id),
        (m) => m.state === 'merged',
      );
      expect(done).toMatchObject({ state: 'merged', merge_when_build_succeeds: false });
      await git(s, 'fetch', '-q', s.url, 'master');
      expect(await git(s, 'log', '-1', '--format=%an|%P', 'FETCH_HEAD')).toBe(`master ${tm.owner.username.replace('owner', '')}|${s.m2} ${s.f2}\n`);
      // the stored parameters were used: the source branch is gone
      expect(await remoteTip(s, 'feature')).toBeNull();
    });

    it('keeps a failed build open and waiting; accepts merged_when_build_succeeds; merges at once without a running build', async () => {
      const s = await seeded(0);
      const mr = await createMr(tm.developer, s.p);
      await status(tm.developer, s.p, s.f2, 'running');
      await h
        .put(tm.master, `${P(s.p)}/merge_requests/${mr.id}/merge`)
        .send({ merged_when_build_succeeds: true })
        .expect(200);
      await status(tm.developer, s.p, s.f2, 'failed');
      await new Promise((r) => setTimeout(r, 300));
      expect(await get(s.p, mr.id)).toMatchObject({ state: 'opened', merge_when_build_succeeds: true });
      // statuses of another commit do not count
      await status(tm.developer, s.p, s.m2, 'success');
      await new Promise((r) => setTimeout(r, 300));
      expect((await get(s.p, mr.id)).state).toBe('opened');

      const s2 = await seeded(0);
      const mr2 = await createMr(tm.developer, s2.p);
      const now = await h
        .put(tm.master, `${P(s2.p)}/merge_requests/${mr2.id}/merge`)
        .send({ merge_when_build_succeeds: true })
        .expect(200);
      expect(now.body.state).toBe('merged');
    });

    it('cancels with PUT or POST: 200, then 406; 401 for others; 405 when not open', async () => {
      const s = await seeded(0);
      const mr = await createMr(tm.developer, s.p);
      const cancel = (u: TestUser, how: 'put' | 'post' = 'put', legacy = false) =>
        h[how](u, `${P(s.p)}/${legacy ? 'merge_request' : 'merge_requests'}/${mr.id}/cancel_merge_when_build_succeeds`);
      expect((await cancel(tm.master).expect(406)).body).toEqual({ message: '406 Not Acceptable' });
      await status(tm.developer, s.p, s.f2, 'pending');
      await h
        .put(tm.master, `${P(s.p)}/merge_requests/${mr.id}/merge`)
        .send({ merge_when_build_succeeds: true })
        .expect(200);
      await cancel(tm.reporter).expect(401);
      await cancel(tm.stranger).expect(404);
      await t.http.put(`${API}${P(s.p)}/merge_requests/${mr.id}/cancel_merge_when_build_succeeds`).expect(401);
      const res = await cancel(tm.master, 'post').expect(200);
      expect(res.body).toMatchObject({ state: 'opened', merge_when_build_succeeds: false });
      expect(await systemNotes(mr.id)).toContain('Canceled the automatic merge');
      await cancel(tm.master, 'put', true).expect(406);
      // the author may cancel too; a cancelled merge is not done when the build succeeds
      await h
        .put(tm.master, `${P(s.p)}/merge_requests/${mr.id}/merge`)
        .send({ merge_when_build_succeeds: true })
        .expect(200);
      await cancel(tm.developer, 'put').expect(200);
      await status(tm.developer, s.p, s.f2, 'success');
      await new Promise((r) => setTimeout(r, 300));
      expect((await get(s.p, mr.id)).state).toBe('opened');
      await h
        .put(tm.developer, `${P(s.p)}/merge_requests/${mr.id}`)
        .send({ state_event: 'close' })
        .expect(200);
      await cancel(tm.master).expect(405);
    });
  });

  // ------------------------------------------------------------------ closing issues

  describe('closes_issues', () => {
    it('lists the issues named by closing phrases when targeting the default branch, visible ones only', async () => {
      const s = await seeded(20);
      const one = await h.issue(tm.owner, s.p.id, { title: 'First' });
      const two = await h.issue(tm.owner, s.p.id, { title: 'Second' });
      await h.issue(tm.owner, s.p.id, { title: 'Third (not named)' });
      const priv = await h.project(tm, 0);
      const hidden = await h.issue(tm.owner, priv.id, { title: 'Private' });
      const mr = await createMr(tm.developer, s.p, {
        description: `Resolves #${two.iid} and closes ${priv.path_with_namespace}#${hidden.iid}`,
      });
      // "Fixes #1" comes from a commit message, #2 from the description
      const path = `${P(s.p)}/merge_requests/${mr.id}/closes_issues`;
      const asStranger = (await h.get(tm.stranger, path).expect(200)).body as Json[];
      expect(asStranger.map((i) => i.id).sort()).toEqual([one.id, two.id].sort());
      expect(asStranger.map((i) => i.title).sort()).toEqual(['First', 'Second']);
      expect(Object.keys(asStranger[0])).toContain('user_notes_count');
      const asOwner = (await h.get(tm.owner, path).expect(200)).body as Json[];
      expect(asOwner.map((i) => i.title).sort()).toEqual(['First', 'Private', 'Second']);
      const paged = await h.get(tm.owner, `${path}?per_page=1`).expect(200);
      expect(paged.body).toHaveLength(1);
      expect(paged.headers['x-total']).toBe('3');
      await h.get(tm.owner, `${P(s.p)}/merge_request/${mr.id}/closes_issues`).expect(200);
      await h.get(tm.owner, `${P(s.p)}/merge_requests/999999/closes_issues`).expect(404);
      // not targeting the default branch: nothing
      const side = await createMr(tm.developer, s.p, { source_branch: 'feature', target_branch: 'conflict', description: `Closes #${two.iid}` });
      expect((await h.get(tm.owner, `${P(s.p)}/merge_requests/${side.id}/closes_issues`).expect(200)).body).toEqual([]);
    });

    it('resolves all references at once: the same statements for one issue or many across projects; each issue once, readable ones only', async () => {
      const s = await seeded(20);
      const first = await h.issue(tm.owner, s.p.id, { title: 'Named by the commit' });
      const labelled = await h.issue(tm.owner, s.p.id, { title: 'Labelled', labels: 'zeta,Alpha' });
      const secret = await h.issue(tm.owner, s.p.id, { title: 'Confidential', confidential: true });
      const gone = await h.issue(tm.owner, s.p.id, { title: 'Deleted' });
      await h.del(tm.owner, `/projects/${s.p.id}/issues/${gone.id}`).expect(200);
      const other = await h.project(tm, 20);
      const elsewhere = await h.issue(tm.owner, other.id, { title: 'Elsewhere' });
      const priv = await h.project(tm, 0);
      const hidden = await h.issue(tm.owner, priv.id, { title: 'Private' });
      const mr = await createMr(tm.developer, s.p, { description: 'Nothing named here' });
      const path = `${P(s.p)}/merge_requests/${mr.id}/closes_issues`;
      const one = await h.measure(async () => expect((await h.get(tm.stranger, path).expect(200)).body).toHaveLength(1));
      await h
        .put(tm.developer, `${P(s.p)}/merge_requests/${mr.id}`)
        .send({
          description:
            `Closes #${labelled.iid}, #${secret.iid}, #${gone.iid}, ${other.path_with_namespace.toUpperCase()}#${elsewhere.iid}, ` +
            `${priv.path_with_namespace}#${hidden.iid} and nobody/nothing#1. Also fixes http://gitlab.test/${other.path_with_namespace}/issues/${elsewhere.iid}`,
        })
        .expect(200);
      let body: Json[] = [];
      const many = await h.measure(async () => (body = (await h.get(tm.stranger, path).expect(200)).body));
      expect(many).toBe(one);
      // the current project's issues first (by iid), then the other projects' in order of mention
      expect(body.map((i) => i.id)).toEqual([first.id, labelled.id, elsewhere.id]);
      expect(body[1].labels).toEqual(['Alpha', 'zeta']);
      const asOwner = (await h.get(tm.owner, path).expect(200)).body as Json[];
      expect(asOwner.map((i) => i.id)).toEqual([first.id, labelled.id, secret.id, elsewhere.id, hidden.id]);
    });

    it('merging closes them with a system note; pushing such commits to the default branch closes them too', async () => {
      const s = await seeded(0);
      const one = await h.issue(tm.owner, s.p.id, { title: 'Named by a commit' });
      const two = await h.issue(tm.owner, s.p.id, { title: 'Named by the description' });
      const mr = await createMr(tm.developer, s.p, { description: `Closes #${two.iid}` });
      await h.put(tm.master, `${P(s.p)}/merge_requests/${mr.id}/merge`).expect(200);
      for (const i of [one, two]) {
        const got = (await h.get(tm.owner, `/projects/${s.p.id}/issues/${i.id}`).expect(200)).body;
        expect(got.state).toBe('closed');
        const notes = (await h.get(tm.owner, `/projects/${s.p.id}/issues/${i.id}/notes`).expect(200)).body as Json[];
        expect(notes.some((n) => n.system && n.body === 'Status changed to closed')).toBe(true);
      }
      // a push straight to master
      const three = await h.issue(tm.owner, s.p.id, { title: 'Named by a pushed commit' });
      const four = await h.issue(tm.owner, s.p.id, { title: 'Only mentioned' });
      await git(s, 'checkout', '-q', 'master');
      await git(s, 'pull', '-q', s.url, 'master');
      await cli.commit(s.work, { 'fix.txt': 'fix\n' }, `Repair things\n\nfixes #${three.iid}, see #${four.iid}`);
      await git(s, 'push', '-q', s.url, 'master');
      const closed = await until(
        () =>
          h
            .get(tm.owner, `/projects/${s.p.id}/issues/${three.id}`)
            .expect(200)
            .then((r) => r.body.state),
        (v) => v === 'closed',
      );
      expect(closed).toBe('closed');
      expect((await h.get(tm.owner, `/projects/${s.p.id}/issues/${four.id}`).expect(200)).body.state).toBe('opened');
    });
  });

  // ------------------------------------------------------------------ query counts

  it('lists merge requests with a constant number of queries', async () => {
    const s = await seeded(0);
    const ms = await h.milestone(tm.owner, s.p.id);
    for (let n = 0; n < 25; n++) {
      await git(s, 'branch', '-f', `b${n}`, 'feature');
    }
    await git(s, 'push', '-q', s.url, ...Array.from({ length: 25 }, (_, n) => `b${n}`));
    for (let n = 0; n < 25; n++) {
      const mr = await createMr(tm.developer, s.p, {
        source_branch: `b${n}`,
        labels: `l${n % 3},common`,
        milestone_id: ms.id,
        assignee_id: [tm.master.id, tm.reporter.id][n % 2],
      });
      if (n % 2)
        await h
          .post(tm.guest, `${P(s.p)}/merge_requests/${mr.id}/notes`)
          .send({ body: '+1' })
          .expect(201);
    }
    const count = (perPage: number) =>
      h.measure(async () => {
        const res = await h.get(tm.reporter, `${P(s.p)}/merge_requests?per_page=${perPage}`).expect(200);
        expect(res.body).toHaveLength(perPage);
      });
    const small = await count(5);
    const large = await count(25);
    expect(large).toBe(small);
    const page = (await h.get(tm.reporter, `${P(s.p)}/merge_requests?per_page=25`).expect(200)).body as Json[];
    expect(page.every((m) => m.milestone && m.assignee && m.author && m.labels.includes('common'))).toBe(true);
    expect(page.filter((m) => m.upvotes === 1 && m.user_notes_count === 1)).toHaveLength(12);
    console.log(`merge request list queries: per_page=5 → ${small}, per_page=25 → ${large}`);
  });
});
