import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { AppConfig } from '../core/config/app-config.js';
import { APP_LOGGER, type AppLogger } from '../core/logging/app-logger.js';
import { Metrics } from '../core/metrics/metrics.js';
import { EXPIRY_WARNING_DAYS, versionStanding } from './graph-api-versions.js';

/**
 * At start (API and worker): the Graph API version UPSTREAM_BASE_URL names, against Meta's published expiry
 * (graph-api-versions.ts). Within EXPIRY_WARNING_DAYS of it, or past it, a warning is logged; the gauges
 * `bmapi_upstream_api_version_expiring` (1 then, else 0) and `bmapi_upstream_api_version_expiry_timestamp_seconds`
 * (when the date is known) carry it to /metrics, labelled with the version, for an alert.
 */
@Injectable()
export class GraphApiVersionCheck implements OnModuleInit {
  constructor(
    private readonly config: AppConfig,
    private readonly metrics: Metrics,
    @Inject(APP_LOGGER) private readonly logger: AppLogger,
  ) {}

  onModuleInit(): void {
    const standing = versionStanding(this.config.upstreamBaseUrl);
    const version = standing.version ?? 'unknown';
    this.metrics.upstreamVersionExpiring.set({ version }, standing.expiring ? 1 : 0);
    if (standing.expiresAt)
      this.metrics.upstreamVersionExpiry.set({ version }, Math.floor(standing.expiresAt.getTime() / 1000));
    if (!standing.expiring) return;
    const expires = standing.expiresAt!.toISOString().slice(0, 10);
    this.logger.warn(
      { version, expiresAt: expires, daysLeft: standing.daysLeft },
      standing.daysLeft! < 0
        ? `Graph API ${version} (UPSTREAM_BASE_URL) expired on ${expires}: Meta refuses its calls; move to a current version`
        : `Graph API ${version} (UPSTREAM_BASE_URL) expires on ${expires}, in ${standing.daysLeft} days (warning from ${EXPIRY_WARNING_DAYS}): move to a newer version`,
    );
  }
}
