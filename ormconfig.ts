// TypeORM CLI data source (e.g. `npx typeorm -d dist/ormconfig.js migration:show`).
// The app itself opens the database through src/database/data-source.ts, which also
// starts embedded PGlite when DATABASE_URL is unset.
import { DataSource } from 'typeorm';
import { ENTITIES } from './src/database/entities';
import { MIGRATIONS } from './src/database/migrations';

export default new DataSource({
  type: 'postgres',
  url: process.env.DATABASE_URL,
  entities: ENTITIES,
  migrations: MIGRATIONS,
  migrationsTableName: 'schema_migrations',
  synchronize: false,
});
