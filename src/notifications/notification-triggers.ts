import { Injectable } from '@nestjs/common';
import { DomainEventCatalogue, DomainEventMeta, OnDomainEvent } from '../domain-events/domain-events';
import { MailEvent, NotificationsService } from './notifications.service';

type Meta = DomainEventMeta;

/**
 * What mails which domain event: durable handlers (written in the change's transaction, run once by
 * the queue), each planning its mails and enqueuing them with its own job's completion. Provided only
 * when SMTP_URL is set (NotificationsModule): otherwise no event is queued for notifications.
 */
@Injectable()
export class NotificationTriggers {
  constructor(private readonly notifications: NotificationsService) {}

  private plan(event: MailEvent, meta: Meta): Promise<number[]> {
    return this.notifications.plan(event, meta.job ? { queue: meta.job.queue, id: meta.job.id } : undefined);
  }

  /** GitLab's hook actions: open (new), close, reopen; an update mails nobody. */
  @OnDomainEvent('issue.changed', { durable: true, queue: 'notifications.issue.changed' })
  async issueChanged(e: DomainEventCatalogue['issue.changed'], meta: Meta) {
    const action = e.action === 'open' ? 'new' : e.action === 'close' ? 'close' : e.action === 'reopen' ? 'reopen' : null;
    if (action) await this.plan({ kind: 'issue', action, id: e.issueId, actorId: e.userId }, meta);
  }

  /** open (new), close, reopen, merge. */
  @OnDomainEvent('merge_request.changed', { durable: true, queue: 'notifications.merge_request.changed' })
  async mergeRequestChanged(e: DomainEventCatalogue['merge_request.changed'], meta: Meta) {
    const action = e.action === 'open' ? 'new' : e.action === 'update' ? null : e.action;
    const id = Number(e.attributes.id);
    if (action && id) await this.plan({ kind: 'merge_request', action, id, actorId: e.userId }, meta);
  }

  /** The old and the new assignee (even on the mention level), participants, watchers, subscribers. */
  @OnDomainEvent('issue.reassigned', { durable: true, queue: 'notifications.issue.reassigned' })
  async issueReassigned(e: DomainEventCatalogue['issue.reassigned'], meta: Meta) {
    await this.plan({ kind: 'issue', action: 'reassign', id: e.issueId, actorId: e.userId, previousAssigneeId: e.previousAssigneeId }, meta);
  }

  @OnDomainEvent('merge_request.reassigned', { durable: true, queue: 'notifications.merge_request.reassigned' })
  async mergeRequestReassigned(e: DomainEventCatalogue['merge_request.reassigned'], meta: Meta) {
    await this.plan({ kind: 'merge_request', action: 'reassign', id: e.mergeRequestId, actorId: e.userId, previousAssigneeId: e.previousAssigneeId }, meta);
  }

  @OnDomainEvent('note.created', { durable: true, queue: 'notifications.note.created' })
  async noteCreated(e: DomainEventCatalogue['note.created'], meta: Meta) {
    await this.plan({ kind: 'note', noteId: e.noteId, actorId: e.userId }, meta);
  }

  /** A build that failed (and may not fail): its pusher. */
  @OnDomainEvent('build.changed', { durable: true, queue: 'notifications.build.changed' })
  async buildChanged(e: DomainEventCatalogue['build.changed'], meta: Meta) {
    if (e.build.status === 'failed' && !e.build.allowFailure) await this.plan({ kind: 'build_failed', buildId: e.build.id }, meta);
  }

  @OnDomainEvent('key.created', { durable: true, queue: 'notifications.key.created' })
  async keyCreated(e: DomainEventCatalogue['key.created'], meta: Meta) {
    if (e.key.userId) await this.plan({ kind: 'key_added', keyId: e.key.id }, meta);
  }

  @OnDomainEvent('email.created', { durable: true, queue: 'notifications.email.created' })
  async emailCreated(e: DomainEventCatalogue['email.created'], meta: Meta) {
    await this.plan({ kind: 'email_added', emailId: e.emailId }, meta);
  }

  @OnDomainEvent('project.created', { durable: true, queue: 'notifications.project.created' })
  async projectCreated(e: DomainEventCatalogue['project.created'], meta: Meta) {
    const actorId = e.actorId ?? e.userId;
    if (actorId) await this.plan({ kind: 'project_created', projectId: e.project.id, actorId }, meta);
  }
}
