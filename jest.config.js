// ESM + ts-jest (NestJS 12 is ESM-only; see ../shared/reference/toolchain.md). Run through
// `npm run test:jest`, which sets --experimental-vm-modules. Type checking is `npm run typecheck`'s job,
// so ts-jest only transpiles (isolatedModules) to keep the suite fast.
/** @type {import('jest').Config} */
export default {
  rootDir: '.',
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: {
    '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: 'tsconfig.json' }],
  },
  // test/medium: each repository against the real PostgreSQL, without the API (Immich's middle tier).
  // test/stack: the stack module (scripts/stack/) with PostgreSQL and Redis of its own.
  // test/scripts: the other scripts (scripts/sql-snapshots.ts) on trees of their own, without the database.
  // test/service: services over in-memory repositories (test/utils/in-memory), no database.
  // test/contract: what the simulator (standing in for Meta) and the API must agree on, without either running.
  testMatch: [
    '<rootDir>/src/**/*.spec.ts',
    '<rootDir>/simulator/**/*.spec.ts',
    '<rootDir>/test/medium/**/*.spec.ts',
    '<rootDir>/test/service/**/*.spec.ts',
    '<rootDir>/test/contract/**/*.spec.ts',
    '<rootDir>/test/stack/**/*.spec.ts',
    '<rootDir>/test/scripts/**/*.spec.ts',
    '<rootDir>/test/e2e/**/*.e2e-spec.ts',
  ],
  // A ceiling, not a budget: a test that passes in 5 s on a quiet host may take 30 s on a slow, busy one, and only
  // a hung test ever waits this long (see "Tests on a slow host" in README.md).
  testTimeout: 180000,
  maxWorkers: 2,
};
