import type { OutgoingMail } from './mailer';

/** The project a mail is about, as its headers and links show it. */
export interface MailProject {
  id: number;
  name: string;
  pathWithNamespace: string;
}

/** What a mail is about, loaded at send time (so it is what the recipient may see now). */
export type MailSubject =
  | {
      kind: 'issue' | 'merge_request';
      action: 'new' | 'close' | 'reopen' | 'merge' | 'reassign' | 'note';
      project: MailProject;
      id: number;
      iid: number;
      title: string;
      description: string | null;
      actorName: string;
      assigneeName?: string | null;
      note?: { id: number; body: string };
    }
  | { kind: 'build_failed'; project: MailProject; buildId: number; buildName: string; ref: string; sha: string; stage: string }
  | { kind: 'key_added'; keyId: number; keyTitle: string; fingerprint?: string }
  | { kind: 'email_added'; emailId: number; email: string }
  | { kind: 'project_created'; project: MailProject; actorName: string }
  | { kind: 'test' };

export interface MailSite {
  /** EXTERNAL_URL, no trailing slash. */
  externalUrl: string;
  subjectPrefix: string;
}

/** HTML-escapes a value for text or an attribute. */
export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);
}

function host(site: MailSite): string {
  return new URL(site.externalUrl).hostname;
}

/**
 * One notification mail (pure): GitLab-like subject (`project | Title (#12)`, `Re: ` for every mail
 * after the first of a thread), text and escaped HTML, links to EXTERNAL_URL, and the headers mail
 * clients thread and filter by. `uniq` makes the Message-ID of a reply unique (the mail job's id).
 */
export function buildMail(subject: MailSubject, to: string, site: MailSite, uniq: string): OutgoingMail {
  const h = host(site);
  const prefix = site.subjectPrefix ? `${site.subjectPrefix} ` : '';
  const headers: Record<string, string> = { 'Auto-Submitted': 'auto-generated', 'X-Auto-Response-Suppress': 'All' };
  const footer = `You're receiving this email because of your account on ${h}.`;
  let title: string;
  let lines: string[];
  let link: string | undefined;
  let messageId = `${uniq}@${h}`;
  let inReplyTo: string | undefined;
  if (subject.kind === 'test') {
    title = `${prefix}Test email from ${h}`;
    lines = ['This is a test email: the mail settings of this server work.'];
    link = site.externalUrl;
  } else if (subject.kind === 'key_added') {
    title = `${prefix}SSH key was added to your account`;
    lines = [
      `A new public key was just added to your account:`,
      `title: ${subject.keyTitle}`,
      `If this key was added in error, you can remove it under your profile's SSH keys.`,
    ];
    link = `${site.externalUrl}/profile/keys`;
  } else if (subject.kind === 'email_added') {
    title = `${prefix}Email was added to your account`;
    lines = [
      `A new email address was just added to your account:`,
      `email: ${subject.email}`,
      `If this email was added in error, you can remove it under your profile's emails.`,
    ];
    link = `${site.externalUrl}/profile/emails`;
  } else {
    const p = subject.project;
    const projectUrl = `${site.externalUrl}/${p.pathWithNamespace}`;
    headers['X-GitLab-Project'] = p.name;
    headers['X-GitLab-Project-Id'] = String(p.id);
    headers['X-GitLab-Project-Path'] = p.pathWithNamespace;
    headers['List-Id'] = `${p.pathWithNamespace} <${p.id}.${p.pathWithNamespace.split('/').reverse().join('.')}.${h}>`;
    if (subject.kind === 'project_created') {
      title = `${prefix}${p.name} | Project was created for you`;
      lines = [`${subject.actorName} created the project ${p.pathWithNamespace} for you.`];
      link = projectUrl;
    } else if (subject.kind === 'build_failed') {
      title = `${prefix}${p.name} | Build failed for ${subject.ref} (${subject.sha.slice(0, 8)})`;
      headers['X-GitLab-Build-Id'] = String(subject.buildId);
      headers['X-GitLab-Build-Ref'] = subject.ref;
      headers['X-GitLab-Build-Status'] = 'failed';
      lines = [`Build #${subject.buildId} (${subject.buildName}, stage ${subject.stage}) failed.`, `Ref: ${subject.ref}`, `Commit: ${subject.sha}`];
      link = `${projectUrl}/builds/${subject.buildId}`;
    } else {
      const isIssue = subject.kind === 'issue';
      const ref = isIssue ? `#${subject.iid}` : `!${subject.iid}`;
      const thread = `${isIssue ? 'issue' : 'merge_request'}_${subject.id}@${h}`;
      headers[isIssue ? 'X-GitLab-Issue-ID' : 'X-GitLab-MergeRequest-ID'] = String(subject.id);
      const base = `${p.name} | ${subject.title} (${ref})`;
      link = `${projectUrl}/${isIssue ? 'issues' : 'merge_requests'}/${subject.iid}`;
      const what = isIssue ? 'Issue' : 'Merge Request';
      if (subject.action === 'new') {
        title = `${prefix}${base}`;
        messageId = thread;
        lines = [`${what} ${ref} was created by ${subject.actorName}.`];
        if (subject.assigneeName) lines.push(`Assignee: ${subject.assigneeName}`);
        if (subject.description) lines.push('', subject.description);
      } else {
        title = `${prefix}Re: ${base}`;
        inReplyTo = thread;
        if (subject.action === 'note' && subject.note) {
          lines = [`${subject.actorName} commented:`, '', subject.note.body];
          link = `${link}#note_${subject.note.id}`;
        } else if (subject.action === 'reassign') {
          lines = [`Reassigned to ${subject.assigneeName ?? 'Unassigned'} by ${subject.actorName}.`];
        } else {
          const done = subject.action === 'close' ? 'closed' : subject.action === 'reopen' ? 'reopened' : 'merged';
          lines = [`${what} ${ref} was ${done} by ${subject.actorName}.`];
        }
      }
      lines.unshift(`${subject.title} (${ref})`, '');
    }
  }
  const text = [...lines, '', '-- ', link ? `View it on GitLab: ${link}` : '', footer].join('\n');
  const html =
    `<!DOCTYPE html><html><head><meta charset="utf-8"></head><body>` +
    lines.map((l) => (l === '' ? '' : `<p>${escapeHtml(l).replace(/\n/g, '<br>')}</p>`)).join('') +
    `<hr><p>` +
    (link ? `<a href="${escapeHtml(link)}">View it on GitLab</a>. ` : '') +
    `${escapeHtml(footer)}</p></body></html>`;
  return { to, subject: title, text, html, messageId, inReplyTo, references: inReplyTo ? [inReplyTo] : undefined, headers };
}
