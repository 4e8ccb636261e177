// The TypeORM CLI's data source lives in src/ormconfig.ts so that the build emits it as
// dist/ormconfig.js:  npm run build && DATABASE_URL=postgres://… npx typeorm migration:show -d dist/ormconfig.js
export { default } from './src/ormconfig';
