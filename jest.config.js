/** API specs drive the real app over HTTP against a real database (see test/helpers). */
module.exports = {
  testEnvironment: 'node',
  rootDir: '.',
  roots: ['<rootDir>/src', '<rootDir>/test'],
  testRegex: '.*\\.(spec|e2e-spec)\\.ts$',
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.jest.json' }] },
  moduleFileExtensions: ['ts', 'js', 'json'],
  // on PostgreSQL: one migrated template database per run, cloned for each test app (test/helpers/test-db.ts)
  globalSetup: '<rootDir>/test/helpers/db-global-setup.ts',
  globalTeardown: '<rootDir>/test/helpers/db-global-teardown.ts',
  testTimeout: 60000,
  maxWorkers: 1,
  // background clients (the queue's workers, LISTEN connections) of an app a spec forgot to close must not
  // keep the run alive after its results are in
  forceExit: true,
};
