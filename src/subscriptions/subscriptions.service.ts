import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { SubscribableType } from './subscription.entity';

/**
 * Explicit subscriptions of users to issues and labels. A row records the user's choice (subscribed
 * or unsubscribed); without a row the target decides the default (participants of an issue are
 * subscribed, nobody is subscribed to a label).
 */
@Injectable()
export class SubscriptionsService {
  constructor(private readonly ds: DataSource) {}

  /** The user's explicit choices for the given targets: one query. */
  async explicit(userId: number | undefined, type: SubscribableType, ids: number[]): Promise<Map<number, boolean>> {
    if (userId === undefined || ids.length === 0) return new Map();
    const rows: { subscribable_id: number; subscribed: boolean }[] = await this.ds.query(
      `SELECT subscribable_id, subscribed FROM subscriptions
        WHERE user_id = $1 AND subscribable_type = $2 AND subscribable_id = ANY($3)`,
      [userId, type, [...new Set(ids)]],
    );
    return new Map(rows.map((r) => [r.subscribable_id, r.subscribed]));
  }

  /** Records the user's choice (insert or update). */
  async set(
    userId: number,
    type: SubscribableType,
    id: number,
    subscribed: boolean,
    m: EntityManager = this.ds.manager,
  ): Promise<void> {
    await m.query(
      `INSERT INTO subscriptions (user_id, subscribable_type, subscribable_id, subscribed) VALUES ($1, $2, $3, $4)
       ON CONFLICT (subscribable_type, subscribable_id, user_id)
       DO UPDATE SET subscribed = EXCLUDED.subscribed, updated_at = now()`,
      [userId, type, id, subscribed],
    );
  }

  /** Forgets every choice about the targets (they are being deleted). */
  async removeAll(m: EntityManager, type: SubscribableType, ids: number[]): Promise<void> {
    if (ids.length === 0) return;
    await m.query(`DELETE FROM subscriptions WHERE subscribable_type = $1 AND subscribable_id = ANY($2)`, [type, ids]);
  }
}
