import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { Tx } from '../database/transactions';
import type { CustomEvents } from './notification-levels';
import { NotificationSetting, NotificationSource } from './notification-setting.entity';

/** Every query on `notification_settings`. */
@Injectable()
export class NotificationSettingsRepository {
  constructor(@InjectRepository(NotificationSetting) private readonly settings: Repository<NotificationSetting>) {}

  find(userId: number, sourceType: NotificationSource, sourceId: number): Promise<NotificationSetting | null> {
    return this.settings.findOne({ where: { userId, sourceType, sourceId } });
  }

  /** Writes the user's setting for the source (created or replaced). */
  async upsert(
    tx: Tx,
    userId: number,
    sourceType: NotificationSource,
    sourceId: number,
    values: { level: number; events: CustomEvents; notificationEmail?: string | null },
  ): Promise<NotificationSetting> {
    const rows: { id: number }[] = await tx.query(
      `INSERT INTO notification_settings (user_id, source_type, source_id, level, events, notification_email)
       VALUES ($1, $2, $3, $4, $5::jsonb, $6)
       ON CONFLICT (user_id, source_type, source_id) DO UPDATE
          SET level = EXCLUDED.level, events = EXCLUDED.events,
              notification_email = CASE WHEN $7 THEN EXCLUDED.notification_email ELSE notification_settings.notification_email END,
              updated_at = now()
       RETURNING id`,
      [userId, sourceType, sourceId, values.level, JSON.stringify(values.events), values.notificationEmail ?? null, values.notificationEmail !== undefined],
    );
    return await tx.getRepository(NotificationSetting).findOneByOrFail({ id: rows[0].id });
  }

  /**
   * Forgets the user's notification email (back to the primary address) when it is one of `removed`
   * or no longer an address of theirs: GitLab 8.17's `update_secondary_emails!`.
   */
  async forgetNotificationEmail(tx: Tx, userId: number, removed: string[]): Promise<void> {
    await tx.query(
      `UPDATE notification_settings s SET notification_email = NULL, updated_at = now()
        WHERE s.user_id = $1 AND s.source_type = 'global' AND s.notification_email IS NOT NULL
          AND (lower(s.notification_email) = ANY(SELECT lower(r) FROM unnest($2::text[]) r)
               OR NOT EXISTS (SELECT 1 FROM users u WHERE u.id = s.user_id AND lower(u.email) = lower(s.notification_email))
                  AND NOT EXISTS (SELECT 1 FROM emails e WHERE e.user_id = s.user_id AND lower(e.email) = lower(s.notification_email)))`,
      [userId, removed],
    );
  }

  /** Whether `email` is the user's primary address or one of their secondary ones. */
  async ownsEmail(userId: number, email: string): Promise<boolean> {
    const rows: unknown[] = await this.settings.query(
      `SELECT 1 FROM users WHERE id = $1 AND lower(email) = lower($2)
       UNION ALL SELECT 1 FROM emails WHERE user_id = $1 AND lower(email) = lower($2) LIMIT 1`,
      [userId, email],
    );
    return rows.length > 0;
  }

  /**
   * Every setting of `userIds` that applies in a project: the project's, its namespace's (a group)
   * and the global one. One query.
   */
  async forProject(userIds: number[], projectId: number, namespaceId: number): Promise<NotificationSetting[]> {
    if (userIds.length === 0) return [];
    return this.settings
      .createQueryBuilder('s')
      .where('s.user_id = ANY(:ids)', { ids: userIds })
      .andWhere(
        `((s.source_type = 'Project' AND s.source_id = :projectId) OR (s.source_type = 'Namespace' AND s.source_id = :namespaceId) OR s.source_type = 'global')`,
        { projectId, namespaceId },
      )
      .getMany();
  }

  /**
   * Global rows of `userIds`, their notification_email kept only while it is still an address of
   * theirs (null, i.e. the primary address, otherwise): mail never goes to an address the user
   * deleted or gave up, even before `forgetNotificationEmail` has run.
   */
  async globals(userIds: number[]): Promise<NotificationSetting[]> {
    if (userIds.length === 0) return [];
    const { entities, raw } = await this.settings
      .createQueryBuilder('s')
      .addSelect(
        `EXISTS (SELECT 1 FROM users u WHERE u.id = s.user_id AND lower(u.email) = lower(s.notification_email))
         OR EXISTS (SELECT 1 FROM emails e WHERE e.user_id = s.user_id AND lower(e.email) = lower(s.notification_email))`,
        'owned',
      )
      .where(`s.user_id = ANY(:ids) AND s.source_type = 'global'`, { ids: userIds })
      .getRawAndEntities<{ s_id: number; owned: boolean | null }>();
    const owned = new Map(raw.map((r) => [Number(r.s_id), r.owned === true]));
    return entities.map((s) => (s.notificationEmail !== null && !owned.get(s.id) ? Object.assign(s, { notificationEmail: null }) : s));
  }
}
