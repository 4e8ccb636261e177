import type { Test } from 'supertest';
import { HookReceiver } from '../helpers/hook-receiver';
import { SmtpTestServer } from '../helpers/smtp';
import { startTestApp, TestApp, TestUser } from '../helpers/test-app';

const API = '/api/v3';
type Json = Record<string, any>;

/**
 * Confidential issues as GitLab 8.12–8.17 protect them (../shared/docs/spec-decisions.md #37): seen by
 * reporters and above, administrators, their author and their assignee — not by guests (GitLab 8.8's
 * rule let any member read them) nor other non-members. One public project holds a plain issue and a
 * confidential one (same label and milestone, both named as closed by a merge request, a comment each),
 * assigned to one guest, and a confidential issue of another guest; every place an issue can show is
 * asked by every role: lists, single reads, notes, subscriptions, the activity feed, label and project
 * counts, milestone issues, `closes_issues`, notification mails and webhook deliveries.
 */
describe('confidential issues: reporters and above, the author and the assignee', () => {
  let t: TestApp;
  let smtp: SmtpTestServer;
  let rx: HookReceiver;
  let owner: TestUser;
  let reporter: TestUser;
  let guest: TestUser;
  let guestAuthor: TestUser;
  let guestAssignee: TestUser;
  let outsider: TestUser;
  let pid: number;
  let plain: Json;
  let secret: Json;
  let own: Json; // guestAuthor's confidential issue
  let secretNote: Json;
  let mr: Json;
  let milestone: Json;
  const PROJECT = 'Conf Project';

  const as = (u: TestUser, req: Test) => req.set('PRIVATE-TOKEN', u.token);
  const get = (u: TestUser, path: string) => as(u, t.http.get(`${API}${path}`));
  const post = (u: TestUser, path: string, body: Json = {}) => as(u, t.http.post(`${API}${path}`)).send(body);
  const put = (u: TestUser, path: string, body: Json = {}) => as(u, t.http.put(`${API}${path}`)).send(body);
  const titles = async (u: TestUser, path: string) => ((await get(u, path).expect(200)).body as Json[]).map((i) => i.title as string).sort();

  beforeAll(async () => {
    smtp = await SmtpTestServer.start();
    t = await startTestApp(smtp.env({ EMAIL_SUBJECT_PREFIX: '', QUEUE_POLL_SECONDS: '0.5' }));
    rx = await HookReceiver.start();
    await put(t.root, '/application/settings', { allow_local_requests_from_hooks_and_services: true }).expect(200);
    [owner, reporter, guest, guestAuthor, guestAssignee, outsider] = await Promise.all(
      ['owner', 'reporter', 'guest', 'author', 'assignee', 'outsider'].map((n) => t.createUser({ username: `conf-${n}`, name: `Conf ${n}` })),
    );
    pid = (await post(owner, '/projects', { name: PROJECT, visibility_level: 20 }).expect(201)).body.id;
    for (const [u, level] of [
      [reporter, 20],
      [guest, 10],
      [guestAuthor, 10],
      [guestAssignee, 10],
    ] as const) {
      await post(owner, `/projects/${pid}/members`, { user_id: u.id, access_level: level }).expect(201);
    }
    // the guest and the reporter watch the project: every mail of it is theirs, if they may see its subject
    for (const u of [guest, reporter]) await put(u, `/projects/${pid}/notification_settings`, { level: 'watch' }).expect(200);
    await post(owner, `/projects/${pid}/hooks`, { url: rx.url('/hook'), push_events: false, issues_events: true, note_events: true }).expect(201);
    await post(owner, `/projects/${pid}/repository/files`, { file_path: 'a.txt', branch_name: 'master', content: 'a\n', commit_message: 'a' }).expect(201);
    await post(owner, `/projects/${pid}/repository/branches`, { branch_name: 'feature', ref: 'master' }).expect(201);
    await post(owner, `/projects/${pid}/labels`, { name: 'bug', color: '#ff0000' }).expect(201);
    milestone = (await post(owner, `/projects/${pid}/milestones`, { title: 'M1' }).expect(201)).body;
    const both = { labels: 'bug', milestone_id: milestone.id };
    secret = (
      await post(owner, `/projects/${pid}/issues`, {
        title: 'Secret title',
        description: 'secret body',
        confidential: true,
        assignee_id: guestAssignee.id,
        ...both,
      }).expect(201)
    ).body;
    secretNote = (await post(owner, `/projects/${pid}/issues/${secret.id}/notes`, { body: 'secret comment' }).expect(201)).body;
    own = (await post(guestAuthor, `/projects/${pid}/issues`, { title: 'Own secret', confidential: true }).expect(201)).body;
    plain = (await post(owner, `/projects/${pid}/issues`, { title: 'Plain issue', ...both }).expect(201)).body;
    await post(owner, `/projects/${pid}/issues/${plain.id}/notes`, { body: 'plain comment' }).expect(201);
    mr = (
      await post(owner, `/projects/${pid}/merge_requests`, {
        source_branch: 'feature',
        target_branch: 'master',
        title: 'Fixes',
        description: `Closes #${plain.iid} and closes #${secret.iid}`,
      }).expect(201)
    ).body;
  }, 120_000);

  afterAll(async () => {
    await t?.close();
    await rx?.close();
    await smtp?.close();
  });

  it('the project and milestone issue lists: a guest and a non-member see the plain issue (and an author her own), reporters all', async () => {
    const all = ['Own secret', 'Plain issue', 'Secret title'];
    expect(await titles(guest, `/projects/${pid}/issues`)).toEqual(['Plain issue']);
    expect(await titles(outsider, `/projects/${pid}/issues`)).toEqual(['Plain issue']);
    expect(await titles(guestAuthor, `/projects/${pid}/issues`)).toEqual(['Own secret', 'Plain issue']);
    expect(await titles(guestAssignee, `/projects/${pid}/issues`)).toEqual(['Plain issue', 'Secret title']);
    expect(await titles(reporter, `/projects/${pid}/issues`)).toEqual(all);
    expect(await titles(t.root, `/projects/${pid}/issues`)).toEqual(all);
    expect(await titles(guest, `/projects/${pid}/issues?iid=${secret.iid}`)).toEqual([]);
    const ofMilestone = `/projects/${pid}/milestones/${milestone.id}/issues`;
    expect(await titles(guest, ofMilestone)).toEqual(['Plain issue']);
    expect(await titles(guestAssignee, ofMilestone)).toEqual(['Plain issue', 'Secret title']);
    expect(await titles(reporter, ofMilestone)).toEqual(['Plain issue', 'Secret title']);
    // GET /issues is the caller's own issues
    expect(await titles(guestAuthor, '/issues')).toEqual(['Own secret']);
    expect(await titles(guest, '/issues')).toEqual([]);
  });

  it('a single issue, its notes and its subscription: 404 for a guest and a non-member; the author, the assignee, reporters and admins read it', async () => {
    const s = `/projects/${pid}/issues/${secret.id}`;
    for (const u of [guest, outsider, guestAuthor]) {
      await get(u, s).expect(404);
      await get(u, `${s}/notes`).expect(404);
      await get(u, `${s}/notes/${secretNote.id}`).expect(404);
      await post(u, `${s}/notes`, { body: 'let me in' }).expect(404);
      await post(u, `${s}/subscription`).expect(404);
      await put(u, s, { title: 'renamed' }).expect(404);
    }
    for (const u of [guestAssignee, reporter, t.root]) {
      expect((await get(u, s).expect(200)).body).toMatchObject({ title: 'Secret title' });
      expect(((await get(u, `${s}/notes`).expect(200)).body as Json[]).map((n) => n.body)).toContain('secret comment');
    }
    await get(guestAuthor, `/projects/${pid}/issues/${own.id}`).expect(200);
    await get(guest, `/projects/${pid}/issues/${own.id}`).expect(404);
    await get(guest, `/projects/${pid}/issues/${plain.id}`).expect(200);
  });

  it('the activity feed shows the confidential issue and its comment to whom may read it only', async () => {
    const feed = async (u: TestUser) => {
      const events = (await get(u, `/projects/${pid}/events?per_page=100`).expect(200)).body as Json[];
      return JSON.stringify(events);
    };
    for (const u of [guest, outsider]) {
      const text = await feed(u);
      expect(text).toContain('Plain issue');
      expect(text).not.toContain('Secret title');
      expect(text).not.toContain('secret comment');
      expect(text).not.toContain('Own secret');
    }
    for (const u of [guestAssignee, reporter]) {
      const text = await feed(u);
      expect(text).toContain('Secret title');
      expect(text).toContain('secret comment');
    }
    expect(await feed(guestAuthor)).toContain('Own secret');
  });

  it("label counts and the project's open_issues_count count what the caller's list holds", async () => {
    const bug = async (u: TestUser) => ((await get(u, `/projects/${pid}/labels`).expect(200)).body as Json[]).find((l) => l.name === 'bug');
    expect(await bug(guest)).toMatchObject({ open_issues_count: 1, closed_issues_count: 0 });
    expect(await bug(outsider)).toMatchObject({ open_issues_count: 1 });
    expect(await bug(guestAssignee)).toMatchObject({ open_issues_count: 2 });
    expect(await bug(reporter)).toMatchObject({ open_issues_count: 2 });
    const count = async (u: TestUser) => (await get(u, `/projects/${pid}`).expect(200)).body.open_issues_count;
    expect(await count(guest)).toBe(1);
    expect(await count(outsider)).toBe(1);
    expect(await count(guestAuthor)).toBe(2);
    expect(await count(guestAssignee)).toBe(2);
    expect(await count(reporter)).toBe(3);
    expect(await count(t.root)).toBe(3);
    // a list of projects counts the same way
    const listed = ((await get(guest, '/projects').expect(200)).body as Json[]).find((p) => p.id === pid);
    expect(listed?.open_issues_count).toBe(1);
  });

  it('closes_issues of a merge request names the confidential issue to whom may read it only', async () => {
    const closes = `/projects/${pid}/merge_requests/${mr.id}/closes_issues`;
    expect(await titles(guest, closes)).toEqual(['Plain issue']);
    expect(await titles(outsider, closes)).toEqual(['Plain issue']);
    expect(await titles(guestAssignee, closes)).toEqual(['Plain issue', 'Secret title']);
    expect(await titles(reporter, closes)).toEqual(['Plain issue', 'Secret title']);
  });

  it('notification mails: a watching guest is mailed about the plain issue, never the confidential one; the watching reporter and the assignee are', async () => {
    const about = (title: string) => (to: string) => smtp.to(to).filter((m) => (m.parsed.subject ?? '').includes(`${PROJECT} | ${title} (#`));
    await smtp.waitFor(() => about('Plain issue')(guest.email).length >= 2 && about('Secret title')(reporter.email).length >= 2);
    await smtp.quiet(1500);
    expect(about('Plain issue')(guest.email).length).toBeGreaterThanOrEqual(2); // the new issue and its comment: the guest is mailed
    expect(about('Secret title')(guest.email)).toEqual([]);
    expect(smtp.to(guest.email).filter((m) => /secret/i.test(`${m.parsed.subject} ${m.parsed.text}`))).toEqual([]);
    expect(about('Secret title')(reporter.email).length).toBeGreaterThanOrEqual(2);
    expect(about('Secret title')(guestAssignee.email).length).toBeGreaterThanOrEqual(1);
    expect(smtp.to(outsider.email)).toEqual([]);
  });

  it('webhooks: no Issue Hook nor Note Hook for the confidential issues (8.17: confidential_issues_events, which its API never sets)', async () => {
    // the plain issue's creation and its comment reach the hook (made after the confidential ones)
    await rx.waitFor('/hook', 2);
    await new Promise((r) => setTimeout(r, 1500));
    const kinds = rx.at('/hook').map((r) => `${String(r.headers['x-gitlab-event'])} ${r.body.object_attributes?.title ?? r.body.issue?.title}`);
    expect(kinds.sort()).toEqual(['Issue Hook Plain issue', 'Note Hook Plain issue']);
    expect(JSON.stringify(rx.at('/hook').map((r) => r.body))).not.toMatch(/secret|Own secret/i);
    // once it is no longer confidential, its changes reach the hook again
    await put(owner, `/projects/${pid}/issues/${secret.id}`, { confidential: false }).expect(200);
    const after = await rx.waitFor('/hook', 3);
    expect(after[2].body).toMatchObject({ object_kind: 'issue', object_attributes: { title: 'Secret title', confidential: false } });
  });
});
