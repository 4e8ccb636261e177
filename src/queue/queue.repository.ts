import { Injectable } from '@nestjs/common';
import PgBoss from 'pg-boss';
import { DataSource, EntitySubscriberInterface, QueryRunner, TransactionCommitEvent, TransactionRollbackEvent } from 'typeorm';
import { Tx } from '../database/transactions';

type SqlRunner = { query(text: string, values?: unknown[]): Promise<{ rows: unknown[] }> };

/**
 * The queue area's database access: pg-boss's `db` adapters (the app's own `pg` pool, so on the
 * embedded default it shares PGlite's single connection, or one transaction's connection for the
 * outbox) and the one query of its own (job counts by state).
 */
@Injectable()
export class QueueRepository {
  constructor(private readonly ds: DataSource) {}

  private pool(): SqlRunner {
    return (this.ds.driver as unknown as { master: SqlRunner }).master;
  }

  /** pg-boss's `db` on the app's pool (looked up per statement: the pool exists once the data source is up). */
  /** pg-boss's statements through the pool still running (shutdown waits for them: see QueueService). */
  private poolStatements = 0;

  poolDb(): PgBoss.Db {
    return {
      executeSql: async (text, values) => {
        this.poolStatements++;
        try {
          return await this.pool().query(text, values);
        } finally {
          this.poolStatements--;
        }
      },
    };
  }

  /** Whether pg-boss has a statement running on the pool (a fetch, a completion). */
  poolBusy(): boolean {
    return this.poolStatements > 0;
  }

  /** pg-boss's `db` bound to the transaction's own connection. */
  txDb(tx: Tx): PgBoss.Db {
    const conn = (tx.queryRunner as unknown as { databaseConnection?: SqlRunner } | undefined)?.databaseConnection;
    if (!conn) throw new Error('QueueService.send: the transaction has no connection');
    return { executeSql: (text, values) => conn.query(text, values) };
  }

  /** Calls back when a transaction of the app commits or rolls back (jobs sent in it become visible, or never). */
  onTransactionEnd(cb: { commit(qr: QueryRunner): void; rollback(qr: QueryRunner): void }): void {
    this.ds.subscribers.push({
      afterTransactionCommit: (event: TransactionCommitEvent) => cb.commit(event.queryRunner),
      afterTransactionRollback: (event: TransactionRollbackEvent) => cb.rollback(event.queryRunner),
    } as EntitySubscriberInterface);
  }

  /** Cancels a job no worker has started yet (created or retry), in `tx`; false when a worker has it or it ended. */
  async takeOver(tx: Tx, name: string, id: string): Promise<boolean> {
    const { rows } = await this.txDb(tx).executeSql(
      `UPDATE pgboss.job SET state = 'cancelled', completed_on = now() WHERE name = $1 AND id = $2 AND state IN ('created', 'retry') RETURNING id`,
      [name, id],
    );
    return rows.length === 1;
  }

  /** Job counts by state of the named queues. */
  /** Lets the job's current attempt be its last (its failure then fails it for good). */
  async noMoreRetries(name: string, id: string): Promise<void> {
    await this.pool().query(`UPDATE pgboss.job SET retry_limit = retry_count WHERE name = $1 AND id = $2 AND state = 'active'`, [name, id]);
  }

  async countsByState(names: string[]): Promise<{ name: string; state: string; n: number }[]> {
    const { rows } = await this.pool().query(
      `SELECT name, state::text AS state, count(*)::int AS n FROM pgboss.job WHERE name = ANY($1) GROUP BY name, state`,
      [names],
    );
    return rows as { name: string; state: string; n: number }[];
  }
}
