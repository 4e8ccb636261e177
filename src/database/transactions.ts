import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager, EntitySubscriberInterface, QueryRunner, TransactionCommitEvent, TransactionRollbackEvent } from 'typeorm';

/** A unit of work: repositories take the `tx` they are given, so one transaction spans several areas. */
export type Tx = EntityManager;

/**
 * The one place services open a transaction (they hold no DataSource). On the embedded default the
 * pool has one connection, so transactions queue instead of interleaving.
 */
@Injectable()
export class Transactions {
  /** Work to do when a transaction commits, with the depth it was registered at (savepoints). */
  private readonly pending = new WeakMap<QueryRunner, { depth: number; fn: () => void }[]>();

  constructor(private readonly ds: DataSource) {
    ds.subscribers.push({
      afterTransactionCommit: (e: TransactionCommitEvent) => {
        const qr = e.queryRunner;
        if (qr.isTransactionActive) return; // a savepoint released: the outer transaction may still roll back
        const fns = this.pending.get(qr);
        this.pending.delete(qr);
        for (const p of fns ?? []) p.fn();
      },
      afterTransactionRollback: (e: TransactionRollbackEvent) => {
        const qr = e.queryRunner;
        const fns = this.pending.get(qr);
        if (!fns) return;
        const kept = qr.isTransactionActive ? fns.filter((p) => p.depth <= depthOf(qr)) : [];
        if (kept.length) this.pending.set(qr, kept);
        else this.pending.delete(qr);
      },
    } as EntitySubscriberInterface);
  }

  run<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return this.ds.transaction(work);
  }

  /**
   * Calls `fn` once `tx` has committed (never when it rolls back); at once when `tx` is not inside a
   * transaction. `fn` must not throw (wrap what it does).
   */
  afterCommit(tx: Tx, fn: () => void): void {
    const qr = tx.queryRunner;
    if (!qr || !qr.isTransactionActive) return fn();
    const fns = this.pending.get(qr) ?? [];
    fns.push({ depth: depthOf(qr), fn });
    this.pending.set(qr, fns);
  }
}

/** How many transactions (the outer one and its savepoints) are open on `qr`. */
const depthOf = (qr: QueryRunner): number => (qr as unknown as { transactionDepth: number }).transactionDepth;
