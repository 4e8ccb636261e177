import { DataSource } from 'typeorm';
import { AppConfig } from '../config/config';
import { EmbeddedPostgres } from './embedded-postgres';
import { ENTITIES } from './entities';
import { MIGRATIONS } from './migrations';
import { QueryCounter } from './query-counter';

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
    connection = { url: config.databaseUrl, extra: { max: config.dbPoolSize } };
  } else {
    embedded = await EmbeddedPostgres.start(config.embeddedDbDir);
    connection = { ...embedded.connectionOptions, extra: { max: 1 } };
  }
  const counter = new QueryCounter();
  const dataSource = new DataSource({
    type: 'postgres',
    ...connection,
    entities: ENTITIES,
    migrations: MIGRATIONS,
    migrationsTableName: 'schema_migrations',
    synchronize: false,
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
