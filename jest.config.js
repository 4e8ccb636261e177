/**
 * Two tiers (README, Tests): `unit` — the pure specs (src/**\/*.spec.ts and test/**\/*.spec.ts: no
 * database, no app), seconds; `api` — test/**\/*.e2e-spec.ts, which drive the real app over HTTP
 * against a real database (see test/helpers). `npm test` runs both, `npm run test:unit` and
 * `npm run test:api` one each (--selectProjects).
 */
const common = {
  rootDir: __dirname,
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.jest.json' }] },
  moduleFileExtensions: ['ts', 'js', 'json'],
};

module.exports = {
  testTimeout: 60000,
  // One test file at a time, in a worker process that jest replaces once its heap passes the limit after a
  // file: each file loads the app anew, and a single process running all ~100 files in band grew past
  // node's 4 GB heap and died (or spent most of its time collecting garbage).
  maxWorkers: 1,
  workerIdleMemoryLimit: '1536MB',
  projects: [
    { ...common, displayName: 'unit', roots: ['<rootDir>/src', '<rootDir>/test'], testRegex: '\\.spec\\.ts$' },
    {
      ...common,
      displayName: 'api',
      roots: ['<rootDir>/test'],
      testRegex: '\\.e2e-spec\\.ts$',
      // on PostgreSQL: one migrated template database per run, cloned for each test app (test/helpers/test-db.ts);
      // only when an API spec is selected
      globalSetup: '<rootDir>/test/helpers/db-global-setup.ts',
      globalTeardown: '<rootDir>/test/helpers/db-global-teardown.ts',
    },
  ],
};
