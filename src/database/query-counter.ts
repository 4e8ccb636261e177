import { AbstractLogger, LogLevel, LogMessage, QueryRunner } from 'typeorm';

/**
 * Counts every SQL statement the data source sends. Tests use it to check that lists cost a
 * constant number of queries whatever the page size (architecture rule 7).
 */
export class QueryCounter extends AbstractLogger {
  count = 0;
  readonly statements: string[] = [];
  /** The parameters of each recorded statement (same index), for EXPLAIN in the benchmarks. */
  readonly parameters: (unknown[] | undefined)[] = [];
  recording = false;

  override logQuery(query: string, parameters?: unknown[]): void {
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
