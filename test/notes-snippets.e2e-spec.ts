import { expectSchema } from './helpers/schema';
import { startTestApp, TestApp } from './helpers/test-app';
import { API, ISO_MS, Json, planning, Team, TestProject } from './helpers/planning';

describe('notes and snippets', () => {
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

  const settings = (body: Json) => h.put(tm.admin, '/application/settings').send(body).expect(200);

  describe('issue notes', () => {
    it('creates: 201 with GitLab keys, author view, a commented event; counts on the issue', async () => {
      const p = await h.project(tm, 20);
      const i = await h.issue(tm.owner, p.id, { title: 'Discussed' });
      const res = await h.post(tm.guest, `/projects/${p.id}/issues/${i.id}/notes`).send({ body: 'Looks good' }).expect(201);
      await expectSchema(res, 'Note');
      expect(res.body).toMatchObject({
        body: 'Looks good',
        attachment: null,
        system: false,
        noteable_id: i.id,
        noteable_type: 'Issue',
        upvote: false,
        downvote: false,
      });
      expect(res.body.author).toMatchObject({ id: tm.guest.id, username: tm.guest.username });
      expect(res.body.author.created_at).toMatch(ISO_MS);
      expect(res.body.created_at).toMatch(ISO_MS);
      const event = (await h.eventsOf(p.id))[0];
      expect(event).toMatchObject({
        action_name: 'commented on',
        target_type: 'Note',
        target_id: res.body.id,
        target_title: 'Discussed',
        author_id: tm.guest.id,
      });
      const issue = await h.get(tm.owner, `/projects/${p.id}/issues/${i.id}`).expect(200);
      expect(issue.body.user_notes_count).toBe(1);
      expect(new Date(issue.body.updated_at).getTime()).toBeGreaterThanOrEqual(new Date(res.body.created_at).getTime());
      // a non-member of a public project may comment too
      await h.post(tm.stranger, `/projects/${p.id}/issues/${i.id}/notes`).send({ body: 'Drive-by' }).expect(201);
    });

    it('requires a body: 400 "body" not given; 404 for an unknown issue or one of another project', async () => {
      const i = await h.issue(tm.owner, pub.id);
      expect((await h.post(tm.owner, `/projects/${pub.id}/issues/${i.id}/notes`).send({}).expect(400)).body).toEqual({
        message: '400 (Bad request) "body" not given',
      });
      await h.post(tm.owner, `/projects/${pub.id}/issues/${i.id}/notes`).send({ body: '  ' }).expect(400);
      const missing = await h.post(tm.owner, `/projects/${pub.id}/issues/999999/notes`).send({ body: 'x' }).expect(404);
      expect(missing.body).toEqual({ message: '404 Issue Not Found' });
      const foreign = await h.issue(tm.owner, other.id);
      await h.get(tm.owner, `/projects/${pub.id}/issues/${foreign.id}/notes`).expect(404);
      await t.http.post(`${API}/projects/${pub.id}/issues/${i.id}/notes`).send({ body: 'x' }).expect(401);
    });

    it('treats +1 and -1 bodies as award notes (upvote / downvote)', async () => {
      const i = await h.issue(tm.owner, pub.id);
      const up = await h.note(tm.developer, pub.id, 'issues', i.id, '+1');
      const down = await h.note(tm.reporter, pub.id, 'issues', i.id, '-1');
      const plain = await h.note(tm.reporter, pub.id, 'issues', i.id, '+1 but I disagree');
      expect([up.upvote, up.downvote]).toEqual([true, false]);
      expect([down.upvote, down.downvote]).toEqual([false, true]);
      expect([plain.upvote, plain.downvote]).toEqual([false, false]);
    });

    it('honours created_at for the owner and administrators only', async () => {
      const i = await h.issue(tm.owner, pub.id);
      const when = '2015-07-08T09:10:11.120Z';
      const byOwner = await h.post(tm.owner, `/projects/${pub.id}/issues/${i.id}/notes`).send({ body: 'old', created_at: when }).expect(201);
      expect(byOwner.body.created_at).toBe(when);
      const byAdmin = await h.post(tm.admin, `/projects/${pub.id}/issues/${i.id}/notes`).send({ body: 'old', created_at: when }).expect(201);
      expect(byAdmin.body.created_at).toBe(when);
      const byMaster = await h.post(tm.master, `/projects/${pub.id}/issues/${i.id}/notes`).send({ body: 'new', created_at: when }).expect(201);
      expect(byMaster.body.created_at).not.toBe(when);
    });

    it('answers a NUL byte or a bad created_at with 400 "x" is invalid, and a blank body on update with "body" not given', async () => {
      const i = await h.issue(tm.owner, pub.id);
      const base = `/projects/${pub.id}/issues/${i.id}/notes`;
      expect((await h.post(tm.owner, base).send({ body: 'a\u0000b' }).expect(400)).body).toEqual({ message: '400 (Bad request) "body" is invalid' });
      expect((await h.post(tm.owner, base).send({ body: 'x', created_at: 'yesterday' }).expect(400)).body).toEqual({
        message: '400 (Bad request) "created_at" is invalid',
      });
      const n = await h.note(tm.owner, pub.id, 'issues', i.id, 'kept');
      expect((await h.put(tm.owner, `${base}/${n.id}`).send({ body: 'x\u0000' }).expect(400)).body).toEqual({ message: '400 (Bad request) "body" is invalid' });
      expect((await h.put(tm.owner, `${base}/${n.id}`).send({ body: ' ' }).expect(400)).body).toEqual({ message: '400 (Bad request) "body" not given' });
      expect((await h.get(tm.owner, `${base}/${n.id}`).expect(200)).body.body).toBe('kept');
    });

    it('lists in insertion order with system notes, paginated; gets one; 404 Note Not Found for others', async () => {
      const p = await h.project(tm, 20);
      const i = await h.issue(tm.owner, p.id);
      const n1 = await h.note(tm.guest, p.id, 'issues', i.id, 'first');
      await h.put(tm.owner, `/projects/${p.id}/issues/${i.id}`).send({ state_event: 'close' }).expect(200);
      const n3 = await h.note(tm.guest, p.id, 'issues', i.id, 'third');
      const list = await h.get(tm.stranger, `/projects/${p.id}/issues/${i.id}/notes`).expect(200);
      await expectSchema(list, 'Note[]');
      expect(list.body.map((n: Json) => [n.body, n.system])).toEqual([
        ['first', false],
        ['Status changed to closed', true],
        ['third', false],
      ]);
      expect(list.headers['x-total']).toBe('3');
      const page2 = await h.get(tm.guest, `/projects/${p.id}/issues/${i.id}/notes?per_page=2&page=2`).expect(200);
      expect(page2.body.map((n: Json) => n.id)).toEqual([n3.id]);
      const one = await h.get(tm.guest, `/projects/${p.id}/issues/${i.id}/notes/${n1.id}`).expect(200);
      expect(one.body).toMatchObject({ id: n1.id, body: 'first' });
      const otherIssue = await h.issue(tm.owner, p.id);
      const wrong = await h.get(tm.guest, `/projects/${p.id}/issues/${otherIssue.id}/notes/${n1.id}`).expect(404);
      expect(wrong.body).toEqual({ message: '404 Note Not Found' });
      await h.get(tm.guest, `/projects/${p.id}/issues/${i.id}/notes/999999`).expect(404);
      await h.get(tm.guest, `/projects/${p.id}/issues/${i.id}/notes/abc`).expect(404);
    });

    it('lets the author edit their note and a master edit any; others get 403; system notes are not editable', async () => {
      const p = await h.project(tm, 20);
      const i = await h.issue(tm.owner, p.id);
      const n = await h.note(tm.developer, p.id, 'issues', i.id, 'draft');
      const own = await h.put(tm.developer, `/projects/${p.id}/issues/${i.id}/notes/${n.id}`).send({ body: 'final' }).expect(200);
      expect(own.body).toMatchObject({ id: n.id, body: 'final' });
      const denied = await h.put(tm.reporter, `/projects/${p.id}/issues/${i.id}/notes/${n.id}`).send({ body: 'hijack' }).expect(403);
      expect(denied.body).toEqual({ message: '403 Forbidden' });
      await h.put(tm.developer, `/projects/${p.id}/issues/${i.id}/notes/${n.id}`).send({}).expect(400);
      const byMaster = await h.put(tm.master, `/projects/${p.id}/issues/${i.id}/notes/${n.id}`).send({ body: 'moderated' }).expect(200);
      expect(byMaster.body.body).toBe('moderated');
      await h.put(tm.owner, `/projects/${p.id}/issues/${i.id}`).send({ state_event: 'close' }).expect(200);
      const system = (await h.notesOf(p.id, 'issues', i.id)).find((x) => x.system);
      await h.put(tm.owner, `/projects/${p.id}/issues/${i.id}/notes/${system!.id}`).send({ body: 'rewritten' }).expect(403);
      await h.put(tm.master, `/projects/${p.id}/issues/${i.id}/notes/999999`).send({ body: 'x' }).expect(404);
    });

    it('deletes: 200 with the note, then 404; the author or a master; others 403', async () => {
      const p = await h.project(tm, 20);
      const i = await h.issue(tm.owner, p.id);
      const n = await h.note(tm.guest, p.id, 'issues', i.id, 'to delete');
      const m = await h.note(tm.reporter, p.id, 'issues', i.id, 'moderate me');
      await h.del(tm.developer, `/projects/${p.id}/issues/${i.id}/notes/${n.id}`).expect(403);
      const res = await h.del(tm.guest, `/projects/${p.id}/issues/${i.id}/notes/${n.id}`).expect(200);
      expect(res.body).toMatchObject({ id: n.id, body: 'to delete', noteable_type: 'Issue' });
      const again = await h.del(tm.guest, `/projects/${p.id}/issues/${i.id}/notes/${n.id}`).expect(404);
      expect(again.body).toEqual({ message: '404 Note Not Found' });
      await h.del(tm.master, `/projects/${p.id}/issues/${i.id}/notes/${m.id}`).expect(200);
      expect(await h.notesOf(p.id, 'issues', i.id)).toEqual([]);
    });

    it('lists notes with a constant number of queries', async () => {
      const p = await h.project(tm, 20);
      const i = await h.issue(tm.owner, p.id);
      const authors = [tm.owner, tm.master, tm.developer, tm.reporter, tm.guest];
      for (let n = 0; n < 30; n++) await h.note(authors[n % authors.length], p.id, 'issues', i.id, `n${n}`);
      const small = await h.measure(() => h.get(tm.guest, `/projects/${p.id}/issues/${i.id}/notes?per_page=5`).expect(200));
      const large = await h.measure(() => h.get(tm.guest, `/projects/${p.id}/issues/${i.id}/notes?per_page=30`).expect(200));
      expect(large).toBe(small);
    });
  });

  describe('snippets', () => {
    it('creates (reporter): 201 with GitLab keys; the content is served raw as text/plain', async () => {
      const res = await h
        .post(tm.reporter, `/projects/${pub.id}/snippets`)
        .send({ title: 'Hello', file_name: 'hello.rb', code: 'puts "hi"\n', visibility_level: 20 })
        .expect(201);
      await expectSchema(res, 'Snippet');
      expect(res.body).toMatchObject({ title: 'Hello', file_name: 'hello.rb', expires_at: null });
      expect(res.body.author).toMatchObject({ id: tm.reporter.id, username: tm.reporter.username });
      const raw = await h.get(tm.guest, `/projects/${pub.id}/snippets/${res.body.id}/raw`).expect(200);
      expect(raw.headers['content-type']).toMatch(/^text\/plain/);
      expect(raw.text).toBe('puts "hi"\n');
      const one = await h.get(tm.guest, `/projects/${pub.id}/snippets/${res.body.id}`).expect(200);
      expect(one.body).toMatchObject({ id: res.body.id, title: 'Hello' });
    });

    it('a note touches the snippet (updated_at) and its commented event the project (last_activity_at)', async () => {
      const p = await h.project(tm, 20);
      const s = await h.snippet(tm.reporter, p.id);
      const past = '2001-01-01T00:00:00.000Z';
      await t.sql(`UPDATE snippets SET updated_at = $2 WHERE id = $1`, [s.id, past]);
      await t.sql(`UPDATE projects SET last_activity_at = $2 WHERE id = $1`, [p.id, past]);
      const note = await h.note(tm.guest, p.id, 'snippets', s.id, 'touching');
      const after = new Date(note.created_at as string).getTime();
      const snippet = await h.get(tm.guest, `/projects/${p.id}/snippets/${s.id}`).expect(200);
      expect(new Date(snippet.body.updated_at).getTime()).toBeGreaterThanOrEqual(after);
      const project = await h.get(tm.guest, `/projects/${p.id}`).expect(200);
      expect(new Date(project.body.last_activity_at).getTime()).toBeGreaterThanOrEqual(after);
    });

    it('refuses a guest (create_project_snippet is reporter+): 403', async () => {
      const res = await h.post(tm.guest, `/projects/${pub.id}/snippets`).send({ title: 'x', file_name: 'x', code: 'x', visibility_level: 0 }).expect(403);
      expect(res.body).toEqual({ message: '403 Forbidden' });
    });

    it('requires title, file_name, code and visibility_level; refuses unknown levels; reads 1/2 as 10/20', async () => {
      const full = { title: 't', file_name: 'f.txt', code: 'c', visibility_level: 10 };
      for (const field of ['title', 'file_name', 'code', 'visibility_level']) {
        const body: Json = { ...full };
        delete body[field];
        const res = await h.post(tm.reporter, `/projects/${pub.id}/snippets`).send(body).expect(400);
        expect(res.body).toEqual({ message: `400 (Bad request) "${field}" not given` });
      }
      const bad = await h
        .post(tm.reporter, `/projects/${pub.id}/snippets`)
        .send({ ...full, visibility_level: 5 })
        .expect(400);
      expect(bad.body).toEqual({ message: { visibility_level: ['is not included in the list'] } });
      await h
        .post(tm.reporter, `/projects/${pub.id}/snippets`)
        .send({ ...full, visibility_level: 'public' })
        .expect(400);
      const mapped = await h
        .post(tm.reporter, `/projects/${pub.id}/snippets`)
        .send({ ...full, visibility_level: 2 })
        .expect(201);
      expect((await t.sql<{ visibility_level: number }>(`SELECT visibility_level FROM snippets WHERE id = $1`, [mapped.body.id]))[0].visibility_level).toBe(20);
    });

    it('applies restricted_visibility_levels (not to admins) and default_snippet_visibility for an empty level', async () => {
      try {
        await settings({ restricted_visibility_levels: [20], default_snippet_visibility: 10 });
        const full = { title: 't', file_name: 'f.txt', code: 'c' };
        const res = await h
          .post(tm.reporter, `/projects/${pub.id}/snippets`)
          .send({ ...full, visibility_level: 20 })
          .expect(400);
        expect(res.body).toEqual({ message: { visibility_level: ['Public visibility has been restricted by your GitLab administrator'] } });
        await h
          .post(tm.admin, `/projects/${pub.id}/snippets`)
          .send({ ...full, visibility_level: 20 })
          .expect(201);
        const dflt = await h
          .post(tm.reporter, `/projects/${pub.id}/snippets`)
          .send({ ...full, visibility_level: '' })
          .expect(201);
        expect((await t.sql<{ visibility_level: number }>(`SELECT visibility_level FROM snippets WHERE id = $1`, [dflt.body.id]))[0].visibility_level).toBe(10);
        // an update to a restricted level is refused too
        await h.put(tm.reporter, `/projects/${pub.id}/snippets/${dflt.body.id}`).send({ visibility_level: 20 }).expect(400);
      } finally {
        await settings({ restricted_visibility_levels: [], default_snippet_visibility: 0 });
      }
    });

    it('shows members every snippet, others the public and internal ones and their own; newest first, paginated', async () => {
      const p = await h.project(tm, 20);
      const priv0 = await h.snippet(tm.reporter, p.id, { title: 'private', visibility_level: 0 });
      const int10 = await h.snippet(tm.reporter, p.id, { title: 'internal', visibility_level: 10 });
      const pub20 = await h.snippet(tm.reporter, p.id, { title: 'public', visibility_level: 20 });
      const member = await h.get(tm.guest, `/projects/${p.id}/snippets`).expect(200);
      expect(member.body.map((s: Json) => s.id)).toEqual([pub20.id, int10.id, priv0.id]);
      expect(member.headers['x-total']).toBe('3');
      const outsider = await h.get(tm.stranger, `/projects/${p.id}/snippets`).expect(200);
      expect(outsider.body.map((s: Json) => s.id)).toEqual([pub20.id, int10.id]);
      const hidden = await h.get(tm.stranger, `/projects/${p.id}/snippets/${priv0.id}`).expect(404);
      expect(hidden.body).toEqual({ message: '404 Snippet Not Found' });
      await h.get(tm.stranger, `/projects/${p.id}/snippets/${priv0.id}/raw`).expect(404);
      await h.get(tm.stranger, `/projects/${p.id}/snippets/${priv0.id}/notes`).expect(404);
      await h.get(tm.admin, `/projects/${p.id}/snippets/${priv0.id}`).expect(200);
      const external = await t.createUser({ external: true });
      const ext = await h.get(external, `/projects/${p.id}/snippets`).expect(200);
      expect(ext.body.map((s: Json) => s.id)).toEqual([pub20.id]);
      const page = await h.get(tm.guest, `/projects/${p.id}/snippets?per_page=2&page=2`).expect(200);
      expect(page.body.map((s: Json) => s.id)).toEqual([priv0.id]);
      // another project's snippet by global id
      const foreign = await h.snippet(tm.owner, other.id, { visibility_level: 20 });
      await h.get(tm.owner, `/projects/${p.id}/snippets/${foreign.id}`).expect(404);
    });

    it('updates: the author or a master; a developer who is not the author gets 403', async () => {
      const s = await h.snippet(tm.reporter, pub.id, { title: 'Mine', visibility_level: 20 });
      const res = await h
        .put(tm.reporter, `/projects/${pub.id}/snippets/${s.id}`)
        .send({ title: 'Renamed', code: 'new code', file_name: 'new.rb' })
        .expect(200);
      expect(res.body).toMatchObject({ id: s.id, title: 'Renamed', file_name: 'new.rb' });
      expect((await h.get(tm.reporter, `/projects/${pub.id}/snippets/${s.id}/raw`).expect(200)).text).toBe('new code');
      await h.put(tm.developer, `/projects/${pub.id}/snippets/${s.id}`).send({ title: 'Nope' }).expect(403);
      await h.put(tm.master, `/projects/${pub.id}/snippets/${s.id}`).send({ title: 'By master' }).expect(200);
      await h.put(tm.reporter, `/projects/${pub.id}/snippets/${s.id}`).send({ title: '' }).expect(400);
      await h.put(tm.reporter, `/projects/${pub.id}/snippets/999999`).send({ title: 'x' }).expect(404);
    });

    it('deletes: 200 with the record, 200 even when absent; a developer who is not the author gets 403', async () => {
      const s = await h.snippet(tm.reporter, pub.id);
      await h.note(tm.guest, pub.id, 'snippets', s.id, 'a note that goes with it');
      await h.del(tm.developer, `/projects/${pub.id}/snippets/${s.id}`).expect(403);
      const res = await h.del(tm.reporter, `/projects/${pub.id}/snippets/${s.id}`).expect(200);
      await expectSchema(res, 'SnippetRecord');
      expect(res.body).toMatchObject({
        id: s.id,
        title: s.title,
        file_name: 'hello.rb',
        content: 'puts "hello"',
        project_id: pub.id,
        author_id: tm.reporter.id,
      });
      await h.get(tm.reporter, `/projects/${pub.id}/snippets/${s.id}`).expect(404);
      const again = await h.del(tm.reporter, `/projects/${pub.id}/snippets/${s.id}`).expect(200);
      expect(again.text).toBe('');
      const notes = await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM notes WHERE noteable_type = 'Snippet' AND noteable_id = $1`, [s.id]);
      expect(notes[0].n).toBe(0);
      const byMaster = await h.snippet(tm.reporter, pub.id);
      await h.del(tm.master, `/projects/${pub.id}/snippets/${byMaster.id}`).expect(200);
    });

    it('decides snippet visibility from the access the project resolver loaded: a member costs no more queries than an admin', async () => {
      const s = await h.snippet(tm.owner, priv.id, { visibility_level: 0 });
      // before, a non-admin cost one more membership query on every snippet read and list
      for (const path of [`/projects/${priv.id}/snippets/${s.id}`, `/projects/${priv.id}/snippets/${s.id}/raw`, `/projects/${priv.id}/snippets?per_page=5`]) {
        const byAdmin = await h.measure(() => h.get(tm.admin, path).expect(200));
        const byMember = await h.measure(() => h.get(tm.reporter, path).expect(200));
        expect([path, byMember]).toEqual([path, byAdmin]);
      }
    });

    it('answers 403 when the project has snippets disabled', async () => {
      const p = await h.project(tm, 20, { snippets_enabled: false });
      await h.get(tm.owner, `/projects/${p.id}/snippets`).expect(403);
      await h.post(tm.owner, `/projects/${p.id}/snippets`).send({ title: 't', file_name: 'f', code: 'c', visibility_level: 0 }).expect(403);
    });
  });

  describe('snippet notes', () => {
    it('list, get, create, update, delete on a snippet', async () => {
      const s = await h.snippet(tm.reporter, pub.id, { visibility_level: 20 });
      const base = `/projects/${pub.id}/snippets/${s.id}/notes`;
      const created = await h.post(tm.stranger, base).send({ body: 'Nice snippet' }).expect(201);
      expect(created.body).toMatchObject({ noteable_type: 'Snippet', noteable_id: s.id, body: 'Nice snippet' });
      expect((await h.get(tm.guest, base).expect(200)).body.map((n: Json) => n.id)).toEqual([created.body.id]);
      expect((await h.get(tm.guest, `${base}/${created.body.id}`).expect(200)).body.body).toBe('Nice snippet');
      await h.put(tm.guest, `${base}/${created.body.id}`).send({ body: 'x' }).expect(403);
      expect((await h.put(tm.stranger, `${base}/${created.body.id}`).send({ body: 'Nicer' }).expect(200)).body.body).toBe('Nicer');
      // created_at is honoured on issue notes only
      const dated = await h.post(tm.owner, base).send({ body: 'dated', created_at: '2015-01-01T00:00:00Z' }).expect(201);
      expect(dated.body.created_at).not.toBe('2015-01-01T00:00:00.000Z');
      expect((await h.del(tm.stranger, `${base}/${created.body.id}`).expect(200)).body.id).toBe(created.body.id);
      await h.del(tm.stranger, `${base}/${created.body.id}`).expect(404);
      const missing = await h.get(tm.guest, `/projects/${pub.id}/snippets/999999/notes`).expect(404);
      expect(missing.body).toEqual({ message: '404 Snippet Not Found' });
      const events = await h.eventsOf(pub.id);
      expect(events.find((e) => e.target_id === dated.body.id)).toMatchObject({ action_name: 'commented on', target_type: 'Note', target_title: s.title });
    });
  });

  describe('private projects', () => {
    it('answer 404 Project Not Found to a non-member on every note and snippet route', async () => {
      const i = await h.issue(tm.owner, priv.id);
      const s = await h.snippet(tm.owner, priv.id, { visibility_level: 20 });
      const issueNote = await h.note(tm.owner, priv.id, 'issues', i.id, 'hidden');
      const snippetNote = await h.note(tm.owner, priv.id, 'snippets', s.id, 'hidden');
      const u = tm.stranger;
      const calls: [string, () => ReturnType<typeof h.get>][] = [];
      for (const [kind, id, noteId] of [
        ['issues', i.id, issueNote.id],
        ['snippets', s.id, snippetNote.id],
      ] as const) {
        const base = `/projects/${priv.id}/${kind}/${id}/notes`;
        calls.push(
          [`${kind} notes list`, () => h.get(u, base)],
          [`${kind} note get`, () => h.get(u, `${base}/${noteId}`)],
          [`${kind} note create`, () => h.post(u, base).send({ body: 'x' })],
          [`${kind} note update`, () => h.put(u, `${base}/${noteId}`).send({ body: 'x' })],
          [`${kind} note delete`, () => h.del(u, `${base}/${noteId}`)],
        );
      }
      calls.push(
        ['snippets list', () => h.get(u, `/projects/${priv.id}/snippets`)],
        ['snippet get', () => h.get(u, `/projects/${priv.id}/snippets/${s.id}`)],
        ['snippet raw', () => h.get(u, `/projects/${priv.id}/snippets/${s.id}/raw`)],
        ['snippet create', () => h.post(u, `/projects/${priv.id}/snippets`).send({ title: 't', file_name: 'f', code: 'c', visibility_level: 20 })],
        ['snippet update', () => h.put(u, `/projects/${priv.id}/snippets/${s.id}`).send({ title: 'x' })],
        ['snippet delete', () => h.del(u, `/projects/${priv.id}/snippets/${s.id}`)],
      );
      for (const [name, call] of calls) {
        const res = await call();
        expect([name, res.status, res.body]).toEqual([name, 404, { message: '404 Project Not Found' }]);
      }
      // nothing was changed or removed
      expect((await h.notesOf(priv.id, 'issues', i.id)).map((n) => n.body)).toEqual(['hidden']);
      await h.get(tm.owner, `/projects/${priv.id}/snippets/${s.id}`).expect(200);
    });

    it('answer 404 to lookups of private snippets and notes by global id through a readable project', async () => {
      const s = await h.snippet(tm.owner, priv.id, { visibility_level: 20 });
      const i = await h.issue(tm.owner, priv.id);
      const n = await h.note(tm.owner, priv.id, 'issues', i.id, 'hidden');
      const readable = await h.issue(tm.owner, pub.id);
      for (const [path, message] of [
        [`/projects/${pub.id}/snippets/${s.id}`, '404 Snippet Not Found'],
        [`/projects/${pub.id}/snippets/${s.id}/raw`, '404 Snippet Not Found'],
        [`/projects/${pub.id}/snippets/${s.id}/notes`, '404 Snippet Not Found'],
        [`/projects/${pub.id}/issues/${i.id}/notes/${n.id}`, '404 Issue Not Found'],
        [`/projects/${pub.id}/issues/${readable.id}/notes/${n.id}`, '404 Note Not Found'],
      ] as const) {
        const res = await h.get(tm.stranger, path).expect(404);
        expect(res.body).toEqual({ message });
      }
      await h.put(tm.stranger, `/projects/${pub.id}/issues/${readable.id}/notes/${n.id}`).send({ body: 'x' }).expect(404);
      await h.del(tm.stranger, `/projects/${pub.id}/issues/${readable.id}/notes/${n.id}`).expect(404);
      // a snippet DELETE through another project neither reveals nor removes it
      await h.del(tm.stranger, `/projects/${pub.id}/snippets/${s.id}`).expect(200);
      await h.get(tm.owner, `/projects/${priv.id}/snippets/${s.id}`).expect(200);
    });
  });
});
