import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import { CredentialChecks } from '../accounts/credentials/credential-checks.js';
import { AppConfig } from '../core/config/app-config.js';
import { APP_LOGGER, type AppLogger } from '../core/logging/app-logger.js';

/** Like the purges' first pass, but never later than one interval (a short interval is checked soon after start). */
export const CREDENTIAL_CHECK_FIRST_AFTER_MS = 60_000;

/**
 * The workers' scheduled credential check (the `credential-check` scheduled task, once every
 * CREDENTIAL_CHECK_INTERVAL_SECONDS across all workers, see worker/worker-schedules.ts): every connected business
 * account whose token was not checked within the interval is checked with the upstream platform (see
 * CredentialChecks). A token Meta rejects is marked `credentialsValid: false`, and the API processes refuse its
 * sends with 424 from their next send (the change NOTIFYs their send-context caches). Should two passes overlap,
 * the same verdict is written twice, harmlessly.
 */
@Injectable()
export class WorkerCredentialChecks implements OnModuleDestroy {
  private stopped = false;

  constructor(
    private readonly checks: CredentialChecks,
    private readonly config: AppConfig,
    @Inject(APP_LOGGER) private readonly logger: AppLogger,
  ) {}

  /** Shutting down: a pass under way stops after the account it is checking. */
  onModuleDestroy(): void {
    this.stopped = true;
  }

  /** One pass over the accounts due at `now`; returns how many were checked. */
  async pass(now = new Date()): Promise<number> {
    const dueBefore = new Date(now.getTime() - this.config.credentialCheckIntervalSeconds * 1000);
    const result = await this.checks.checkDue(dueBefore, () => this.stopped);
    if (result.checked + result.skipped > 0) this.logger.info(result, 'checked stored upstream tokens');
    return result.checked;
  }
}
