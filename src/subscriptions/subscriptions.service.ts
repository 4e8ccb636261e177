import { Injectable } from '@nestjs/common';
import { Tx } from '../database/transactions';
import { SubscribableType } from './subscription.entity';
import { SubscriptionsRepository } from './subscriptions.repository';

/**
 * Explicit subscriptions of users to issues and labels. A row records the user's choice (subscribed
 * or unsubscribed); without a row the target decides the default (participants of an issue are
 * subscribed, nobody is subscribed to a label). Issues and labels expose the routes.
 */
@Injectable()
export class SubscriptionsService {
  constructor(private readonly subscriptions: SubscriptionsRepository) {}

  /** The user's explicit choices for the given targets: one query (none without a user or targets). */
  async explicit(userId: number | undefined, type: SubscribableType, ids: number[], tx?: Tx): Promise<Map<number, boolean>> {
    if (userId === undefined || ids.length === 0) return new Map();
    return this.subscriptions.explicit(userId, type, [...new Set(ids)], tx);
  }

  /** Records the user's choice (insert or update), in the caller's transaction if given. */
  set(userId: number, type: SubscribableType, id: number, subscribed: boolean, tx?: Tx): Promise<void> {
    return this.subscriptions.upsert(userId, type, id, subscribed, tx);
  }

  /** Forgets every choice about the targets (they are being deleted), in the caller's transaction. */
  async removeAll(tx: Tx, type: SubscribableType, ids: number[]): Promise<void> {
    if (ids.length === 0) return;
    await this.subscriptions.removeAll(tx, type, ids);
  }
}
