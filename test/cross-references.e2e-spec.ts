import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GitCli } from './helpers/git-cli';
import { Json, planning, Team, TestProject } from './helpers/planning';
import { startTestApp, TestApp, TestUser } from './helpers/test-app';

/**
 * Cross-reference system notes (GitLab 8.17's SystemNoteService.cross_reference): an issue, a merge
 * request, a comment or a pushed commit that mentions an issue or merge request leaves
 * `mentioned in <source>` on it, once per source, seen only by those who may see the source.
 * The notes are written by durable domain-event handlers: the spec waits for them through the API.
 */
describe('cross-references', () => {
  let t: TestApp;
  let h: ReturnType<typeof planning>;
  let tm: Team;
  let cli: GitCli;
  let tmp: string;
  let seq = 0;

  beforeAll(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'glv3-xref-'));
    t = await startTestApp();
    cli = await GitCli.listen(t, tmp);
    h = planning(t);
    tm = await h.team();
  });
  afterAll(async () => {
    await t.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  const notesPath = (p: { id: number }, kind: 'issues' | 'merge_requests', id: number) => `/projects/${p.id}/${kind}/${id}/notes?per_page=100`;

  /** The system notes on an issue or merge request as `u` sees them. */
  async function systemNotes(u: TestUser, p: { id: number }, kind: 'issues' | 'merge_requests', id: number): Promise<Json[]> {
    const res = await h.get(u, notesPath(p, kind, id)).expect(200);
    return (res.body as Json[]).filter((n) => n.system);
  }
  const bodies = (notes: Json[]) => notes.map((n) => n.body as string);

  /** Waits (10 s at most) until the notes root sees on the thing hold `body`; returns them. */
  async function eventually(p: { id: number }, kind: 'issues' | 'merge_requests', id: number, body: string): Promise<Json[]> {
    const end = Date.now() + 10_000;
    for (;;) {
      const notes = await systemNotes(t.root, p, kind, id);
      if (notes.some((n) => n.body === body)) return notes;
      if (Date.now() > end) throw new Error(`no note "${body}" on ${kind} ${id}; notes: ${JSON.stringify(bodies(notes))}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** A project of the team with `master` (a.txt) and `feature` (one commit more), pushed by the owner; its work tree. */
  async function withRepository(visibility: 0 | 10 | 20 = 0): Promise<{ p: TestProject; work: string; url: string }> {
    const p = await h.project(tm, visibility);
    const work = join(tmp, `w${++seq}`);
    mkdirSync(work);
    const url = cli.url(p.path_with_namespace, tm.owner.username, tm.owner.password);
    await cli.ok(['init', '-q', work]);
    await cli.commit(work, { 'README.md': '# readme\n' }, 'Initial commit');
    await cli.ok(['checkout', '-q', '-b', 'feature'], work);
    await cli.commit(work, { 'feature.txt': 'feature\n' }, 'Add feature');
    await cli.ok(['checkout', '-q', 'master'], work);
    await cli.ok(['push', '-q', url, 'master', 'feature'], work);
    return { p, work, url };
  }

  it('issue -> issue: "mentioned in issue #2", once however often the text is edited; closed issues and code get none', async () => {
    const p = await h.project(tm, 0);
    const a = await h.issue(tm.owner, p.id, { title: 'Mentioned' });
    const closed = await h.issue(tm.owner, p.id, { title: 'Closed already' });
    await h.put(tm.owner, `/projects/${p.id}/issues/${closed.id}`).send({ state_event: 'close' }).expect(200);
    const b = await h.issue(tm.developer, p.id, {
      title: `Follow-up of #${a.iid}`,
      description: `See #${a.iid}, also #${closed.iid}; not \`#${a.iid + 100}\` in code, and #${a.iid} again`,
    });
    const notes = await eventually(p, 'issues', a.id, `mentioned in issue #${b.iid}`);
    expect(bodies(notes).filter((x) => x.startsWith('mentioned in'))).toEqual([`mentioned in issue #${b.iid}`]);
    expect(notes.find((n) => n.body.startsWith('mentioned in'))!.author.username).toBe(tm.developer.username);

    // an edit that still mentions #a (and now #c too): #c gets its note, #a keeps one
    const c = await h.issue(tm.owner, p.id, { title: 'Mentioned later' });
    await h
      .put(tm.developer, `/projects/${p.id}/issues/${b.id}`)
      .send({ description: `Still #${a.iid} (this is #${b.iid}), and now #${c.iid}` })
      .expect(200);
    await eventually(p, 'issues', c.id, `mentioned in issue #${b.iid}`);
    // a comment on b naming #a again: the source is still issue b
    const said = await h.note(tm.reporter, p.id, 'issues', b.id, `as said in #${a.iid}`);
    const d = await h.issue(tm.owner, p.id, { title: 'Barrier' });
    await h.note(tm.reporter, p.id, 'issues', b.id, `and #${d.iid}`);
    await eventually(p, 'issues', d.id, `mentioned in issue #${b.iid}`);
    expect(bodies(await systemNotes(t.root, p, 'issues', a.id)).filter((x) => x.startsWith('mentioned in'))).toEqual([`mentioned in issue #${b.iid}`]);
    // an edited comment: what it mentions now gets its note
    const e = await h.issue(tm.owner, p.id, { title: 'Named by an edit' });
    await h
      .put(tm.reporter, `/projects/${p.id}/issues/${b.id}/notes/${said.id}`)
      .send({ body: `as said in #${a.iid} and #${e.iid}` })
      .expect(200);
    await eventually(p, 'issues', e.id, `mentioned in issue #${b.iid}`);
    // nothing on the closed one, nor on b, which names itself
    expect(bodies(await systemNotes(t.root, p, 'issues', closed.id)).filter((x) => x.startsWith('mentioned in'))).toEqual([]);
    expect(bodies(await systemNotes(t.root, p, 'issues', b.id)).filter((x) => x.startsWith('mentioned in'))).toEqual([]);
  });

  it('an issue moved to another project keeps naming the same source in its copied notes', async () => {
    const p = await h.project(tm, 0);
    const a = await h.issue(tm.owner, p.id, { title: 'Will move' });
    const b = await h.issue(tm.owner, p.id, { title: 'Stays', description: `About #${a.iid}` });
    await eventually(p, 'issues', a.id, `mentioned in issue #${b.iid}`);
    const q = await h.project(tm, 0);
    const moved = (await h.post(tm.owner, `/projects/${p.id}/issues/${a.id}/move`).send({ to_project_id: q.id }).expect(201)).body;
    // in q, "#b" would name q's own issue: the copy names p's
    const body = `mentioned in issue ${p.path_with_namespace.split('/')[1]}#${b.iid}`;
    expect(bodies(await systemNotes(tm.owner, q, 'issues', moved.id))).toContain(body);
    expect(bodies(await systemNotes(tm.owner, q, 'issues', moved.id))).not.toContain(`mentioned in issue #${b.iid}`);
  });

  it('merge request -> issue and comment -> merge request: "mentioned in merge request !1", "mentioned in issue #3"', async () => {
    const { p } = await withRepository();
    const a = await h.issue(tm.owner, p.id, { title: 'To be fixed' });
    const mr = (
      await h
        .post(tm.developer, `/projects/${p.id}/merge_requests`)
        .send({ source_branch: 'feature', target_branch: 'master', title: 'The feature', description: `Works on #${a.iid}` })
        .expect(201)
    ).body;
    await eventually(p, 'issues', a.id, `mentioned in merge request !${mr.iid}`);

    const c = await h.issue(tm.owner, p.id, { title: 'Discussion' });
    await h.note(tm.guest, p.id, 'issues', c.id, `Is this !${mr.iid}?`);
    const notes = await eventually(p, 'merge_requests', mr.id, `mentioned in issue #${c.iid}`);
    expect(notes.find((n) => n.body === `mentioned in issue #${c.iid}`)!.author.username).toBe(tm.guest.username);
    // the legacy comments route shows it as well
    const comments = (await h.get(tm.owner, `/projects/${p.id}/merge_requests/${mr.id}/comments`).expect(200)).body as Json[];
    expect(comments.map((x) => x.note)).toContain(`mentioned in issue #${c.iid}`);
  });

  it('commit message -> issue: "mentioned in commit <sha>" as the pusher; the same commit pushed again adds none', async () => {
    const { p, work, url } = await withRepository();
    const a = await h.issue(tm.owner, p.id, { title: 'Named by a commit' });
    await cli.ok(['checkout', '-q', '-b', 'topic'], work);
    const sha = await cli.commit(work, { 'fix.txt': 'fix\n' }, `Work on it\n\nRefs #${a.iid}`);
    await cli.ok(['push', '-q', url, 'topic'], work);
    const notes = await eventually(p, 'issues', a.id, `mentioned in commit ${sha}`);
    expect(notes.find((n) => n.body === `mentioned in commit ${sha}`)!.author.username).toBe(tm.owner.username);

    // the same commit on another new branch, with one more naming another issue
    const b = await h.issue(tm.owner, p.id, { title: 'Barrier' });
    await cli.ok(['checkout', '-q', '-b', 'topic2'], work);
    const sha2 = await cli.commit(work, { 'more.txt': 'more\n' }, `More for #${b.iid}`);
    await cli.ok(['push', '-q', url, 'topic2'], work);
    await eventually(p, 'issues', b.id, `mentioned in commit ${sha2}`);
    expect(bodies(await systemNotes(t.root, p, 'issues', a.id)).filter((x) => x.startsWith('mentioned in'))).toEqual([`mentioned in commit ${sha}`]);
  });

  it('across projects: "issue other#2" in the same namespace, "issue namespace/project#2" from another one, and links', async () => {
    const target = await h.project(tm, 20);
    const a = await h.issue(tm.owner, target.id, { title: 'Public' });
    const [ns, path] = target.path_with_namespace.split('/');
    // same namespace: the owner's other project names it `path#iid` and is named back `other#iid`
    const sibling = await h.project(tm, 0);
    const siblingPath = sibling.path_with_namespace.split('/')[1];
    const s = await h.issue(tm.owner, sibling.id, { title: 'Sibling', description: `Depends on ${path}#${a.iid}` });
    await eventually(target, 'issues', a.id, `mentioned in issue ${siblingPath}#${s.iid}`);
    // another namespace (the stranger's public project), by full path and by URL
    const theirs = (
      await h
        .post(tm.stranger, '/projects')
        .send({ name: `theirs-${++seq}`, visibility_level: 20 })
        .expect(201)
    ).body;
    const x = await h.issue(tm.stranger, theirs.id, { title: 'Elsewhere', description: `Like ${ns}/${path}#${a.iid}` });
    await eventually(target, 'issues', a.id, `mentioned in issue ${theirs.path_with_namespace}#${x.iid}`);
    const y = await h.issue(tm.stranger, theirs.id, { title: 'By link', description: `http://gitlab.test/${ns}/${path}/issues/${a.iid}` });
    await eventually(target, 'issues', a.id, `mentioned in issue ${theirs.path_with_namespace}#${y.iid}`);
  });

  it('a source the reader cannot see is left out (list and single note); nothing is noted where the mentioning user cannot see', async () => {
    const pub = await h.project(tm, 20);
    const a = await h.issue(tm.owner, pub.id, { title: 'Public issue' });
    const [ns, path] = pub.path_with_namespace.split('/');
    // the stranger's private project mentions it: the stranger and the admin see the note, the owner (no member there) does not
    const priv = (
      await h
        .post(tm.stranger, '/projects')
        .send({ name: `private-${++seq}`, visibility_level: 0 })
        .expect(201)
    ).body;
    const x = await h.issue(tm.stranger, priv.id, { title: 'Secret plans', description: `About ${ns}/${path}#${a.iid}` });
    const body = `mentioned in issue ${priv.path_with_namespace}#${x.iid}`;
    const all = await eventually(pub, 'issues', a.id, body);
    const note = all.find((n) => n.body === body)!;
    expect(bodies(await systemNotes(tm.stranger, pub, 'issues', a.id))).toContain(body);
    expect(bodies(await systemNotes(tm.owner, pub, 'issues', a.id))).not.toContain(body);
    await h.get(tm.owner, `/projects/${pub.id}/issues/${a.id}/notes/${note.id}`).expect(404);
    await h.get(tm.stranger, `/projects/${pub.id}/issues/${a.id}/notes/${note.id}`).expect(200);
    // a commit of the private project: its code is the source
    const work = join(tmp, `w${++seq}`);
    mkdirSync(work);
    const url = cli.url(priv.path_with_namespace, tm.stranger.username, tm.stranger.password);
    await cli.ok(['init', '-q', work]);
    await cli.commit(work, { 'a.txt': 'a\n' }, 'Initial commit');
    await cli.ok(['push', '-q', url, 'master'], work);
    await cli.ok(['checkout', '-q', '-b', 'side'], work);
    const sha = await cli.commit(work, { 'b.txt': 'b\n' }, `Fix for ${ns}/${path}#${a.iid}`);
    await cli.ok(['push', '-q', url, 'side'], work);
    const commitBody = `mentioned in commit ${priv.path_with_namespace}@${sha}`;
    await eventually(pub, 'issues', a.id, commitBody);
    expect(bodies(await systemNotes(tm.owner, pub, 'issues', a.id))).not.toContain(commitBody);
    expect(bodies(await systemNotes(tm.stranger, pub, 'issues', a.id))).toContain(commitBody);

    // a confidential issue of the public project: the stranger (no member) does not see what it noted
    const secret = await h.issue(tm.developer, pub.id, { title: 'Confidential', confidential: true, description: `Related: #${a.iid}` });
    const secretBody = `mentioned in issue #${secret.iid}`;
    await eventually(pub, 'issues', a.id, secretBody);
    expect(bodies(await systemNotes(tm.developer, pub, 'issues', a.id))).toContain(secretBody);
    expect(bodies(await systemNotes(tm.stranger, pub, 'issues', a.id))).not.toContain(secretBody);

    // the other way round: the stranger names an issue of a private project it cannot see: no note there
    const hidden = await h.project(tm, 0);
    const h1 = await h.issue(tm.owner, hidden.id, { title: 'Hidden' });
    const probe = await h.issue(tm.stranger, priv.id, { title: 'Probe', description: `${hidden.path_with_namespace}#${h1.iid} and ${ns}/${path}#${a.iid}` });
    await eventually(pub, 'issues', a.id, `mentioned in issue ${priv.path_with_namespace}#${probe.iid}`);
    expect(bodies(await systemNotes(t.root, hidden, 'issues', h1.id)).filter((b) => b.startsWith('mentioned in'))).toEqual([]);
  });
});
