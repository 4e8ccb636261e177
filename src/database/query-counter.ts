import { AsyncLocalStorage } from 'node:async_hooks';
import { AbstractLogger, LogLevel, LogMessage, QueryRunner } from 'typeorm';

/** Set while a queue job runs (QueueService): its statements are background work, not a request's. */
export const backgroundWork = new AsyncLocalStorage<true>();

/**
 * Counts every SQL statement the data source sends for requests (not those of queue jobs, which run
 * whenever a worker picks them up). Tests use it to check that lists cost a constant number of
 * queries whatever the page size (architecture rule 7).
 */
export class QueryCounter extends AbstractLogger {
  count = 0;
  readonly statements: string[] = [];
  /** The parameters of each recorded statement (same index), for EXPLAIN in the benchmarks. */
  readonly parameters: (unknown[] | undefined)[] = [];
  recording = false;

  override logQuery(query: string, parameters?: unknown[]): void {
    if (backgroundWork.getStore()) return;
    this.count++;
    if (this.recording) {
      this.statements.push(query);
      this.parameters.push(parameters);
    }
  }

  protected writeLog(_level: LogLevel, _message: LogMessage | LogMessage[], _qr?: QueryRunner): void {
    // counting only; errors surface through the exception filter
  }
}
