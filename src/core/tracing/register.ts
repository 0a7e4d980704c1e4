/**
 * Loaded before the application (`node --import ./dist/src/core/tracing/register.js dist/src/main.js`, as the npm
 * start scripts, dev.sh and the Docker image do): when the standard OTEL_* variables turn tracing on
 * (tracing-settings.ts; the .env file counts, as it does for the application), registers the ESM loader hook that
 * lets the instrumentations patch what the application imports, then starts the SDK. Otherwise it loads nothing
 * else: tracing off costs one look at the environment.
 */
import { register } from 'node:module';
import { loadEnvFile } from '../config/env-file.js';
import { serviceNameOf, tracingSettings } from './tracing-settings.js';

loadEnvFile();
const settings = tracingSettings(process.env, serviceNameOf(process.argv[1]));
if (settings) {
  // Only these modules go through import-in-the-middle: wrapping every module the application imports costs
  // start-up time for nothing.
  register('@opentelemetry/instrumentation/hook.mjs', import.meta.url, {
    data: { include: ['http', 'https', 'node:http', 'node:https', 'express', 'pg', 'pg-pool', 'ioredis'] },
  });
  const { startTracing } = await import('./start-tracing.js');
  startTracing(settings);
}
