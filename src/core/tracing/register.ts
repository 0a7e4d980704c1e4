/**
 * Loaded before the application (`node --import ./dist/src/core/tracing/register.js dist/src/main.js`, as the npm
 * start scripts, dev.sh and the Docker image do): when the standard OTEL_* variables turn tracing on
 * (tracing-settings.ts; the .env file counts, as it does for the application), registers the ESM loader hook that
 * lets the instrumentations patch what the application imports, then starts the SDK. Otherwise it loads nothing
 * else: tracing off costs one look at the environment.
 */
import { register } from 'node:module';
import { loadEnvFile } from '../config/env-file.js';
import { serviceNameOf, tracingSettings, type TracingSettings } from './tracing-settings.js';

/**
 * Only these modules go through import-in-the-middle (what start-tracing.ts instruments): wrapping every module the
 * application imports costs start-up time for nothing.
 */
const INSTRUMENTED = ['http', 'https', 'node:http', 'node:https', 'pg', 'pg-pool', 'ioredis'];

function settingsOrExit(): TracingSettings | undefined {
  try {
    return tracingSettings(process.env, serviceNameOf(process.argv[1]));
  } catch (err) {
    // As a malformed variable of the application's own does (core/config/load-config.ts).
    process.stderr.write(`Invalid configuration:\n  - ${(err as Error).message}\n`);
    process.exit(1);
  }
}

loadEnvFile();
const settings = settingsOrExit();
if (settings) {
  // Where Node runs loader hooks on its own thread (module.registerHooks: 22.22.3+, 24.11.1+), in-thread: the API's
  // start-up took ~0.3 s longer with tracing on there, against ~0.85 s with the loader thread of module.register,
  // which Node 20 and older 22s get.
  const inThread = await import('import-in-the-middle/register-hooks.mjs');
  if (inThread.supportsSyncHooks()) inThread.register({ include: INSTRUMENTED });
  else register('@opentelemetry/instrumentation/hook.mjs', import.meta.url, { data: { include: INSTRUMENTED } });
  const { startTracing } = await import('./start-tracing.js');
  startTracing(settings);
}
