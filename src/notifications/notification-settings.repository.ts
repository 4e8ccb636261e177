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

  /** Global rows of `userIds` (their notification_email). */
  async globals(userIds: number[]): Promise<NotificationSetting[]> {
    if (userIds.length === 0) return [];
    return this.settings.createQueryBuilder('s').where(`s.user_id = ANY(:ids) AND s.source_type = 'global'`, { ids: userIds }).getMany();
  }
}
