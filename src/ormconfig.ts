// TypeORM CLI data source: after `npm run build`,
//   DATABASE_URL=postgres://… npx typeorm migration:show -d dist/ormconfig.js
// It shares its settings with the app (src/database/data-source.ts), which also starts embedded
// PGlite when DATABASE_URL is unset. Migrations are frozen SQL and need no entities.
import { DataSource } from 'typeorm';
import { BASE_OPTIONS } from './database/data-source';

export default new DataSource({ ...BASE_OPTIONS, url: process.env.DATABASE_URL });
