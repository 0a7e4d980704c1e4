import { Inject, Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { CredentialChecks } from './accounts/credentials/credential-checks.js';
import { AppConfig } from './core/config/app-config.js';
import { APP_LOGGER, type AppLogger } from './core/logging/app-logger.js';

/** Like the purges' first pass, but never later than one interval (a short interval is checked soon after start). */
const FIRST_PASS_AFTER_MS = 60_000;

/**
 * The worker's scheduled credential check (every CREDENTIAL_CHECK_INTERVAL_SECONDS): every connected business
 * account whose token was not checked within the interval is checked with the upstream platform (see
 * CredentialChecks). A token Meta rejects is marked `credentialsValid: false`, and the API processes refuse its
 * sends with 424 from their next send (the change NOTIFYs their send-context caches). Several workers may
 * check at once: the same verdict is written twice, harmlessly.
 */
@Injectable()
export class WorkerCredentialChecks implements OnModuleInit, OnModuleDestroy {
  private timer?: NodeJS.Timeout;
  private running?: Promise<unknown>;
  private stopped = false;

  constructor(
    private readonly checks: CredentialChecks,
    private readonly config: AppConfig,
    @Inject(APP_LOGGER) private readonly logger: AppLogger,
  ) {}

  onModuleInit(): void {
    const intervalMs = this.config.credentialCheckIntervalSeconds * 1000;
    this.schedule(Math.min(FIRST_PASS_AFTER_MS, intervalMs), intervalMs);
  }

  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  /** One pass over the accounts due at `now`. */
  async pass(now = new Date()): Promise<void> {
    const dueBefore = new Date(now.getTime() - this.config.credentialCheckIntervalSeconds * 1000);
    const result = await this.checks.checkDue(dueBefore, () => this.stopped);
    if (result.checked + result.skipped > 0) this.logger.info(result, 'checked stored upstream tokens');
  }

  private schedule(delayMs: number, intervalMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.pass()
        .catch((err: unknown) => this.logger.warn({ err }, 'credential check pass failed; trying again at the next pass'))
        .finally(() => this.schedule(intervalMs, intervalMs));
    }, delayMs);
    this.timer.unref();
  }
}
