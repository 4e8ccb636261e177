import { expectSchema } from './helpers/schema';
import { EXTERNAL_URL, startTestApp, TestApp, TestUser } from './helpers/test-app';
import { ci, waitFor } from './helpers/ci';
import { ReceivedMail, SmtpTestServer } from './helpers/smtp';

/**
 * Email notifications against a real SMTP server in this process (STARTTLS with a self-signed
 * certificate, AUTH), what arrives parsed with mailparser: who is mailed (GitLab 8's rules, and the
 * negatives), the mail itself (subject, threading, headers, escaping, links), the notification
 * settings API.
 */
describe('email notifications', () => {
  let smtp: SmtpTestServer;
  let t: TestApp;
  let owner: TestUser;
  let dev: TestUser;
  let reporter: TestUser;
  let outsider: TestUser;
  let watcher: TestUser;
  let projectId: number;
  let projectName: string;

  const api = (u: TestUser) => ({
    get: (p: string) => t.http.get(`/api/v3${p}`).set('PRIVATE-TOKEN', u.token),
    post: (p: string, body: object = {}) => t.http.post(`/api/v3${p}`).set('PRIVATE-TOKEN', u.token).send(body),
    put: (p: string, body: object = {}) => t.http.put(`/api/v3${p}`).set('PRIVATE-TOKEN', u.token).send(body),
    del: (p: string) => t.http.delete(`/api/v3${p}`).set('PRIVATE-TOKEN', u.token),
  });
  const addMember = (pid: number, u: TestUser, level: number) =>
    api(t.root).post(`/projects/${pid}/members`, { user_id: u.id, access_level: level }).expect(201);
  const bySubject = (s: string) => (m: ReceivedMail) => m.parsed.subject === s;

  beforeAll(async () => {
    smtp = await SmtpTestServer.start();
    t = await startTestApp(smtp.env({ EMAIL_SUBJECT_PREFIX: '', EMAIL_REPLY_TO: 'noreply@gitlab.test' }));
    owner = await t.createUser({ name: 'Owner' });
    dev = await t.createUser({ name: 'Dev' });
    reporter = await t.createUser({ name: 'Reporter' });
    outsider = await t.createUser({ name: 'Outsider' });
    watcher = await t.createUser({ name: 'Watcher' });
    const p = await api(owner).post('/projects', { name: 'Mail Project', visibility_level: 0 }).expect(201);
    projectId = p.body.id;
    projectName = p.body.name;
    await addMember(projectId, dev, 30);
    await addMember(projectId, reporter, 20);
    await addMember(projectId, watcher, 30);
  }, 60_000);

  afterAll(async () => {
    await t?.close();
    await smtp?.close();
  });

  describe('notification settings API (GitLab 8.12)', () => {
    it('global: participating and the account email by default; level, custom events and notification_email set', async () => {
      const g = await api(dev).get('/notification_settings').expect(200);
      await expectSchema(g, 'GlobalNotificationSetting');
      expect(g.body).toEqual({ level: 'participating', notification_email: dev.email });
      const w = await api(dev).put('/notification_settings', { level: 'watch' }).expect(200);
      expect(w.body).toEqual({ level: 'watch', notification_email: dev.email });
      const c = await api(dev).put('/notification_settings', { level: 'custom', new_note: true, close_issue: 'true' }).expect(200);
      await expectSchema(c, 'GlobalNotificationSetting');
      expect(c.body.level).toBe('custom');
      expect(c.body.events).toMatchObject({ new_note: true, close_issue: true, new_issue: false, failed_pipeline: false });
      await api(dev).put('/notification_settings', { level: 'participating' }).expect(200);
      expect((await api(dev).get('/notification_settings')).body).toEqual({ level: 'participating', notification_email: dev.email });
    });

    it('400 for an unknown level and for an address the user does not own; 401 without a token', async () => {
      const bad = await api(dev).put('/notification_settings', { level: 'loud' }).expect(400);
      expect(bad.body).toEqual({ message: "400 'loud' is not a valid level" });
      const mail = await api(dev).put('/notification_settings', { notification_email: outsider.email }).expect(400);
      expect(mail.body).toEqual({ message: { notification_email: ['is not an email you own'] } });
      await t.http.get('/api/v3/notification_settings').expect(401);
      await t.http.put(`/api/v3/projects/${projectId}/notification_settings`).send({ level: 'watch' }).expect(401);
    });

    it('notification_email: a secondary address of the user; mails then go there', async () => {
      await api(reporter).post('/user/emails', { email: 'reporter-alt@example.com' }).expect(201);
      const r = await api(reporter).put('/notification_settings', { notification_email: 'reporter-alt@example.com' }).expect(200);
      expect(r.body.notification_email).toBe('reporter-alt@example.com');
    });

    it('project: global by default, set by a member, shown as notification_level in permissions; 404 for a project the caller cannot see', async () => {
      expect((await api(watcher).get(`/projects/${projectId}/notification_settings`).expect(200)).body).toEqual({ level: 'global' });
      await expectSchema(await api(watcher).get(`/projects/${projectId}/notification_settings`).expect(200), 'NotificationSetting');
      expect((await api(watcher).get(`/projects/${projectId}`)).body.permissions.project_access).toEqual({ access_level: 30, notification_level: 3 });
      expect((await api(watcher).put(`/projects/${projectId}/notification_settings`, { level: 'watch' }).expect(200)).body).toEqual({ level: 'watch' });
      expect((await api(watcher).get(`/projects/${projectId}`)).body.permissions.project_access).toEqual({ access_level: 30, notification_level: 2 });
      const list = await api(watcher).get('/projects').expect(200);
      expect(list.body.find((p: { id: number }) => p.id === projectId).permissions.project_access.notification_level).toBe(2);
      expect((await api(outsider).get(`/projects/${projectId}/notification_settings`).expect(404)).body).toEqual({ message: '404 Project Not Found' });
      await api(outsider).put(`/projects/${projectId}/notification_settings`, { level: 'watch' }).expect(404);
      expect((await api(watcher).put(`/projects/${projectId}/notification_settings`, { level: 'nope' }).expect(400)).body).toEqual({
        message: "400 'nope' is not a valid level",
      });
    });

    it('group: global by default, set, 404 for a group the caller cannot see', async () => {
      const g = await api(owner).post('/groups', { name: 'mailgroup', path: 'mailgroup' }).expect(201);
      expect((await api(owner).get(`/groups/${g.body.id}/notification_settings`).expect(200)).body).toEqual({ level: 'global' });
      const c = await api(owner).put(`/groups/${g.body.id}/notification_settings`, { level: 'custom', merge_merge_request: true }).expect(200);
      expect(c.body).toMatchObject({ level: 'custom', events: { merge_merge_request: true, new_note: false } });
      await api(outsider).get(`/groups/${g.body.id}/notification_settings`).expect(404);
      await api(owner).get('/groups/999999/notification_settings').expect(404);
    });
  });

  describe('who is mailed, and the mail', () => {
    let issueId: number;
    let issueIid: number;
    const title = 'Crash <img src=x onerror=alert(1)> & more';

    it('new issue: the assignee, watchers and the label subscribers; never the author; subject, threading, headers, escaped HTML, links', async () => {
      await api(owner).post(`/projects/${projectId}/labels`, { name: 'bug', color: '#ff0000' }).expect(201);
      await api(reporter).post(`/projects/${projectId}/labels/bug/subscription`).expect(201);
      const i = await api(owner)
        .post(`/projects/${projectId}/issues`, { title, description: 'Steps: <b>x</b>', assignee_id: dev.id, labels: 'bug' })
        .expect(201);
      issueId = i.body.id;
      issueIid = i.body.iid;
      const subject = `${projectName} | ${title} (#${issueIid})`;
      await smtp.waitFor((ms) => ms.filter(bySubject(subject)).length >= 3);
      await smtp.quiet(1000);
      const mails = smtp.received.filter(bySubject(subject));
      expect(mails.map((m) => m.to[0]).sort()).toEqual([dev.email, 'reporter-alt@example.com', watcher.email].sort());
      const m = mails.find((x) => x.to[0] === dev.email)!;
      expect(m.secure).toBe(true); // STARTTLS
      expect(m.user).toBe('mailer'); // AUTH
      expect(m.parsed.messageId).toBe(`<issue_${issueId}@gitlab.test>`);
      expect(m.parsed.headers.get('x-gitlab-project')).toBe(projectName);
      expect(m.parsed.headers.get('x-gitlab-issue-id')).toBe(String(issueId));
      expect(m.parsed.headers.get('auto-submitted')).toBe('auto-generated');
      const listId = m.parsed.headerLines.find((h) => h.key === 'list-id')?.line ?? '';
      expect(listId).toMatch(/^List-Id: .+\/mail-project <\d+\.mail-project\..+\.gitlab\.test>$/i);
      expect(m.parsed.from?.value[0].address).toBe('gitlab@gitlab.test');
      expect(m.parsed.replyTo?.value[0].address).toBe('noreply@gitlab.test');
      const html = String(m.parsed.html);
      expect(html).not.toContain('<img');
      expect(html).not.toContain('<b>x</b>');
      expect(html).toContain('&lt;img src=x onerror=alert(1)&gt;');
      const link = `${EXTERNAL_URL}/${owner.username}/mail-project/issues/${issueIid}`;
      expect(m.parsed.text).toContain(link);
      expect(html).toContain(`href="${link}"`);
      expect(m.parsed.text).not.toContain(owner.token);
    });

    it('note: author, assignee, earlier commenters, mentioned and subscribers; Re: subject with In-Reply-To/References; never the actor', async () => {
      await api(outsider).get('/notification_settings').expect(200);
      // the reporter comments (becomes a participant) and is mailed of the next comment
      await api(reporter).post(`/projects/${projectId}/issues/${issueId}/notes`, { body: 'me too' }).expect(201);
      const s1 = `Re: ${projectName} | ${title} (#${issueIid})`;
      await smtp.waitFor((ms) => ms.filter(bySubject(s1)).length >= 3);
      smtp.received.length = 0;
      await api(dev)
        .post(`/projects/${projectId}/issues/${issueId}/notes`, { body: `looking, cc @${owner.username}` })
        .expect(201);
      await smtp.waitFor((ms) => ms.filter(bySubject(s1)).length >= 3);
      await smtp.quiet(1000);
      const mails = smtp.received.filter(bySubject(s1));
      expect(mails.map((m) => m.to[0]).sort()).toEqual([owner.email, 'reporter-alt@example.com', watcher.email].sort());
      const m = mails[0];
      expect(m.parsed.inReplyTo).toBe(`<issue_${issueId}@gitlab.test>`);
      expect(([] as string[]).concat(m.parsed.references ?? [])).toEqual([`<issue_${issueId}@gitlab.test>`]);
      expect(m.parsed.messageId).not.toBe(`<issue_${issueId}@gitlab.test>`);
      expect(m.parsed.text).toContain('looking, cc');
      expect(m.parsed.text).toMatch(new RegExp(`/issues/${issueIid}#note_\\d+`));
    });

    it('an unsubscribe stops a participant; a blocked user is never mailed', async () => {
      smtp.received.length = 0;
      await api(reporter).del(`/projects/${projectId}/issues/${issueId}/subscription`).expect(200);
      await api(t.root).put(`/users/${watcher.id}/block`).expect(200);
      await api(owner).post(`/projects/${projectId}/issues/${issueId}/notes`, { body: 'second' }).expect(201);
      const s1 = `Re: ${projectName} | ${title} (#${issueIid})`;
      await smtp.waitFor((ms) => ms.filter(bySubject(s1)).length >= 1);
      await smtp.quiet(1500);
      expect(smtp.received.filter(bySubject(s1)).map((m) => m.to[0])).toEqual([dev.email]);
      await api(t.root).put(`/users/${watcher.id}/unblock`).expect(200);
    });

    it('reassign: the old and the new assignee, participants and watchers; not the one who reassigned', async () => {
      smtp.received.length = 0;
      await api(owner).put(`/projects/${projectId}/issues/${issueId}`, { assignee_id: reporter.id }).expect(200);
      const s1 = `Re: ${projectName} | ${title} (#${issueIid})`;
      await smtp.waitFor((ms) => ms.filter(bySubject(s1)).length >= 2);
      await smtp.quiet(1000);
      const mails = smtp.received.filter(bySubject(s1));
      // the reporter unsubscribed above: an explicit unsubscribe wins even over the new assignment (GitLab)
      expect(mails.map((m) => m.to[0]).sort()).toEqual([dev.email, watcher.email].sort());
      expect(mails[0].parsed.text).toContain('Reassigned to Reporter by Owner');
    });

    it('close: participants and watchers, not the closer', async () => {
      smtp.received.length = 0;
      await api(dev).put(`/projects/${projectId}/issues/${issueId}`, { state_event: 'close' }).expect(200);
      const s1 = `Re: ${projectName} | ${title} (#${issueIid})`;
      await smtp.waitFor((ms) => ms.filter(bySubject(s1)).length >= 2);
      await smtp.quiet(1000);
      const mails = smtp.received.filter(bySubject(s1));
      expect(mails.map((m) => m.to[0]).sort()).toEqual([owner.email, watcher.email].sort());
      expect(mails[0].parsed.text).toContain(`was closed by Dev`);
    });

    it('confidential issue: a non-member participant is not mailed once it is confidential', async () => {
      const pub = await api(owner).post('/projects', { name: 'Public One', visibility_level: 20 }).expect(201);
      const i = await api(owner).post(`/projects/${pub.body.id}/issues`, { title: 'Open to all' }).expect(201);
      await api(outsider).post(`/projects/${pub.body.id}/issues/${i.body.id}/notes`, { body: 'hello' }).expect(201);
      const s = `Re: Public One | Open to all (#${i.body.iid})`;
      await smtp.waitFor((ms) => ms.some((m) => bySubject(s)(m) && m.to[0] === owner.email));
      smtp.received.length = 0;
      await api(owner).put(`/projects/${pub.body.id}/issues/${i.body.id}`, { confidential: true }).expect(200);
      await api(owner).post(`/projects/${pub.body.id}/issues/${i.body.id}/notes`, { body: 'secret detail' }).expect(201);
      await smtp.quiet(2500);
      expect(smtp.to(outsider.email)).toEqual([]);
    });

    it('private project left: a former member who commented is not mailed', async () => {
      const p = await api(owner).post('/projects', { name: 'Left One', visibility_level: 0 }).expect(201);
      await addMember(p.body.id, outsider, 30);
      const i = await api(owner).post(`/projects/${p.body.id}/issues`, { title: 'Inside' }).expect(201);
      await api(outsider).post(`/projects/${p.body.id}/issues/${i.body.id}/notes`, { body: 'in' }).expect(201);
      await api(owner).del(`/projects/${p.body.id}/members/${outsider.id}`).expect(200);
      smtp.received.length = 0;
      await api(owner).post(`/projects/${p.body.id}/issues/${i.body.id}/notes`, { body: 'after you left' }).expect(201);
      await smtp.quiet(2500);
      expect(smtp.to(outsider.email)).toEqual([]);
    });

    it('a new SSH key: a security notice to its owner', async () => {
      const { execFileSync } = await import('node:child_process');
      const { mkdtempSync, readFileSync } = await import('node:fs');
      const { join } = await import('node:path');
      const { tmpdir } = await import('node:os');
      const dir = mkdtempSync(join(tmpdir(), 'key-'));
      execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(dir, 'k')]);
      await api(dev)
        .post('/user/keys', { title: 'laptop', key: readFileSync(join(dir, 'k.pub'), 'utf8') })
        .expect(201);
      await smtp.waitFor((ms) => ms.some((m) => m.to[0] === dev.email && m.parsed.subject === 'SSH key was added to your account'));
    });

    it('a new email address: a security notice to the account, naming the address', async () => {
      await api(dev).post('/user/emails', { email: 'dev-second@example.com' }).expect(201);
      await smtp.waitFor((ms) => ms.some((m) => m.to[0] === dev.email && m.parsed.subject === 'Email was added to your account'));
      const m = smtp.received.find((x) => x.to[0] === dev.email && x.parsed.subject === 'Email was added to your account')!;
      expect(m.parsed.text).toContain('dev-second@example.com');
      expect(m.parsed.headers.get('auto-submitted')).toBe('auto-generated');
    });

    it('a deleted secondary address that was the notification email is mailed no more: the next mail goes to the primary address', async () => {
      const u = await t.createUser({ name: 'Mover' });
      const added = (address: string) => (m: ReceivedMail) => m.parsed.subject === 'Email was added to your account' && String(m.parsed.text).includes(address);
      const alt = (await api(u).post('/user/emails', { email: 'mover-alt@example.com' }).expect(201)).body;
      await api(u).put('/notification_settings', { notification_email: 'mover-alt@example.com' }).expect(200);
      await api(u).post('/user/emails', { email: 'mover-2@example.com' }).expect(201);
      await smtp.waitFor((ms) => ms.some((m) => added('mover-2@example.com')(m) && m.to[0] === 'mover-alt@example.com'));
      await api(u).del(`/user/emails/${alt.id}`).expect(200);
      await api(u).post('/user/emails', { email: 'mover-3@example.com' }).expect(201);
      await smtp.waitFor((ms) => ms.some((m) => added('mover-3@example.com')(m) && m.to[0] === u.email));
      await smtp.quiet(1000);
      expect(smtp.received.filter(added('mover-3@example.com')).map((m) => m.to[0])).toEqual([u.email]);
    });

    it('merge request: the assignee of a new one (X-GitLab-MergeRequest-ID, !iid), participants of its merge; not the actor', async () => {
      const c = ci(t);
      const p = await c.project(owner, null);
      await addMember(p.id, dev, 30);
      await api(owner).post(`/projects/${p.id}/repository/branches`, { branch_name: 'topic', ref: 'master' }).expect(201);
      await api(owner)
        .post(`/projects/${p.id}/repository/files`, { file_path: 't.txt', branch_name: 'topic', content: 'x\n', commit_message: 't' })
        .expect(201);
      smtp.received.length = 0;
      const mr = await api(owner)
        .post(`/projects/${p.id}/merge_requests`, { source_branch: 'topic', target_branch: 'master', title: 'Topic <b>', assignee_id: dev.id })
        .expect(201);
      const name = (await api(owner).get(`/projects/${p.id}`)).body.name;
      const s = `${name} | Topic <b> (!${mr.body.iid})`;
      await smtp.waitFor((ms) => ms.some(bySubject(s)));
      const m = smtp.received.find(bySubject(s))!;
      expect(m.to).toEqual([dev.email]);
      expect(m.parsed.headers.get('x-gitlab-mergerequest-id')).toBe(String(mr.body.id));
      expect(m.parsed.messageId).toBe(`<merge_request_${mr.body.id}@gitlab.test>`);
      expect(m.parsed.text).toContain(`${EXTERNAL_URL}/${p.path}/merge_requests/${mr.body.iid}`);
      await api(dev).put(`/projects/${p.id}/merge_requests/${mr.body.id}/merge`, {}).expect(200);
      await smtp.waitFor((ms) => ms.some((x) => x.parsed.subject === `Re: ${s}` && x.to[0] === owner.email));
      const merged = smtp.received.find((x) => x.parsed.subject === `Re: ${s}`)!;
      expect(merged.parsed.text).toContain('was merged by Dev');
      await smtp.quiet(1000);
      expect(smtp.received.filter((x) => x.parsed.subject === `Re: ${s}`).map((x) => x.to[0])).toEqual([owner.email]);
    }, 60_000);

    it('failed build: its pusher is mailed', async () => {
      const c = ci(t);
      const runner = await c.registerRunner();
      const p = await c.project(dev, 'unit:\n  script: ["make test"]\n');
      const claimed = await waitFor(async () => {
        const res = await c.api.requestBuild(runner.token);
        return res.status === 201 && res.body.sha === p.sha ? res.body : undefined;
      }, 'claimed build');
      smtp.received.length = 0;
      await c.api.update(claimed.id, { token: runner.token, state: 'failed', trace: 'boom\n' }).expect(200);
      await smtp.waitFor((ms) => ms.some((m) => /Build failed for master/.test(m.parsed.subject ?? '')));
      const m = smtp.received.find((x) => /Build failed for master/.test(x.parsed.subject ?? ''))!;
      expect(m.to).toEqual([dev.email]);
      expect(m.parsed.text).toContain(`${EXTERNAL_URL}/${p.path}/builds/${claimed.id}`);
      expect(m.parsed.text).not.toContain(runner.token);
    }, 60_000);

    it('a project an administrator creates for a user: that user; their own new project: nobody', async () => {
      smtp.received.length = 0;
      await api(t.root).post(`/projects/user/${reporter.id}`, { name: 'Made For You' }).expect(201);
      const s = 'Made For You | Project was created for you';
      await smtp.waitFor((ms) => ms.some(bySubject(s)));
      expect(smtp.received.find(bySubject(s))!.to).toEqual(['reporter-alt@example.com']);
      expect(smtp.received.find(bySubject(s))!.parsed.text).toContain(`${EXTERNAL_URL}/${reporter.username}/made-for-you`);
      await api(reporter).post('/projects', { name: 'My Own' }).expect(201);
      await smtp.quiet(1500);
      expect(smtp.received.filter((m) => /My Own/.test(m.parsed.subject ?? ''))).toEqual([]);
    });

    it('/-/metrics counts sent mails', async () => {
      const m = await t.http.get('/-/metrics').expect(200);
      expect(m.text).toMatch(/notification_mails_total\{result="sent"\} [1-9]/);
    });
  });
});
