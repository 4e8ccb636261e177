import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { Tx } from '../database/transactions';
import { SubscribableType, Subscription } from './subscription.entity';

/** Every query on `subscriptions`. Writes take the caller's transaction when there is one. */
@Injectable()
export class SubscriptionsRepository {
  constructor(@InjectRepository(Subscription) private readonly subscriptions: Repository<Subscription>) {}

  private manager(tx?: Tx) {
    return tx ?? this.subscriptions.manager;
  }

  /** The user's explicit choices for the given targets: one query. */
  async explicit(userId: number, type: SubscribableType, ids: number[], tx?: Tx): Promise<Map<number, boolean>> {
    const rows: { subscribable_id: number; subscribed: boolean }[] = await this.manager(tx).query(
      `SELECT subscribable_id, subscribed FROM subscriptions
        WHERE user_id = $1 AND subscribable_type = $2 AND subscribable_id = ANY($3)`,
      [userId, type, ids],
    );
    return new Map(rows.map((r) => [r.subscribable_id, r.subscribed]));
  }

  /** Insert or update the user's choice. */
  async upsert(userId: number, type: SubscribableType, id: number, subscribed: boolean, tx?: Tx): Promise<void> {
    await this.manager(tx).query(
      `INSERT INTO subscriptions (user_id, subscribable_type, subscribable_id, subscribed) VALUES ($1, $2, $3, $4)
       ON CONFLICT (subscribable_type, subscribable_id, user_id)
       DO UPDATE SET subscribed = EXCLUDED.subscribed, updated_at = now()`,
      [userId, type, id, subscribed],
    );
  }

  async removeAll(tx: Tx, type: SubscribableType, ids: number[]): Promise<void> {
    await tx
      .getRepository(Subscription)
      .createQueryBuilder()
      .delete()
      .where('subscribable_type = :type AND subscribable_id IN (:...ids)', { type, ids })
      .execute();
  }
}
