// The fault suite (`npm run test:faults`): test/faults/**/*.fault-spec.ts, one file at a time. It starts its own
// PostgreSQL, Redis, API and worker processes (see test/faults/webhooks.fault-spec.ts), so it needs no
// DATABASE_URL / REDIS_URL, only a built dist (it builds when dist is stale) and redis-server installed.
import base from './jest.config.js';

/** @type {import('jest').Config} */
export default {
  ...base,
  testMatch: ['<rootDir>/test/faults/**/*.fault-spec.ts'],
  testTimeout: 90000,
  maxWorkers: 1,
};
