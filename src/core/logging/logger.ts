import { LoggerService } from '@nestjs/common';
import { pino, type DestinationStream, type Logger } from 'pino';
import type { LogLevel } from '../config/app-config.js';
import { logContextMixin } from './log-context.js';

/** Paths never written to logs: key headers, cookies, upstream tokens, passwords. */
export const REDACT_PATHS = [
  'req.headers["x-secret-key"]',
  'req.headers["x-access-key"]',
  'req.headers.cookie',
  'req.headers.authorization',
  'res.headers["set-cookie"]',
  '*.accessToken',
  '*.password',
  '*.secretKey',
  '*.token',
  'accessToken',
  'password',
  'secretKey',
];

/**
 * The process's logger: JSON lines on stdout (or `destination`, which tests use to read them). Every line written
 * inside a request or a worker job carries its ids (reqId; jobId, deliveryIds) through the log context.
 */
export function createLogger(level: LogLevel, name: string, destination?: DestinationStream): Logger {
  const options = {
    name,
    level,
    base: { service: name },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    mixin: logContextMixin,
  };
  return destination ? pino(options, destination) : pino(options);
}

/** Log lines to stderr: for a command whose stdout is its result (the demo seed's JSON). */
export const stderrDestination = (): DestinationStream => pino.destination(2);

/**
 * Nest's own start-up narration (one line per module, controller and route: 74 lines on every start and watch
 * restart) says nothing an operator acts on; it is kept at debug. Warnings and errors from these contexts stay.
 */
export const FRAMEWORK_BOOT_CONTEXTS = new Set([
  'NestFactory',
  'InstanceLoader',
  'RoutesResolver',
  'RouterExplorer',
  'NestApplication',
  'NestApplicationContext',
]);

/** Nest's logger interface on top of pino, so framework messages are structured JSON too. */
export class PinoNestLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}

  log(message: unknown, context?: string): void {
    if (context !== undefined && FRAMEWORK_BOOT_CONTEXTS.has(context)) this.logger.debug({ context }, String(message));
    else this.logger.info({ context }, String(message));
  }
  error(message: unknown, trace?: string, context?: string): void {
    this.logger.error({ context, trace }, String(message));
  }
  warn(message: unknown, context?: string): void {
    this.logger.warn({ context }, String(message));
  }
  debug(message: unknown, context?: string): void {
    this.logger.debug({ context }, String(message));
  }
  verbose(message: unknown, context?: string): void {
    this.logger.trace({ context }, String(message));
  }
}
