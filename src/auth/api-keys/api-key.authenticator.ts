import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import type { Logger } from 'pino';
import { AppConfig } from '../../core/config/app-config.js';
import { digestsEqual, sha256Hex } from '../../core/crypto/tokens.js';
import { Unauthenticated } from '../../core/errors/domain-errors.js';
import { APP_LOGGER } from '../../core/logging/app-logger.js';
import type { ApiKeyScope } from '../request-scope.js';
import { ApiKeysRepository } from './api-keys.repository.js';
import { credentialVersionOf } from '../../accounts/credentials/credential-version.js';

export const API_KEY_HEADERS_MISSING = 'API key headers missing';
export const INVALID_API_KEY = 'Invalid API key';

interface KeyRecord {
  scope: ApiKeyScope;
  secretHash: string;
  usable: boolean;
}

interface CacheEntry {
  record: KeyRecord | null;
  fetchedAt: number;
}

/** lastUsedAt is written in batches this often instead of once per request. */
const LAST_USED_FLUSH_MS = 30_000;

/**
 * Authenticates an API key pair. Lookups are cached per process for API_KEY_CACHE_TTL_MS (default 1 s):
 * at most one database read per key per second whatever the request rate, and a revocation or a
 * disconnected business account is seen by every API process within that time.
 */
@Injectable()
export class ApiKeyAuthenticator implements OnModuleDestroy {
  private readonly cache = new Map<string, CacheEntry>();
  private readonly inFlight = new Map<string, Promise<KeyRecord | null>>();
  private readonly lastUsed = new Map<string, Date>();
  private readonly flushTimer: NodeJS.Timeout;

  constructor(
    private readonly keys: ApiKeysRepository,
    private readonly config: AppConfig,
    @Inject(APP_LOGGER) private readonly logger: Logger,
  ) {
    this.flushTimer = setInterval(() => void this.flushLastUsed(), LAST_USED_FLUSH_MS);
    this.flushTimer.unref();
  }

  async authenticate(accessKey: unknown, secretKey: unknown): Promise<ApiKeyScope> {
    if (typeof accessKey !== 'string' || typeof secretKey !== 'string' || !accessKey || !secretKey) {
      throw new Unauthenticated(API_KEY_HEADERS_MISSING);
    }
    if (!accessKey.startsWith('ak_') || !secretKey.startsWith('sk_') || accessKey.length > 100 || secretKey.length > 100) {
      throw new Unauthenticated(INVALID_API_KEY);
    }
    const record = await this.lookup(accessKey);
    // Hash and compare even when the key is unknown, so timing does not tell which half was wrong.
    const matches = digestsEqual(sha256Hex(secretKey), record?.secretHash ?? sha256Hex('absent'));
    if (!record || !matches || !record.usable) throw new Unauthenticated(INVALID_API_KEY);
    this.lastUsed.set(record.scope.apiKeyId, new Date());
    return record.scope;
  }

  /** Forget a key at once in this process (revocation by this process); other processes follow within the TTL. */
  invalidate(accessKey: string): void {
    this.cache.delete(accessKey);
  }

  private async lookup(accessKey: string): Promise<KeyRecord | null> {
    const cached = this.cache.get(accessKey);
    if (cached && Date.now() - cached.fetchedAt < this.config.apiKeyCacheTtlMs) return cached.record;
    let pending = this.inFlight.get(accessKey);
    if (!pending) {
      pending = this.load(accessKey).finally(() => this.inFlight.delete(accessKey));
      this.inFlight.set(accessKey, pending);
    }
    return pending;
  }

  private async load(accessKey: string): Promise<KeyRecord | null> {
    const key = await this.keys.findForAuthentication(accessKey);
    const record: KeyRecord | null = key
      ? {
          secretHash: key.secretHash,
          usable: key.revokedAt === null && key.businessAccount.disconnectedAt === null,
          scope: {
            apiKeyId: key.id,
            organizationId: key.organizationId,
            businessAccountId: key.businessAccount.id,
            wabaId: key.businessAccount.wabaId,
            credentialVersion: credentialVersionOf(key.businessAccount.accessTokenEncrypted),
          },
        }
      : null;
    if (this.cache.size > 10_000) this.cache.clear();
    this.cache.set(accessKey, { record, fetchedAt: Date.now() });
    return record;
  }

  private async flushLastUsed(): Promise<void> {
    const batch = [...this.lastUsed.entries()];
    this.lastUsed.clear();
    for (const [id, at] of batch) {
      try {
        await this.keys.touchLastUsed(id, at);
      } catch (error) {
        this.logger.warn({ err: error, apiKeyId: id }, 'could not record lastUsedAt');
      }
    }
  }

  async onModuleDestroy(): Promise<void> {
    clearInterval(this.flushTimer);
    await this.flushLastUsed();
  }
}
