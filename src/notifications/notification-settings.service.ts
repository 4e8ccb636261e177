import { Injectable } from '@nestjs/common';
import { Rejected, ValidationFailed } from '../common/errors/domain-errors';
import { Transactions } from '../database/transactions';
import { GroupsService } from '../groups/groups.service';
import { ProjectResolver } from '../projects/project-resolver.service';
import { UpdateGlobalNotificationSettingDto, UpdateNotificationSettingDto } from './dto/notification-settings.dto';
import { CUSTOM_EVENTS, CustomEvents, levelName, NOTIFICATION_LEVELS, NotificationLevel } from './notification-levels';
import { NotificationSetting, NotificationSource } from './notification-setting.entity';
import { NotificationSettingsRepository } from './notification-settings.repository';
import { NotificationSettingView } from './notification-settings.presenter';
import { GroupRef, ProjectRef } from '../common/params/refs';
import { DomainEventCatalogue, OnDomainEvent } from '../domain-events/domain-events';
import type { Caller } from '../common/caller/caller';

export interface GlobalNotificationSettingView extends NotificationSettingView {
  notificationEmail: string;
}

/**
 * GitLab 8.12's notification settings API: the user's global level (default `participating`) and
 * notification email, and a level per project and per group (default `global`) the caller can see.
 */
@Injectable()
export class NotificationSettingsService {
  constructor(
    private readonly settings: NotificationSettingsRepository,
    private readonly tx: Transactions,
    private readonly projects: ProjectResolver,
    private readonly groups: GroupsService,
  ) {}

  async getGlobal(user: Caller): Promise<GlobalNotificationSettingView> {
    return this.globalView(user, (await this.settings.globals([user.id]))[0] ?? null);
  }

  /** An address the user deleted or gave up is no longer their notification email (8.17's `update_secondary_emails!`). */
  @OnDomainEvent('user.emails_changed', { durable: true, queue: 'notifications.user.emails_changed' })
  async onEmailsChanged(e: DomainEventCatalogue['user.emails_changed']): Promise<void> {
    await this.tx.run((tx) => this.settings.forgetNotificationEmail(tx, e.userId, e.removed));
  }

  async putGlobal(user: Caller, dto: UpdateGlobalNotificationSettingDto): Promise<GlobalNotificationSettingView> {
    const current = await this.settings.find(user.id, 'global', 0);
    let email: string | undefined;
    if (dto.notification_email !== undefined) {
      email = dto.notification_email;
      if (!(await this.settings.ownsEmail(user.id, email))) throw new ValidationFailed({ notification_email: ['is not an email you own'] });
    }
    const next = this.merge(current, 'participating', dto);
    await this.tx.run((tx) => this.settings.upsert(tx, user.id, 'global', 0, { ...next, notificationEmail: email }));
    return this.getGlobal(user);
  }

  async getProject(user: Caller, ref: ProjectRef): Promise<NotificationSettingView> {
    const { project } = await this.projects.resolve(user, ref);
    return this.view(await this.settings.find(user.id, 'Project', project.id), 'global');
  }

  async putProject(user: Caller, ref: ProjectRef, dto: UpdateNotificationSettingDto): Promise<NotificationSettingView> {
    const { project } = await this.projects.resolve(user, ref);
    return this.put(user, 'Project', project.id, dto);
  }

  async getGroup(user: Caller, ref: GroupRef): Promise<NotificationSettingView> {
    const group = await this.groups.resolve(user, ref);
    return this.view(await this.settings.find(user.id, 'Namespace', group.id), 'global');
  }

  async putGroup(user: Caller, ref: GroupRef, dto: UpdateNotificationSettingDto): Promise<NotificationSettingView> {
    const group = await this.groups.resolve(user, ref);
    return this.put(user, 'Namespace', group.id, dto);
  }

  private async put(user: Caller, source: NotificationSource, id: number, dto: UpdateNotificationSettingDto): Promise<NotificationSettingView> {
    const next = this.merge(await this.settings.find(user.id, source, id), 'global', dto);
    return this.view(await this.tx.run((tx) => this.settings.upsert(tx, user.id, source, id, next)), 'global');
  }

  /** The stored setting with the request's changes; an unknown level is GitLab's enum error. */
  private merge(current: NotificationSetting | null, dflt: NotificationLevel, dto: UpdateNotificationSettingDto): { level: number; events: CustomEvents } {
    let level = current ? current.level : NOTIFICATION_LEVELS[dflt];
    if (dto.level !== undefined) {
      if (!Object.prototype.hasOwnProperty.call(NOTIFICATION_LEVELS, dto.level)) throw new Rejected(`'${dto.level}' is not a valid level`);
      level = NOTIFICATION_LEVELS[dto.level as NotificationLevel];
    }
    const events: CustomEvents = { ...(current?.events ?? {}) };
    for (const e of CUSTOM_EVENTS) if (dto[e] !== undefined) events[e] = dto[e];
    return { level, events };
  }

  private view(row: NotificationSetting | null, dflt: NotificationLevel): NotificationSettingView {
    return row ? { level: levelName(row.level), events: row.events ?? {} } : { level: dflt, events: {} };
  }

  private globalView(user: Caller, row: NotificationSetting | null): GlobalNotificationSettingView {
    return { ...this.view(row, 'participating'), notificationEmail: row?.notificationEmail ?? user.email };
  }
}
