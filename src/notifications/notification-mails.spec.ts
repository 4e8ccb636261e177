import { parseEmailConfig } from '../config/config';
import { buildMail, escapeHtml } from './notification-mails';

const site = { externalUrl: 'https://git.example.com', subjectPrefix: '' };
const project = { id: 7, name: 'Proj', pathWithNamespace: 'grp/proj' };
const issue = (action: 'new' | 'note' | 'close', extra = {}) =>
  ({ kind: 'issue', action, project, id: 42, iid: 12, title: 'T <script>', description: 'd & <i>', actorName: 'Ann <a>', ...extra }) as const;

describe('buildMail', () => {
  it('new issue: the thread root (Message-ID issue_<id>@host), no Re:, headers, escaped HTML', () => {
    const m = buildMail(issue('new'), 'x@example.com', site, 'u1');
    expect(m.subject).toBe('Proj | T <script> (#12)');
    expect(m.messageId).toBe('issue_42@git.example.com');
    expect(m.inReplyTo).toBeUndefined();
    expect(m.headers).toMatchObject({
      'X-GitLab-Project': 'Proj',
      'X-GitLab-Project-Id': '7',
      'X-GitLab-Project-Path': 'grp/proj',
      'X-GitLab-Issue-ID': '42',
      'Auto-Submitted': 'auto-generated',
      'List-Id': 'grp/proj <7.proj.grp.git.example.com>',
    });
    expect(m.html).not.toMatch(/<script>|<i>|<a>/);
    expect(m.html).toContain('T &lt;script&gt;');
    expect(m.text).toContain('https://git.example.com/grp/proj/issues/12');
  });

  it('a note: Re:, a Message-ID of its own, In-Reply-To and References to the thread root, a link to the note', () => {
    const m = buildMail(issue('note', { note: { id: 5, body: 'hi' } }), 'x@example.com', site, 'note-99');
    expect(m.subject).toBe('Re: Proj | T <script> (#12)');
    expect(m.messageId).toBe('note-99@git.example.com');
    expect(m.inReplyTo).toBe('issue_42@git.example.com');
    expect(m.references).toEqual(['issue_42@git.example.com']);
    expect(m.text).toContain('https://git.example.com/grp/proj/issues/12#note_5');
  });

  it('merge requests use !iid and X-GitLab-MergeRequest-ID; the subject prefix goes first', () => {
    const m = buildMail({ ...issue('close'), kind: 'merge_request' }, 'x@example.com', { ...site, subjectPrefix: '[GL]' }, 'u');
    expect(m.subject).toBe('[GL] Re: Proj | T <script> (!12)');
    expect(m.headers['X-GitLab-MergeRequest-ID']).toBe('42');
    expect(m.text).toContain('/grp/proj/merge_requests/12');
  });

  it('escapeHtml escapes the five characters', () => {
    expect(escapeHtml(`<a href="x">'&'</a>`)).toBe('&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;');
  });
});

describe('parseEmailConfig', () => {
  it('unset: off', () => {
    expect(parseEmailConfig({}, 'http://h')).toBeUndefined();
  });
  it('credentials from the URL are taken out of it; SMTP_USER/SMTP_PASSWORD win; From defaults to gitlab@host', () => {
    const c = parseEmailConfig({ SMTP_URL: 'smtps://u%40x:p%2Fw@mail.example.com:465' }, 'https://git.example.com:8443')!;
    expect(c).toMatchObject({ smtpUrl: 'smtps://mail.example.com:465', user: 'u@x', password: 'p/w', from: 'gitlab@git.example.com' });
    const d = parseEmailConfig({ SMTP_URL: 'smtp://a:b@mail', SMTP_USER: 'me', SMTP_PASSWORD: 'pw', EMAIL_FROM: 'GitLab <git@example.com>' }, 'http://h')!;
    expect(d).toMatchObject({ smtpUrl: 'smtp://mail', user: 'me', password: 'pw', from: 'GitLab <git@example.com>' });
  });
  it('refuses other schemes and a From that is no address', () => {
    expect(() => parseEmailConfig({ SMTP_URL: 'http://mail' }, 'http://h')).toThrow(/smtp:\/\/ or smtps:\/\//);
    expect(() => parseEmailConfig({ SMTP_URL: 'smtp://mail', EMAIL_FROM: 'nobody' }, 'http://h')).toThrow(/EMAIL_FROM/);
  });
});
