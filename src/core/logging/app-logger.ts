import type { Logger } from 'pino';

/** Injection token for the process's pino logger (`@Inject(APP_LOGGER) logger: Logger`). */
export const APP_LOGGER = Symbol('APP_LOGGER');
export type AppLogger = Logger;
