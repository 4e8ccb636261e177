import { expectSchema } from './helpers/schema';
import { startTestApp, TestApp } from './helpers/test-app';
import { API, ISO_MS, Json, planning, Team, TestProject } from './helpers/planning';

describe('milestones and labels', () => {
  let t: TestApp;
  let h: ReturnType<typeof planning>;
  let tm: Team;
  let pub: TestProject;
  let priv: TestProject;
  let other: TestProject;

  beforeAll(async () => {
    t = await startTestApp();
    h = planning(t);
    tm = await h.team();
    pub = await h.project(tm, 20);
    priv = await h.project(tm, 0);
    other = await h.project(tm, 20);
  });
  afterAll(() => t.close());

  describe('milestones', () => {
    it('creates (master): 201 with GitLab keys, per-project iid, due date as YYYY-MM-DD, a created event', async () => {
      const p = await h.project(tm, 20);
      const res = await h
        .post(tm.master, `/projects/${p.id}/milestones`)
        .send({ title: 'v1.0', description: 'First release', due_date: '2016-06-30' })
        .expect(201);
      await expectSchema(res, 'Milestone');
      expect(res.body).toMatchObject({ iid: 1, project_id: p.id, title: 'v1.0', description: 'First release', state: 'active', due_date: '2016-06-30' });
      expect(res.body.created_at).toMatch(ISO_MS);
      const second = await h.milestone(tm.owner, p.id);
      expect(second).toMatchObject({ iid: 2, due_date: null });
      expect((await h.milestone(tm.owner, other.id)).iid).toBeGreaterThanOrEqual(1);
      expect((await h.eventsOf(p.id))[1]).toMatchObject({ action_name: 'opened', target_type: 'Milestone', target_id: res.body.id, target_title: 'v1.0' });
      // no description given: a string, "" (../shared/docs/spec-decisions.md #33), in the answer, the single view and the milestone embedded in an issue
      const bare = await h.post(tm.master, `/projects/${p.id}/milestones`).send({ title: 'no description' }).expect(201);
      expect(bare.body.description).toBe('');
      expect((await h.get(tm.master, `/projects/${p.id}/milestones/${bare.body.id}`).expect(200)).body.description).toBe('');
      const issue = await h.post(tm.master, `/projects/${p.id}/issues`).send({ title: 'in it', milestone_id: bare.body.id }).expect(201);
      expect(issue.body.milestone).toMatchObject({ id: bare.body.id, description: '' });
    });

    it('refuses a developer (admin_milestone is master+): 403', async () => {
      const res = await h.post(tm.developer, `/projects/${pub.id}/milestones`).send({ title: 'x' }).expect(403);
      expect(res.body).toEqual({ message: '403 Forbidden' });
    });

    it('400 without title, for a taken title and for a bad due_date', async () => {
      expect((await h.post(tm.master, `/projects/${pub.id}/milestones`).send({}).expect(400)).body).toEqual({
        message: '400 (Bad request) "title" not given',
      });
      await h.milestone(tm.master, pub.id, { title: 'Taken' });
      expect((await h.post(tm.master, `/projects/${pub.id}/milestones`).send({ title: 'Taken' }).expect(400)).body).toEqual({
        message: { title: ['has already been taken'] },
      });
      for (const due of ['30/06/2016', '2016-02-30', 'soon']) {
        const res = await h
          .post(tm.master, `/projects/${pub.id}/milestones`)
          .send({ title: `t ${due}`, due_date: due })
          .expect(400);
        expect(res.body).toEqual({ message: '400 (Bad request) "due_date" is invalid' });
      }
    });

    it('lists with iid and state filters, id descending, paginated', async () => {
      const p = await h.project(tm, 20);
      const a = await h.milestone(tm.master, p.id, { title: 'a' });
      const b = await h.milestone(tm.master, p.id, { title: 'b' });
      await h.put(tm.master, `/projects/${p.id}/milestones/${a.id}`).send({ state_event: 'close' }).expect(200);
      const all = await h.get(tm.guest, `/projects/${p.id}/milestones`).expect(200);
      expect(all.body.map((m: Json) => m.title)).toEqual(['b', 'a']);
      expect(all.headers['x-total']).toBe('2');
      expect((await h.get(tm.guest, `/projects/${p.id}/milestones?state=closed`).expect(200)).body.map((m: Json) => m.id)).toEqual([a.id]);
      expect((await h.get(tm.guest, `/projects/${p.id}/milestones?state=active`).expect(200)).body.map((m: Json) => m.id)).toEqual([b.id]);
      expect((await h.get(tm.guest, `/projects/${p.id}/milestones?iid=${b.iid}`).expect(200)).body.map((m: Json) => m.id)).toEqual([b.id]);
      expect((await h.get(tm.guest, `/projects/${p.id}/milestones?per_page=1&page=2`).expect(200)).body.map((m: Json) => m.id)).toEqual([a.id]);
    });

    it('gets one by global id; 404 Milestone Not Found for absent ids and other projects’ milestones', async () => {
      const m = await h.milestone(tm.master, pub.id);
      expect((await h.get(tm.stranger, `/projects/${pub.id}/milestones/${m.id}`).expect(200)).body).toMatchObject({ id: m.id, title: m.title });
      const foreign = await h.milestone(tm.master, other.id);
      for (const id of ['999999', 'x', String(foreign.id)]) {
        const res = await h.get(tm.owner, `/projects/${pub.id}/milestones/${id}`).expect(404);
        expect(res.body).toEqual({ message: '404 Milestone Not Found' });
      }
    });

    it('updates: title, description, due_date (null clears), state_event close / activate', async () => {
      const p = await h.project(tm, 20);
      const m = await h.milestone(tm.master, p.id, { title: 'Sprint', due_date: '2016-01-31' });
      const upd = await h
        .put(tm.master, `/projects/${p.id}/milestones/${m.id}`)
        .send({ title: 'Sprint 2', description: 'Desc', due_date: '2016-02-29' })
        .expect(200);
      expect(upd.body).toMatchObject({ title: 'Sprint 2', description: 'Desc', due_date: '2016-02-29', state: 'active' });
      const cleared = await h.put(tm.master, `/projects/${p.id}/milestones/${m.id}`).send({ due_date: null }).expect(200);
      expect(cleared.body.due_date).toBeNull();
      expect(cleared.body.title).toBe('Sprint 2');
      const closed = await h.put(tm.master, `/projects/${p.id}/milestones/${m.id}`).send({ state_event: 'close' }).expect(200);
      expect(closed.body.state).toBe('closed');
      const active = await h.put(tm.master, `/projects/${p.id}/milestones/${m.id}`).send({ state_event: 'activate' }).expect(200);
      expect(active.body.state).toBe('active');
      const events = await h.eventsOf(p.id);
      expect(events.slice(0, 2).map((e) => [e.action_name, e.target_type])).toEqual([
        ['opened', 'Milestone'],
        ['closed', 'Milestone'],
      ]);
      const bad = await h.put(tm.master, `/projects/${p.id}/milestones/${m.id}`).send({ state_event: 'reopen' }).expect(400);
      expect(bad.body).toEqual({ message: '400 (Bad request) "state_event" is invalid' });
      await h.put(tm.developer, `/projects/${p.id}/milestones/${m.id}`).send({ title: 'x' }).expect(403);
      await h.put(tm.master, `/projects/${p.id}/milestones/999999`).send({ title: 'x' }).expect(404);
      await h.put(tm.master, `/projects/${p.id}/milestones/${m.id}`).send({ title: '' }).expect(400);
    });

    it('lists the issues of a milestone, paginated; other projects’ milestones 404', async () => {
      const p = await h.project(tm, 20);
      const m = await h.milestone(tm.master, p.id);
      const i1 = await h.issue(tm.reporter, p.id, { milestone_id: m.id });
      const i2 = await h.issue(tm.reporter, p.id, { milestone_id: m.id });
      await h.issue(tm.reporter, p.id);
      const secret = await h.issue(tm.reporter, p.id, { milestone_id: m.id, confidential: true });
      const res = await h.get(tm.developer, `/projects/${p.id}/milestones/${m.id}/issues`).expect(200);
      expect(res.body.map((i: Json) => i.id)).toEqual([secret.id, i2.id, i1.id]);
      expect(res.body[0].milestone.id).toBe(m.id);
      expect(res.headers['x-total']).toBe('3');
      // the confidential issue is for reporters and above (and its author, assignee): not a guest (8.12+) nor a non-member
      for (const u of [tm.guest, tm.stranger]) {
        const outside = await h.get(u, `/projects/${p.id}/milestones/${m.id}/issues`).expect(200);
        expect(outside.body.map((i: Json) => i.id)).toEqual([i2.id, i1.id]);
      }
      const foreign = await h.milestone(tm.master, other.id);
      const nf = await h.get(tm.guest, `/projects/${p.id}/milestones/${foreign.id}/issues`).expect(404);
      expect(nf.body).toEqual({ message: '404 Milestone Not Found' });
    });

    it('answer 404 Project Not Found to a non-member of a private project on every route, 401 anonymous', async () => {
      const m = await h.milestone(tm.master, priv.id);
      for (const call of [
        () => h.get(tm.stranger, `/projects/${priv.id}/milestones`),
        () => h.get(tm.stranger, `/projects/${priv.id}/milestones/${m.id}`),
        () => h.post(tm.stranger, `/projects/${priv.id}/milestones`).send({ title: 'x' }),
        () => h.put(tm.stranger, `/projects/${priv.id}/milestones/${m.id}`).send({ title: 'x' }),
        () => h.get(tm.stranger, `/projects/${priv.id}/milestones/${m.id}/issues`),
      ]) {
        const res = await call();
        expect([res.status, res.body]).toEqual([404, { message: '404 Project Not Found' }]);
      }
      await t.http.get(`${API}/projects/${pub.id}/milestones`).expect(401);
      // a private project's milestone by global id through a readable project
      await h.get(tm.stranger, `/projects/${pub.id}/milestones/${m.id}`).expect(404);
    });
  });

  describe('labels', () => {
    it('creates (reporter): 201 with the label and its counts; #RGB and #RRGGBB colours', async () => {
      const p = await h.project(tm, 20);
      const res = await h.post(tm.reporter, `/projects/${p.id}/labels`).send({ name: 'bug', color: '#d9534f', description: 'Broken' }).expect(201);
      await expectSchema(res, 'Label');
      expect(res.body).toMatchObject({
        name: 'bug',
        color: '#d9534f',
        description: 'Broken',
        open_issues_count: 0,
        closed_issues_count: 0,
        open_merge_requests_count: 0,
        subscribed: false,
      });
      const short = await h.post(tm.reporter, `/projects/${p.id}/labels`).send({ name: 'short', color: '#FFF' }).expect(201);
      expect(short.body).toMatchObject({ color: '#FFF', description: null });
    });

    it('409 for a taken name (any case); 400 for a bad colour, a bad name, missing name or colour', async () => {
      const p = await h.project(tm, 20);
      await h.post(tm.owner, `/projects/${p.id}/labels`).send({ name: 'Bug', color: '#000000' }).expect(201);
      expect((await h.post(tm.owner, `/projects/${p.id}/labels`).send({ name: 'bug', color: '#000000' }).expect(409)).body).toEqual({
        message: '409 Label already exists',
      });
      for (const color of ['red', '#12345', '000000', '#GGGGGG']) {
        const res = await h
          .post(tm.owner, `/projects/${p.id}/labels`)
          .send({ name: `c-${color}`, color })
          .expect(400);
        expect(res.body).toEqual({ message: { color: ['must be a valid color code'] } });
      }
      for (const name of ['a?b', 'a&b', 'a,b']) {
        const res = await h.post(tm.owner, `/projects/${p.id}/labels`).send({ name, color: '#000000' }).expect(400);
        expect(res.body).toEqual({ message: { title: ['is invalid'] } });
      }
      expect((await h.post(tm.owner, `/projects/${p.id}/labels`).send({ color: '#000000' }).expect(400)).body).toEqual({
        message: '400 (Bad request) "name" not given',
      });
      expect((await h.post(tm.owner, `/projects/${p.id}/labels`).send({ name: 'x' }).expect(400)).body).toEqual({
        message: '400 (Bad request) "color" not given',
      });
    });

    it('refuses a guest every label write (admin_label is reporter+): 403', async () => {
      await h.post(tm.owner, `/projects/${pub.id}/labels`).send({ name: 'guarded', color: '#123456' }).expect(201);
      await h.post(tm.guest, `/projects/${pub.id}/labels`).send({ name: 'g', color: '#123456' }).expect(403);
      await h.put(tm.guest, `/projects/${pub.id}/labels`).send({ name: 'guarded', color: '#654321' }).expect(403);
      const del = await h.del(tm.guest, `/projects/${pub.id}/labels?name=guarded`).expect(403);
      expect(del.body).toEqual({ message: '403 Forbidden' });
      await h.del(tm.stranger, `/projects/${pub.id}/labels?name=guarded`).expect(403);
    });

    it('lists every label (not paginated), name ascending whatever the case, with open/closed issue counts', async () => {
      const p = await h.project(tm, 20);
      await h.post(tm.owner, `/projects/${p.id}/labels`).send({ name: 'zeta', color: '#000' }).expect(201);
      await h.post(tm.owner, `/projects/${p.id}/labels`).send({ name: 'Alpha', color: '#000' }).expect(201);
      const a = await h.issue(tm.owner, p.id, { labels: 'beta,Alpha' });
      await h.issue(tm.owner, p.id, { labels: 'beta' });
      const c = await h.issue(tm.owner, p.id, { labels: 'beta' });
      await h.put(tm.owner, `/projects/${p.id}/issues/${c.id}`).send({ state_event: 'close' }).expect(200);
      const gone = await h.issue(tm.owner, p.id, { labels: 'beta' });
      await h.del(tm.owner, `/projects/${p.id}/issues/${gone.id}`).expect(200);
      await h.issue(tm.owner, p.id, { labels: 'zeta', confidential: true });
      const res = await h.get(tm.reporter, `/projects/${p.id}/labels`).expect(200);
      await expectSchema(res, 'Label[]');
      expect(res.headers).toMatchObject({ 'x-total': '3', 'x-per-page': '20' }); // every list is paged; whole on the first page
      expect(res.body.map((l: Json) => [l.name, l.open_issues_count, l.closed_issues_count, l.open_merge_requests_count])).toEqual([
        ['Alpha', 1, 0, 0],
        ['beta', 2, 1, 0],
        ['zeta', 1, 0, 0],
      ]);
      // a guest (8.12+) and a non-member do not count the confidential issue
      for (const u of [tm.guest, tm.stranger]) {
        const outside = await h.get(u, `/projects/${p.id}/labels`).expect(200);
        expect(outside.body.find((l: Json) => l.name === 'zeta').open_issues_count).toBe(0);
      }
      expect(a.labels).toEqual(['Alpha', 'beta']);
    });

    it('counts the open merge requests of each label (opened and reopened; not closed, merged or deleted; none where merge requests are off)', async () => {
      const p = await h.project(tm, 20);
      await h
        .post(tm.owner, `/projects/${p.id}/repository/files`)
        .send({ file_path: 'README.md', branch_name: 'master', content: '# labels\n', commit_message: 'first' })
        .expect(201);
      const mr = async (n: number, labels: string) => {
        await h
          .post(tm.owner, `/projects/${p.id}/repository/branches`)
          .send({ branch_name: `f${n}`, ref: 'master' })
          .expect(201);
        await h
          .post(tm.owner, `/projects/${p.id}/repository/files`)
          .send({ file_path: `f${n}.txt`, branch_name: `f${n}`, content: `${n}\n`, commit_message: `f${n}` })
          .expect(201);
        return (
          await h
            .post(tm.owner, `/projects/${p.id}/merge_requests`)
            .send({ source_branch: `f${n}`, target_branch: 'master', title: `mr ${n}`, labels })
            .expect(201)
        ).body;
      };
      await mr(1, 'review,bug');
      await mr(2, 'review');
      const closed = await mr(3, 'review,bug');
      await h.put(tm.owner, `/projects/${p.id}/merge_requests/${closed.id}`).send({ state_event: 'close' }).expect(200);
      const reopened = await mr(4, 'bug');
      await h.put(tm.owner, `/projects/${p.id}/merge_requests/${reopened.id}`).send({ state_event: 'close' }).expect(200);
      await h.put(tm.owner, `/projects/${p.id}/merge_requests/${reopened.id}`).send({ state_event: 'reopen' }).expect(200);
      const merged = await mr(5, 'review');
      await h.put(tm.owner, `/projects/${p.id}/merge_requests/${merged.id}/merge`).send({}).expect(200);
      const deleted = await mr(6, 'review');
      await h.del(tm.owner, `/projects/${p.id}/merge_requests/${deleted.id}`).expect(200);
      await h.issue(tm.owner, p.id, { labels: 'bug' });
      const counts = async (u = tm.guest) =>
        (await h.get(u, `/projects/${p.id}/labels`).expect(200)).body.map((l: Json) => [l.name, l.open_issues_count, l.open_merge_requests_count]);
      expect(await counts()).toEqual([
        ['bug', 1, 2],
        ['review', 0, 2],
      ]);
      expect(await counts(tm.stranger)).toEqual(await counts()); // a public project: everyone reads its merge requests
      // the single label answers count them too
      const upd = await h.put(tm.owner, `/projects/${p.id}/labels`).send({ name: 'review', color: '#123456' }).expect(200);
      expect(upd.body).toMatchObject({ name: 'review', open_merge_requests_count: 2 });
      // a kind the viewer may not read counts nothing (8.17's finders): merge requests off, then issues off
      await h.put(tm.owner, `/projects/${p.id}`).send({ merge_requests_enabled: false }).expect(200);
      expect(await counts()).toEqual([
        ['bug', 1, 0],
        ['review', 0, 0],
      ]);
      await h.put(tm.owner, `/projects/${p.id}`).send({ merge_requests_enabled: true, issues_enabled: false }).expect(200);
      expect(await counts()).toEqual([
        ['bug', 0, 2],
        ['review', 0, 2],
      ]);
    });

    it('updates by name: new_name keeps the issues labelled, color, description; 400 with nothing to change; 404; 409', async () => {
      const p = await h.project(tm, 20);
      const i = await h.issue(tm.owner, p.id, { labels: 'old' });
      await h.post(tm.owner, `/projects/${p.id}/labels`).send({ name: 'other', color: '#000' }).expect(201);
      const res = await h.put(tm.reporter, `/projects/${p.id}/labels`).send({ name: 'old', new_name: 'renamed', color: '#00FF00' }).expect(200);
      expect(res.body).toMatchObject({ name: 'renamed', color: '#00FF00', open_issues_count: 1 });
      expect((await h.get(tm.owner, `/projects/${p.id}/issues/${i.id}`).expect(200)).body.labels).toEqual(['renamed']);
      const desc = await h.put(tm.reporter, `/projects/${p.id}/labels`).send({ name: 'RENAMED', description: 'Now described' }).expect(200);
      expect(desc.body).toMatchObject({ name: 'renamed', description: 'Now described', color: '#00FF00' });
      const nothing = await h.put(tm.reporter, `/projects/${p.id}/labels`).send({ name: 'renamed' }).expect(400);
      expect(nothing.body).toEqual({ message: '400 Bad request - Required parameters "new_name" or "color" missing' });
      expect((await h.put(tm.reporter, `/projects/${p.id}/labels`).send({ new_name: 'x' }).expect(400)).body).toEqual({
        message: '400 (Bad request) "name" not given',
      });
      const unknown = await h.put(tm.reporter, `/projects/${p.id}/labels`).send({ name: 'nope', color: '#000' }).expect(404);
      expect(unknown.body).toEqual({ message: '404 Label Not Found' });
      expect((await h.put(tm.reporter, `/projects/${p.id}/labels`).send({ name: 'renamed', new_name: 'Other' }).expect(409)).body).toEqual({
        message: '409 Label already exists',
      });
      await h.put(tm.reporter, `/projects/${p.id}/labels`).send({ name: 'renamed', color: 'green' }).expect(400);
      await h.put(tm.reporter, `/projects/${p.id}/labels`).send({ name: 'renamed', new_name: 'a?b' }).expect(400);
    });

    it('deletes by name: 200 with the label record, removed from issues; 400 without name; 404 unknown', async () => {
      const p = await h.project(tm, 20);
      const i = await h.issue(tm.owner, p.id, { labels: 'doomed,kept' });
      // a reporter may create and edit labels but not delete them (master+)
      const refused = await h.del(tm.reporter, `/projects/${p.id}/labels`).send({ name: 'doomed' }).expect(403);
      expect(refused.body).toEqual({ message: '403 Forbidden' });
      await h.del(tm.developer, `/projects/${p.id}/labels`).send({ name: 'doomed' }).expect(403);
      const res = await h.del(tm.master, `/projects/${p.id}/labels`).send({ name: 'doomed' }).expect(200);
      await expectSchema(res, 'LabelRecord');
      expect(Object.keys(res.body).sort()).toEqual(['color', 'created_at', 'description', 'id', 'project_id', 'template', 'title', 'updated_at']);
      expect(res.body).toMatchObject({ title: 'doomed', color: '#428BCA', project_id: p.id, template: false, description: null });
      expect((await h.get(tm.owner, `/projects/${p.id}/issues/${i.id}`).expect(200)).body.labels).toEqual(['kept']);
      expect((await h.get(tm.owner, `/projects/${p.id}/labels`).expect(200)).body.map((l: Json) => l.name)).toEqual(['kept']);
      expect((await h.del(tm.master, `/projects/${p.id}/labels`).expect(400)).body).toEqual({ message: '400 (Bad request) "name" not given' });
      const unknown = await h.del(tm.master, `/projects/${p.id}/labels?name=doomed`).expect(404);
      expect(unknown.body).toEqual({ message: '404 Label Not Found' });
    });

    it('subscriptions by id or title: 201 / 304 / 200 / 304, 404 for unknown labels', async () => {
      const p = await h.project(tm, 20);
      const label = (await h.post(tm.owner, `/projects/${p.id}/labels`).send({ name: 'watch me', color: '#000' }).expect(201)).body;
      const byId = await h.post(tm.guest, `/projects/${p.id}/labels/${label.id}/subscription`).expect(201);
      expect(byId.body).toMatchObject({ name: 'watch me', subscribed: true });
      await h.post(tm.guest, `/projects/${p.id}/labels/${encodeURIComponent('watch me')}/subscription`).expect(304);
      const list = await h.get(tm.guest, `/projects/${p.id}/labels`).expect(200);
      expect(list.body[0].subscribed).toBe(true);
      expect((await h.get(tm.owner, `/projects/${p.id}/labels`).expect(200)).body[0].subscribed).toBe(false);
      const off = await h.del(tm.guest, `/projects/${p.id}/labels/${encodeURIComponent('watch me')}/subscription`).expect(200);
      expect(off.body.subscribed).toBe(false);
      await h.del(tm.guest, `/projects/${p.id}/labels/${label.id}/subscription`).expect(304);
      const nf = await h.post(tm.guest, `/projects/${p.id}/labels/nope/subscription`).expect(404);
      expect(nf.body).toEqual({ message: '404 Label Not Found' });
      await h.del(tm.guest, `/projects/${p.id}/labels/999999/subscription`).expect(404);
      // a label of another project by id
      const foreign = (
        await h
          .post(tm.owner, `/projects/${other.id}/labels`)
          .send({ name: `f-${Date.now()}`, color: '#000' })
          .expect(201)
      ).body;
      await h.post(tm.guest, `/projects/${p.id}/labels/${foreign.id}/subscription`).expect(404);
    });

    it('answer 404 Project Not Found to a non-member of a private project on every route', async () => {
      const label = (await h.post(tm.owner, `/projects/${priv.id}/labels`).send({ name: 'secret', color: '#000' }).expect(201)).body;
      for (const call of [
        () => h.get(tm.stranger, `/projects/${priv.id}/labels`),
        () => h.post(tm.stranger, `/projects/${priv.id}/labels`).send({ name: 'x', color: '#000' }),
        () => h.put(tm.stranger, `/projects/${priv.id}/labels`).send({ name: 'secret', color: '#111' }),
        () => h.del(tm.stranger, `/projects/${priv.id}/labels?name=secret`),
        () => h.post(tm.stranger, `/projects/${priv.id}/labels/${label.id}/subscription`),
        () => h.del(tm.stranger, `/projects/${priv.id}/labels/secret/subscription`),
      ]) {
        const res = await call();
        expect([res.status, res.body]).toEqual([404, { message: '404 Project Not Found' }]);
      }
      // the private label by global id through a readable project
      await h.post(tm.stranger, `/projects/${pub.id}/labels/${label.id}/subscription`).expect(404);
      await t.http.get(`${API}/projects/${pub.id}/labels`).expect(401);
    });
  });
});
