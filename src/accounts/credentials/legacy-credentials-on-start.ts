import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import type { Logger } from 'pino';
import { APP_LOGGER } from '../../core/logging/app-logger.js';
import { CredentialRotation } from './credential-rotation.js';

/**
 * At start (API and worker), before serving: every upstream token still sealed in the retired v1 format is
 * re-sealed under the newest key (audit 2, finding 7), since nothing opens v1 any more. Tokens no key opens are
 * logged by wabaId (those accounts answer 424 "reconnect" until a token is given again).
 */
@Injectable()
export class LegacyCredentialsOnStart implements OnApplicationBootstrap {
  constructor(
    private readonly rotation: CredentialRotation,
    @Inject(APP_LOGGER) private readonly logger: Logger,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    let result;
    try {
      result = await this.rotation.resealLegacy();
    } catch (err) {
      // PostgreSQL not reachable yet: the process starts anyway (as it always has); the next start or keys:rotate re-seals.
      this.logger.error(
        { err },
        'could not re-seal upstream tokens of the v1 format at start; they answer 424 until re-sealed (restart, or npm run keys:rotate)',
      );
      return;
    }
    const { rotated, skipped, failed } = result;
    if (rotated > 0 || skipped > 0)
      this.logger.info({ rotated, skipped }, 'upstream tokens of the v1 format re-sealed under the newest key');
    if (failed.length > 0)
      this.logger.error(
        { wabaIds: failed.slice(0, 100), count: failed.length },
        'no key of ENCRYPTION_KEYS opens these v1 upstream tokens: reconnect the accounts',
      );
  }
}
