import { Inject, Injectable, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { Logger } from '../common/logging/logger';
import { Forbidden, NotFound } from '../common/errors/domain-errors';
import { ProjectAbility, projectAbilities } from '../common/policy/policy';
import { accessFrom } from '../common/policy/policy.service';
import { APP_CONFIG, AppConfig, EmailConfig } from '../config/config';
import { Transactions } from '../database/transactions';
import { canReadIssue } from '../common/policy/issue-policy';
import { ProjectResolver, ResolvedProject } from '../projects/project-resolver.service';
import { PermanentJobError, QueueJob, QueueService } from '../queue/queue.service';
import { UserDirectory } from '../users/user-directory.service';
import { Mailer, OutgoingMail } from './mailer';
import { IssuableFacts, mentionedUsernames, NoteFacts, NotificationFactsRepository } from './notification-facts.repository';
import { effectiveSetting, levelName, LevelSetting } from './notification-levels';
import { notificationMail } from './notification-metrics';
import { buildMail, MailProject, MailSubject } from './notification-mails';
import { NotificationEvent, notificationRecipients, RecipientFacts } from './notification-recipients';
import { NotificationSettingsRepository } from './notification-settings.repository';
import type { Caller } from '../common/caller/caller';

/** The queue of notification mails: one job per recipient and event. */
export const MAIL_QUEUE = 'notifications.mail';

/** What a mail is about (ids: the mail is built from the rows as they are when it is sent). */
export type MailEvent =
  | {
      kind: 'issue' | 'merge_request';
      action: 'new' | 'close' | 'reopen' | 'merge' | 'reassign';
      id: number;
      actorId: number;
      previousAssigneeId?: number | null;
    }
  | { kind: 'note'; noteId: number; actorId: number }
  | { kind: 'build_failed'; buildId: number }
  | { kind: 'key_added'; keyId: number }
  | { kind: 'email_added'; emailId: number }
  | { kind: 'project_created'; projectId: number; actorId: number }
  | { kind: 'test'; to: string };

/** The issue or MR a mail is about, with the note for a comment's mail. */
interface IssuableTarget {
  target: IssuableFacts;
  note?: NoteFacts;
}

export interface MailJob {
  /** The recipient (none for a test mail). */
  userId?: number;
  event: MailEvent;
}

/**
 * Email notifications: who is mailed of what (the rules are notificationRecipients, pure), one queue
 * job per mail, sent by the queue's workers with retries on temporary SMTP errors. Whether the
 * recipient may still see the thing is asked again of the project resolver when the mail is sent.
 * Without SMTP_URL nothing of this runs (the triggers are not even registered: NotificationsModule).
 */
@Injectable()
export class NotificationsService implements OnModuleInit, OnApplicationShutdown {
  private readonly email?: EmailConfig;
  private mailer?: Mailer;

  constructor(
    private readonly facts: NotificationFactsRepository,
    private readonly settings: NotificationSettingsRepository,
    private readonly users: UserDirectory,
    private readonly projects: ProjectResolver,
    private readonly queue: QueueService,
    private readonly tx: Transactions,
    private readonly logger: Logger,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.email = config.email;
  }

  get enabled(): boolean {
    return !!this.email;
  }

  onModuleInit(): void {
    if (!this.email) {
      this.logger.info('email notifications are off (SMTP_URL is not set)');
      return;
    }
    this.mailer = new Mailer(this.email);
    void this.queue.register<MailJob>(MAIL_QUEUE, {
      handler: (job) => this.deliver(job),
      retryLimit: this.email.retryLimit,
      retryDelay: this.email.retryDelaySeconds,
      retryBackoff: true,
      expireInSeconds: Math.max(60, Math.ceil((this.email.timeoutMs * 4) / 1000)),
      batchSize: 10,
      workers: 2,
    });
  }

  onApplicationShutdown(): void {
    this.mailer?.close();
  }

  /**
   * Plans the mails of an event and enqueues them together with the completion of the event's own
   * job (`done`), so that a retried event never mails twice. Returns the recipients.
   */
  async plan(event: MailEvent, done?: { queue: string; id: string }): Promise<number[]> {
    const recipients = await this.recipients(event);
    const jobs: MailJob[] = recipients.map((userId) => ({ userId, event }));
    await this.tx.run(async (tx) => {
      await this.queue.sendMany(MAIL_QUEUE, jobs, { tx });
      if (done && !(await this.queue.complete(done.queue, done.id, { tx }))) throw new Error('notification event job no longer active');
    });
    return recipients;
  }

  /** Enqueues a test mail to `to` (cli send-test-email goes through `sendNow` instead). */
  async sendNow(to: string): Promise<void> {
    if (!this.mailer || !this.email) throw new Error('SMTP_URL is not set');
    await this.mailer.send(buildMail({ kind: 'test' }, to, this.site(), `test-${Date.now()}`));
  }

  /** Connects, says EHLO, starts TLS when offered, authenticates (cli check). */
  async verify(): Promise<void> {
    if (!this.mailer) throw new Error('SMTP_URL is not set');
    await this.mailer.verify();
  }

  private site() {
    return { externalUrl: this.config.externalUrl, subjectPrefix: this.email?.subjectPrefix ?? '' };
  }

  // ---- who

  private async recipients(event: MailEvent): Promise<number[]> {
    switch (event.kind) {
      case 'test':
        return [];
      case 'key_added': {
        const key = await this.facts.key(event.keyId);
        return key && (await this.canSee(key.userId, event)) ? this.decide({ kind: 'notice' }, { actorId: null, userId: key.userId }, () => true) : [];
      }
      case 'email_added': {
        const email = await this.facts.email(event.emailId);
        return email && (await this.canSee(email.userId, event)) ? this.decide({ kind: 'notice' }, { actorId: null, userId: email.userId }, () => true) : [];
      }
      case 'project_created': {
        const ownerId = await this.facts.personalOwner(event.projectId);
        if (!ownerId) return [];
        const ok = await this.canSee(ownerId, event);
        return this.decide({ kind: 'notice' }, { actorId: event.actorId, userId: ownerId }, () => ok);
      }
      case 'build_failed': {
        const build = await this.facts.build(event.buildId);
        if (!build?.userId) return [];
        const settings = await this.settingsIn([build.userId], build.projectId);
        const ok = await this.canSee(build.userId, event);
        return this.decide({ kind: 'build_failed' }, { actorId: null, userId: build.userId, settings }, () => ok);
      }
      case 'note': {
        const note = await this.facts.note(event.noteId);
        if (!note || note.system || (note.noteableType !== 'Issue' && note.noteableType !== 'MergeRequest')) return [];
        const target = await this.facts.issuable(note.noteableType === 'Issue' ? 'issue' : 'merge_request', note.noteableId);
        if (!target) return [];
        const mentionedInNote = await this.facts.userIdsByUsername(mentionedUsernames(note.body));
        return this.issuableRecipients({ kind: 'note' }, target, { actorId: event.actorId, mentionedInNote });
      }
      default: {
        const target = await this.facts.issuable(event.kind, event.id);
        if (!target) return [];
        return this.issuableRecipients({ kind: event.kind, action: event.action }, target, {
          actorId: event.actorId,
          assigneeId: target.assigneeId,
          previousAssigneeId: event.previousAssigneeId ?? null,
        });
      }
    }
  }

  private async issuableRecipients(ev: NotificationEvent, target: IssuableFacts, extra: Partial<RecipientFacts> & { actorId: number }): Promise<number[]> {
    const [participants, subs, labelSubscribers, audience] = await Promise.all([
      this.facts.participants(target),
      this.facts.subscriptions(target),
      this.facts.labelSubscribers(target),
      this.facts.projectAudience(target.projectId),
    ]);
    if (!audience) return [];
    const members = audience.members;
    const everyone = [
      ...new Set([
        ...participants,
        ...subs.subscribed,
        ...labelSubscribers,
        ...members,
        ...(extra.mentionedInNote ?? []),
        ...[extra.assigneeId, extra.previousAssigneeId].filter((x): x is number => !!x),
      ]),
    ];
    const settings = await this.settingsIn(everyone, target.projectId, audience.namespaceId);
    const visible = await this.seeing(everyone, target);
    return this.decide(ev, { ...extra, participants, subscribed: subs.subscribed, unsubscribed: subs.unsubscribed, labelSubscribers, members, settings }, (u) =>
      visible.has(u),
    );
  }

  private decide(
    ev: NotificationEvent,
    f: Omit<RecipientFacts, 'settings' | 'canSee'> & { settings?: RecipientFacts['settings'] },
    canSee: (u: number) => boolean,
  ): number[] {
    return notificationRecipients(ev, { ...f, settings: f.settings ?? new Map<number, LevelSetting>(), canSee });
  }

  /** The effective setting of each user in the project (project → group → global). */
  private async settingsIn(userIds: number[], projectId: number, namespaceId?: number): Promise<Map<number, LevelSetting>> {
    const ns = namespaceId ?? (await this.facts.projectAudience(projectId))?.namespaceId ?? 0;
    const rows = await this.settings.forProject(userIds, projectId, ns);
    const by = new Map<number, { p?: LevelSetting; g?: LevelSetting; x?: LevelSetting }>();
    for (const r of rows) {
      const e = by.get(r.userId) ?? {};
      const s = { level: levelName(r.level), events: r.events ?? {} };
      if (r.sourceType === 'Project') e.p = s;
      else if (r.sourceType === 'Namespace') e.g = s;
      else e.x = s;
      by.set(r.userId, e);
    }
    const out = new Map<number, LevelSetting>();
    for (const [u, e] of by) out.set(u, effectiveSetting(e.p, e.g, e.x));
    return out;
  }

  // ---- may they see it (the policy, the issue policy), asked when planning and again when sending

  /**
   * Who of `userIds` is active and may read the issue or MR now: the policy's pure rules on one read
   * of the project, the users and their memberships (planning a mail to 200 subscribers is a handful
   * of queries). Each mail asks the project resolver again when it is sent.
   */
  private async seeing(userIds: number[], t: IssuableFacts): Promise<Set<number>> {
    const out = new Set<number>();
    const project = await this.projects.find({ id: t.projectId }).catch(() => null);
    if (!project) return out;
    const [users, members] = await Promise.all([this.users.byIds(userIds), this.facts.memberships(project.id, project.namespaceId, userIds)]);
    const ability: ProjectAbility = t.kind === 'issue' ? 'read_issue' : 'read_merge_request';
    for (const [id, user] of users) {
      if (user.state !== 'active') continue;
      const m = members.get(id);
      const level = (n: number | null | undefined) => (n ? { accessLevel: n, notificationLevel: 3 } : null);
      const access = accessFrom(user, project, level(m?.pm), level(m?.gm));
      const abilities = projectAbilities(user, project, access);
      if (!abilities.has(ability)) continue;
      if (t.kind === 'issue' && !canReadIssue(user, abilities, access, t)) continue;
      out.add(id);
    }
    return out;
  }

  private async canSee(userId: number, event: MailEvent): Promise<boolean> {
    const user = await this.users.byId(userId);
    if (!user || user.state !== 'active') return false;
    return (await this.subjectFor(user, event)) !== null;
  }

  /**
   * What the mail shows `user`, or null when they may not see it (or it is gone). `known`: the issue or
   * MR (and the note) the caller has just read for this mail, not read again.
   */
  private async subjectFor(user: Caller, event: MailEvent, known?: IssuableTarget): Promise<MailSubject | null> {
    switch (event.kind) {
      case 'test':
        return { kind: 'test' };
      case 'key_added': {
        const key = await this.facts.key(event.keyId);
        return key && key.userId === user.id ? { kind: 'key_added', keyId: key.id, keyTitle: key.title } : null;
      }
      case 'email_added': {
        const email = await this.facts.email(event.emailId);
        return email && email.userId === user.id ? { kind: 'email_added', emailId: email.id, email: email.email } : null;
      }
      case 'project_created': {
        const r = await this.resolve(user, event.projectId, 'read_project');
        const actor = await this.users.byId(event.actorId);
        return r ? { kind: 'project_created', project: this.mailProject(r), actorName: actor?.name ?? 'An administrator' } : null;
      }
      case 'build_failed': {
        const build = await this.facts.build(event.buildId);
        const r = build && (await this.resolve(user, build.projectId, 'read_build'));
        return build && r
          ? { kind: 'build_failed', project: this.mailProject(r), buildId: build.id, buildName: build.name, ref: build.ref, sha: build.sha, stage: build.stage }
          : null;
      }
      case 'note': {
        const found = known ?? (await this.noteTarget(event.noteId));
        if (!found?.note) return null;
        return this.issuableSubject(user, found.target, 'note', event.actorId, { id: found.note.id, body: found.note.body });
      }
      default: {
        const target = known?.target ?? (await this.facts.issuable(event.kind, event.id));
        return target ? this.issuableSubject(user, target, event.action, event.actorId) : null;
      }
    }
  }

  private async issuableSubject(
    user: Caller,
    t: IssuableFacts,
    action: 'new' | 'close' | 'reopen' | 'merge' | 'reassign' | 'note',
    actorId: number,
    note?: { id: number; body: string },
  ): Promise<MailSubject | null> {
    const r = await this.resolve(user, t.projectId, t.kind === 'issue' ? 'read_issue' : 'read_merge_request');
    if (!r) return null;
    if (t.kind === 'issue' && !canReadIssue(user, r.abilities, r.access, t)) return null;
    const named = await this.users.byIds([actorId, t.assigneeId]);
    return {
      kind: t.kind,
      action,
      project: this.mailProject(r),
      id: t.id,
      iid: t.iid,
      title: t.title,
      description: t.description,
      actorName: named.get(actorId)?.name ?? 'Someone',
      assigneeName: t.assigneeId ? (named.get(t.assigneeId)?.name ?? null) : null,
      note,
    };
  }

  private async resolve(user: Caller, projectId: number, ability: ProjectAbility): Promise<ResolvedProject | null> {
    try {
      return await this.projects.resolve(user, { id: projectId }, ability);
    } catch (e) {
      if (e instanceof NotFound || e instanceof Forbidden) return null;
      throw e;
    }
  }

  private mailProject(r: ResolvedProject): MailProject {
    return { id: r.project.id, name: r.project.name, pathWithNamespace: `${r.project.namespace.path}/${r.project.path}` };
  }

  // ---- sending

  private async deliver(job: QueueJob<MailJob>): Promise<void> {
    const { userId, event } = job.data;
    let mail: OutgoingMail | null;
    if (event.kind === 'test') {
      mail = buildMail({ kind: 'test' }, event.to, this.site(), `test-${job.id}`);
    } else {
      mail = await this.compose(userId as number, event, job.id);
      if (!mail) {
        notificationMail('skipped');
        return;
      }
    }
    try {
      await this.mailer!.send(mail);
      notificationMail('sent');
    } catch (e) {
      const err = e as Error & { temporary?: boolean };
      const last = job.retryCount >= job.retryLimit;
      notificationMail(err.temporary && !last ? 'retried' : 'failed');
      this.logger.warn(err.temporary && !last ? 'notification mail not sent, will retry' : 'notification mail not sent, given up', {
        job: job.id,
        attempt: job.retryCount + 1,
        event: event.kind,
        error: err.message,
      });
      if (!err.temporary) throw new PermanentJobError(err.message);
      throw e;
    }
  }

  /** The mail for `userId`, checked now: null when they are gone, blocked, unsubscribed or may no longer see the thing. */
  private async compose(userId: number, event: Exclude<MailEvent, { kind: 'test' }>, jobId: string): Promise<OutgoingMail | null> {
    const user = await this.users.byId(userId);
    if (!user || user.state !== 'active') return null;
    let known: IssuableTarget | undefined;
    if (event.kind === 'issue' || event.kind === 'merge_request' || event.kind === 'note') {
      const found = event.kind === 'note' ? await this.noteTarget(event.noteId) : await this.issuableTarget(event.kind, event.id);
      if (!found) return null;
      if ((await this.facts.subscriptions(found.target)).unsubscribed.includes(userId)) return null;
      known = found;
    }
    const subject = await this.subjectFor(user, event, known);
    if (!subject) return null;
    const globals = await this.settings.globals([userId]);
    const to = globals[0]?.notificationEmail ?? user.email;
    return buildMail(subject, to, this.site(), `${event.kind}-${jobId}`);
  }

  /** A note and the issue or MR it is on (null for any other note, or when either is gone). */
  private async noteTarget(noteId: number): Promise<IssuableTarget | null> {
    const note = await this.facts.note(noteId);
    if (!note) return null;
    const kind = note.noteableType === 'Issue' ? 'issue' : note.noteableType === 'MergeRequest' ? 'merge_request' : null;
    const target = kind && (await this.facts.issuable(kind, note.noteableId));
    return target ? { target, note } : null;
  }

  private async issuableTarget(kind: 'issue' | 'merge_request', id: number): Promise<IssuableTarget | null> {
    const target = await this.facts.issuable(kind, id);
    return target ? { target } : null;
  }
}
