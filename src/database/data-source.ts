import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/config';
import { EmbeddedPostgres } from './embedded-postgres';
import { MIGRATIONS } from './migrations';
import { embeddedNotices } from './notifications';
import { preparingClient } from './prepared-statements';
import { QueryCounter } from './query-counter';

/** Settings shared by the app's data source and the TypeORM CLI's (ormconfig.ts). */
export const BASE_OPTIONS = {
  type: 'postgres',
  migrations: MIGRATIONS,
  migrationsTableName: 'schema_migrations',
  synchronize: false,
} as const;

export interface Database {
  dataSource: DataSource;
  counter: QueryCounter;
  embedded?: EmbeddedPostgres;
  close(): Promise<void>;
}

/** Opens the database the config names (PostgreSQL, or embedded PGlite) and runs pending migrations. */
export async function openDatabase(config: AppConfig, opts: { migrate?: boolean } = {}): Promise<Database> {
  let embedded: EmbeddedPostgres | undefined;
  let connection: Record<string, unknown>;
  if (config.databaseUrl) {
    const extra: Record<string, unknown> = { max: config.dbPoolSize };
    if (config.dbPreparedStatements) extra.Client = preparingClient(Client);
    // a statement past DB_STATEMENT_TIMEOUT is cancelled by the server (57014) and the request answers 503
    if (config.dbStatementTimeoutMs > 0) extra.statement_timeout = config.dbStatementTimeoutMs;
    connection = { url: config.databaseUrl, extra };
  } else {
    embedded = await EmbeddedPostgres.start(config.embeddedDbDir, config.embeddedTuning);
    // the pool's one connection also carries the notifications of the database's one session (see notifications.ts)
    const notifying = embeddedNotices();
    const client = config.dbPreparedStatements ? preparingClient(notifying.Client) : notifying.Client;
    connection = { ...embedded.connectionOptions, extra: { max: 1, ...notifying, Client: client } };
  }
  const counter = new QueryCounter();
  const dataSource = new DataSource({
    ...BASE_OPTIONS,
    ...connection,
    entities: [],
    logging: ['query'],
    logger: counter,
  } as never);
  try {
    await dataSource.initialize();
    if (opts.migrate !== false) await dataSource.runMigrations({ transaction: 'each' });
  } catch (e) {
    if (dataSource.isInitialized) await dataSource.destroy();
    if (embedded) await embedded.stop();
    throw e;
  }
  return {
    dataSource,
    counter,
    embedded,
    async close() {
      if (dataSource.isInitialized) await dataSource.destroy();
      if (embedded) await embedded.stop();
    },
  };
}

/**
 * Gives the opened data source the entities the area modules declared (TypeOrmModule.forFeature with
 * autoLoadEntities), so no central list of every entity exists. Migrations never need entities.
 */
export async function attachEntities(db: Database, entities: unknown): Promise<DataSource> {
  db.dataSource.setOptions({ entities: (entities ?? []) as never });
  await (db.dataSource as unknown as { buildMetadatas(): Promise<void> }).buildMetadatas();
  return db.dataSource;
}
